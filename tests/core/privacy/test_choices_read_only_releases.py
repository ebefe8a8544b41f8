"""Every private choice reads only what was released (issue 40.2).

For each choice — the automatic count cap C, the sequence clip G, Δ and s from the noisy count (``--bin-size
auto``), the decays (``--decays auto``) and ctls's width and support chosen by validation — two neighbouring data
sets are given identical noisy releases: the noise realisation injected into the second is the one that makes
every number it releases equal to the first's (a release function's output recorded on D and returned on D',
:class:`Replay`, or a coupled stream of standard normals, :class:`Prescribed`). A choice, its scores and the estimate
that are functions of the released numbers only are then identical; one that reads the data is not, on data built
so that the exact values lead to different choices (a precondition each test checks).

Each mutant the issue found surviving is planted here (monkeypatched) and shown to fail the same check:
the count cap chosen from the exact tails, G from the exact norms, Δ and s from the exact count, the decays from the
exact count, the width scored on the exact validation block. And every mechanism's two unseeded draws differ — the
time scale's count included — which kills an unseeded count drawn from a fixed seed (planted too)."""

from __future__ import annotations

import copy
import dataclasses
import importlib

import numpy as np
import pytest

import dphawkes_core.estimators.binned as binned
import dphawkes_core.estimators.grid_free as grid_free
import dphawkes_core.estimators.grid_free.width_choice as width_choice
import dphawkes_core.estimators.ssp as ssp
import dphawkes_core.privacy.count_cap as count_cap
import dphawkes_core.privacy.sequence as sequence
import dphawkes_core.privacy.time_scale as selection
import dphawkes_core.release.session as session_module
from dphawkes_core.data.io import Events, EventSequence, from_arrays
from dphawkes_core.estimators import FitConfig, get_family, prepare_stats, privacy_report
from dphawkes_core.estimators.exp import Exp
from dphawkes_core.estimators.pipeline import run_private
from dphawkes_core.privacy.noise import NoiseSource, noise_source
from dphawkes_core.privacy.time_scale import DECAYS, TIME_SCALE, time_scale_from_count
from dphawkes_core.release.ledger_file import LedgerBook
from dphawkes_core.release.session import PrivacySession
from dphawkes_core.statistics.binning import bin_sparse, tail_counts


class Replay:
    """A release function that, on the first data set, records what it returned and, on the second, returns the
    same numbers: the noise realisation injected into the second release is the one that makes it equal to the
    first. ``calls`` counts the replayed draws (each must be consumed)."""

    def __init__(self, real):
        self.real, self.recorded, self.replaying, self.calls = real, [], False, 0

    def __call__(self, *args, **kwargs):
        if not self.replaying:
            out = self.real(*args, **kwargs)
            self.recorded.append(copy.deepcopy(out))
            return out
        self.calls += 1
        return copy.deepcopy(self.recorded[self.calls - 1])

    def second(self) -> None:
        """From now on, replay (from the first recorded release; once)."""
        if not self.replaying:
            self.replaying, self.calls = True, 0

    @property
    def consumed(self) -> bool:
        return self.replaying and self.calls == len(self.recorded) > 0


class Prescribed(NoiseSource):
    """A noise source returning the standard normals it is given, in order: a coupled realisation."""

    seeded = True
    sampler = "prescribed (tests)"

    def __init__(self, stream):
        self.stream, self.at = np.asarray(stream, dtype=float).ravel(), 0

    def standard_normal(self, shape):
        n = int(np.prod(shape))
        out = self.stream[self.at:self.at + n]
        assert out.size == n, "the release drew more normals than were prescribed"
        self.at += n
        return out.reshape(shape)


#: Where each family's one release is drawn (the function returning the noisy numbers), for :class:`Replay`.
RELEASE_POINTS = {"ssp": (ssp, "released_stats"), "ctls": (grid_free, "released_pieces"), "exp": (Exp, "_noisy")}


def replay_release(monkeypatch, owner, name) -> Replay:
    """Put a :class:`Replay` in place of ``owner.name`` (a function, or a method when ``owner`` is a class)."""
    real = getattr(owner, name)
    replay = Replay(real)
    monkeypatch.setattr(owner, name, (lambda self, *a, **k: replay(self, *a, **k)) if isinstance(owner, type)
                        else replay)
    return replay


def estimate(stats, config):
    """The family's fit of ``stats`` with its release drawn from a seeded source (replayed on the second set)."""
    U, _, info = config.family.run(stats, config, privacy_report(stats, config), noise_source(3))
    return U, info


def same_estimate(first, second) -> bool:
    scale = max(float(np.abs(first).max()), 1e-300)
    return bool(np.allclose(first, second, rtol=0, atol=1e-9 * scale))


# --- the automatic count cap C ------------------------------------------------------------------------------------

def cap_events(method: str = "ssp") -> tuple[Events, Events]:
    """D: m w-bins holding 2 events and 900 holding 1 (one dimension, w = 1); D' the same less one event of a bin
    of 2, with m the first count of bins over the cap above the rule's target for ``method`` at :func:`cap_config`
    (its κ·z·scale: the guard, 10 % of about 900 events, is larger). Their exact tails T[2] are m and m − 1, which
    the rule reads on either side of its threshold."""
    config = cap_config(method)
    target = count_cap.clip_target(config.epsilon, config.dp_delta, config.count_cap_share, False,
                                   config.family.cap_rule(config).scale)
    singles, doubles = 900, int(np.floor(target)) + 1
    times = ([k + 0.5 for k in range(singles)] + [k + 0.25 for k in range(singles, singles + doubles)]
             + [k + 0.75 for k in range(singles, singles + doubles)])
    end = singles + doubles + 20.0
    return (from_arrays([np.sort(times)], end_time=end), from_arrays([np.sort(times[:-1])], end_time=end))


def cap_config(method: str) -> FitConfig:
    return FitConfig(method=method, bin_size=1.0, lags=2, epsilon=50.0, calibration="formal", count_cap="auto",
                     seed=1)


def chosen_caps_and_estimates(method: str, monkeypatch) -> list:
    """For D and D': the C chosen from tails released equal (a coupled noise stream) and the estimate from the one
    release replayed."""
    config = cap_config(method)
    events = cap_events(method)
    sigma = count_cap.cap_noise_sigma(config.epsilon, config.dp_delta, config.count_cap_share)
    exact = [tail_counts(bin_sparse(e, 1.0), config.count_cap_max).astype(float) for e in events]
    z = np.random.default_rng(0).standard_normal(exact[0].size)
    streams = iter([z, z + (exact[0] - exact[1]) / sigma])  # both release exact[0] + σz
    monkeypatch.setattr(binned, "cap_noise", lambda config: Prescribed(next(streams)))
    replay = replay_release(monkeypatch, *RELEASE_POINTS[method])
    out = []
    for events_ in events:
        stats, info = prepare_stats(events_, config)
        out.append((info.count_cap, estimate(stats, config)[0]))
        replay.second()
    assert replay.consumed
    return out


def check_cap(method, monkeypatch) -> None:
    (cap_d, U_d), (cap_n, U_n) = chosen_caps_and_estimates(method, monkeypatch)
    assert cap_d == cap_n, "the two data sets' caps differ"
    assert same_estimate(U_d, U_n), "the two data sets' estimates differ"


@pytest.mark.parametrize("method", ["ssp", "ctls", "exp"])
def test_the_automatic_count_cap_reads_only_its_released_tails(method, monkeypatch):
    config = cap_config(method)
    sigma = count_cap.cap_noise_sigma(config.epsilon, config.dp_delta, config.count_cap_share)
    exact = [tail_counts(bin_sparse(e, 1.0), config.count_cap_max).astype(float) for e in cap_events(method)]
    rule = config.family.cap_rule(config)
    target = count_cap.clip_target(config.epsilon, config.dp_delta, config.count_cap_share, False, rule.scale)
    chosen = [count_cap.choose_cap(tails, sigma, target, max_fraction=rule.max_fraction) for tails in exact]
    assert chosen[0] != chosen[1]  # the data tell
    check_cap(method, monkeypatch)


def test_a_count_cap_chosen_from_the_exact_tails_is_caught(monkeypatch):
    def exact_tails(tails, epsilon, delta, rng, share=count_cap.AUTO_CAP_SHARE, rule=None):
        rule = rule or count_cap.CapRule()
        sigma = count_cap.cap_noise_sigma(epsilon, delta, share)
        target = count_cap.clip_target(epsilon, delta, share, False, rule.scale)
        count_cap.noisy_tails(tails, sigma, rng)  # drawn, then not read
        cap = count_cap.choose_cap(tails.astype(float), sigma, target, max_fraction=rule.max_fraction)
        return count_cap.AutoCap(cap, float(share), sigma, tails.size, target, rule.max_fraction)

    monkeypatch.setattr(count_cap, "cap_from_tails", exact_tails)
    with pytest.raises(AssertionError, match="caps differ"):
        check_cap("ssp", monkeypatch)


# --- the sequence clip G ----------------------------------------------------------------------------------------------

CLIP_MODULES = {"ssp": "dphawkes_core.estimators.sequence_unit", "ctls": "dphawkes_core.estimators.grid_free.sequence",
                "exp": "dphawkes_core.estimators.exp.sequence"}


def clip_events() -> tuple[Events, Events]:
    """38 sequences of 2 events in dimension 0 and two bursts of 30; D' replaces one burst by an empty sequence.
    With S = 40 sequences the rule may clip about ρS = 2 of them: two bursts above a G are too many, one is not, so
    the exact histograms choose different G."""
    rng = np.random.default_rng(4)
    quiet = [EventSequence((np.sort(rng.uniform(0, 20, 2)), np.empty(0)), 20.0) for _ in range(38)]
    burst = EventSequence((np.linspace(1.0, 1.3, 30), np.empty(0)), 20.0)
    empty = EventSequence((np.empty(0), np.empty(0)), 20.0)
    return tuple(Events(tuple(quiet) + (burst, last), ("0", "1"), window_stated=True, dimensions_declared=True,
                        sequences_declared=True) for last in (burst, empty))


def clip_config(method: str) -> FitConfig:
    return FitConfig(method=method, bin_size=1.0, lags=2, epsilon=100.0, calibration="formal", count_cap=None,
                     privacy_unit="sequence", max_events=40, sequence_clip="auto", sequence_clip_share=0.5, seed=1)


def coupled_clip(monkeypatch, module) -> list:
    """Wrap ``module.dp_sequence_clip`` so that both data sets release one noisy histogram (the first's: h + σz)
    and record every exact histogram it saw."""
    held, seen = {}, []

    def coupled(norms, top, epsilon, delta, rng, share=sequence.AUTO_CLIP_SHARE, levels=sequence.AUTO_CLIP_LEVELS):
        grid = sequence.clip_grid(top, levels)
        sigma = sequence.clip_noise_sigma(epsilon, delta, share)
        exact = sequence.norm_histogram(norms, grid)
        seen.append((exact, grid, sigma, len(norms)))
        held.setdefault("released", exact + sigma * np.random.default_rng(0).standard_normal(grid.size))
        return sequence.dp_sequence_clip(norms, top, epsilon, delta, Prescribed((held["released"] - exact) / sigma),
                                         share, levels)

    monkeypatch.setattr(module, "dp_sequence_clip", coupled)
    return seen


def check_clip(method, monkeypatch) -> list:
    seen = coupled_clip(monkeypatch, importlib.import_module(CLIP_MODULES[method]))
    config = clip_config(method)
    replay = replay_release(monkeypatch, *RELEASE_POINTS[method])
    out = []
    for events in clip_events():
        stats, info = prepare_stats(events, config)
        out.append((info.auto_sequence_clip["sequence_clip"], estimate(stats, config)[0]))
        replay.second()
    assert replay.consumed
    assert out[0][0] == out[1][0], "the two data sets' clips differ"
    assert same_estimate(out[0][1], out[1][1]), "the two data sets' estimates differ"
    return seen


@pytest.mark.parametrize("method", ["ssp", "ctls", "exp"])
def test_the_automatic_sequence_clip_reads_only_its_released_histogram(method, monkeypatch):
    seen = check_clip(method, monkeypatch)
    (h_d, grid, sigma, count), (h_n, _, _, _) = seen
    assert sequence.choose_clip(h_d, grid, sigma, count) != sequence.choose_clip(h_n, grid, sigma, count)


def test_a_sequence_clip_chosen_from_the_exact_norms_is_caught(monkeypatch):
    def exact_norms(norms, top, epsilon, delta, rng, share=sequence.AUTO_CLIP_SHARE, levels=sequence.AUTO_CLIP_LEVELS):
        grid = sequence.clip_grid(top, levels)
        sigma = sequence.clip_noise_sigma(epsilon, delta, share)
        rng.standard_normal(grid.size)  # drawn, then not read
        return sequence.AutoClip(sequence.choose_clip(sequence.norm_histogram(norms, grid), grid, sigma, len(norms)),
                                 float(share), sigma, float(top), int(levels))

    monkeypatch.setattr(sequence, "dp_sequence_clip", exact_norms)
    with pytest.raises(AssertionError, match="clips differ"):
        check_clip("exp", monkeypatch)


# --- Δ, s and the decays from the noisy count -----------------------------------------------------------------------

#: N and N + 1 events over T = 568.5: the mean gaps T/N and T/(N+1) put Δ = gap/4 on either side of √2, where the
#: rounding to 1, 2, 5 × 10^k turns from 2 to 1 (and every decay m/gap moves).
N_EVENTS, OBSERVED = 100, 4 * np.sqrt(2) * 100.5


def count_events() -> tuple[Events, Events]:
    times = np.linspace(1.0, OBSERVED - 1.0, N_EVENTS + 1)
    return tuple(from_arrays([t], end_time=OBSERVED) for t in (times, times[:-1]))


def test_the_counts_round_to_different_time_scales():
    exact = [time_scale_from_count(OBSERVED, n) for n in (N_EVENTS + 1, N_EVENTS)]
    assert exact[0].bin_size != exact[1].bin_size
    assert selection.decays_from_count(OBSERVED, N_EVENTS + 1) != selection.decays_from_count(OBSERVED, N_EVENTS)


def scaled_releases(method: str, choices, monkeypatch, ledger_dir) -> list:
    """For D and D' (N + 1 and N events): the session's release with ``choices`` read from the noisy count, the
    count released equal (replayed) and the fit's release replayed. The second choice is compared with the first
    as soon as it is made (before a fit at another Δ could not use the replayed release)."""
    count = replay_release(monkeypatch, selection, "noisy_tails")
    fit = replay_release(monkeypatch, *RELEASE_POINTS[method])
    real, scales = session_module.dp_time_scale, []

    def compared(*args, **kwargs):
        scales.append(real(*args, **kwargs))
        assert scales[-1] == scales[0], "the two data sets' choices differ"
        return scales[-1]

    monkeypatch.setattr(session_module, "dp_time_scale", compared)
    config = FitConfig(method=method, bin_size=1.0, lags=2, epsilon=4.0, calibration="formal", count_cap=2, seed=2)
    out = []
    for k, events in enumerate(count_events()):
        session = PrivacySession.for_events(events, LedgerBook(ledger_dir / f"ledger-{k}.json"), f"data-{k}")
        answer = session.release_scaled(config, 0.05, choices=choices)
        out.append((answer.time_scale, answer.result.H, answer.result.baseline))
        count.second()
        fit.second()
    assert count.consumed and fit.consumed and len(scales) == 2
    return out


def check_scaled(method, choices, monkeypatch, ledger_dir) -> None:
    (scale_d, H_d, mu_d), (scale_n, H_n, mu_n) = scaled_releases(method, choices, monkeypatch, ledger_dir)
    assert scale_d == scale_n, "the two data sets' choices differ"
    assert same_estimate(H_d, H_n) and same_estimate(mu_d, mu_n), "the two data sets' estimates differ"


def test_the_time_scale_reads_only_the_noisy_count(monkeypatch, tmp_path):
    check_scaled("ssp", (TIME_SCALE,), monkeypatch, tmp_path)


def test_the_decays_read_only_the_noisy_count(monkeypatch, tmp_path):
    check_scaled("exp", (TIME_SCALE, DECAYS), monkeypatch, tmp_path)


def exact_count(n_events, observed_time, split, rng, applied=(TIME_SCALE,)):
    """A planted bug: Δ, s and the decays read from the exact count (the noisy one drawn, then not read)."""
    noisy = float(selection.noisy_tails(np.array([int(n_events)]), split.selection_multiplier, rng)[0])
    scale = time_scale_from_count(observed_time, n_events)
    return selection.AutoScale(scale.bin_size, scale.support, scale.lags, noisy, float(observed_time), split.share,
                               split.selection_multiplier, split.rest_epsilon,
                               selection.decays_from_count(observed_time, n_events), selection.check_choices(applied))


@pytest.mark.parametrize("method,choices", [("ssp", (TIME_SCALE,)), ("exp", (DECAYS,))])
def test_a_time_scale_or_decays_read_from_the_exact_count_are_caught(method, choices, monkeypatch, tmp_path):
    monkeypatch.setattr(session_module, "dp_time_scale", exact_count)
    with pytest.raises(AssertionError, match="choices differ"):
        check_scaled(method, choices, monkeypatch, tmp_path)


# --- ctls's width and support chosen by validation ------------------------------------------------------------------

def width_events() -> tuple[Events, Events]:
    """2-d events on [0, 60]; D' adds one event to the validation block (the last 30 %: from 42)."""
    rng = np.random.default_rng(8)
    times = [np.sort(rng.uniform(0, 60, 90)) for _ in range(2)]
    more = [np.sort(np.append(times[0], 50.3)), times[1]]
    return from_arrays(times, end_time=60.0), from_arrays(more, end_time=60.0)


def width_config() -> FitConfig:
    return FitConfig(method="ctls", bin_size=0.5, lags=8, epsilon=3.0, calibration="formal", count_cap=3,
                     ctls_width_choice="validation", seed=1)


def width_choices(monkeypatch) -> list:
    replay = replay_release(monkeypatch, width_choice, "noisy_split_vector")
    config = width_config()
    out = []
    for events in width_events():
        stats, _ = prepare_stats(events, config)
        U, info = estimate(stats, config)
        out.append((info["chosen_width"], info["chosen_support"], [c["score"] for c in info["candidates"]], U,
                    stats.validation_pieces))
        replay.second()
    assert replay.consumed
    return out


def check_width(monkeypatch) -> list:
    first, second = width_choices(monkeypatch)
    assert first[:2] == second[:2], "the two data sets' widths differ"
    assert np.allclose(first[2], second[2], rtol=1e-9, atol=0), "the two data sets' scores differ"
    assert same_estimate(first[3], second[3]), "the two data sets' estimates differ"
    return [first, second]


def test_the_width_choice_reads_only_the_released_blocks(monkeypatch):
    first, second = check_width(monkeypatch)
    assert not np.array_equal(first[4].pairs, second[4].pairs)  # the exact validation blocks differ


def share_width_choices(monkeypatch, score: str = "contrast") -> list:
    """Share then direct on D and D': the choice's release and the direct release replayed (the second draws what the
    first released), so a choice scored on the released blocks only — both ways, or by the kernel risk, whose
    bootstrap draws are replayed too — is the same."""
    choice = replay_release(monkeypatch, width_choice, "noisy_split_vector")
    direct = replay_release(monkeypatch, width_choice, "direct_release")
    config = width_config().with_changes(ctls_width_choice="share", ctls_choice_score=score)
    out = []
    for events in width_events():
        stats, _ = prepare_stats(events, config)
        U, info = estimate(stats, config)
        out.append((info["chosen_width"], info["chosen_support"], [c["score"] for c in info["candidates"]], U))
        choice.second()
        direct.second()
    assert choice.consumed and direct.consumed
    first, second = out
    assert first[:2] == second[:2], "the two data sets' widths differ"
    assert np.allclose(first[2], second[2], rtol=1e-9, atol=0), "the two data sets' scores differ"
    assert same_estimate(first[3], second[3]), "the two data sets' estimates differ"
    return out


def test_the_share_width_choice_scored_both_ways_reads_only_the_released_blocks(monkeypatch):
    share_width_choices(monkeypatch)


def risk_width_choices(monkeypatch) -> list:
    return share_width_choices(monkeypatch, "risk")


def test_the_share_width_choice_scored_by_the_kernel_risk_reads_only_the_released_blocks(monkeypatch):
    risk_width_choices(monkeypatch)


@pytest.mark.parametrize("choices", [check_width, share_width_choices, risk_width_choices],
                         ids=["validation", "share", "share by risk"])
def test_a_width_scored_on_the_exact_validation_block_is_caught(choices, monkeypatch):
    real = width_choice.release_blocks

    def exact_validation(train, validation, width, raw_sigma, kappa, rho, rng):
        return dataclasses.replace(real(train, validation, width, raw_sigma, kappa, rho, rng), validation=validation)

    monkeypatch.setattr(width_choice, "release_blocks", exact_validation)
    with pytest.raises(AssertionError, match="scores differ"):
        choices(monkeypatch)


# --- two unseeded draws differ, for every mechanism -------------------------------------------------------------------

def spy(monkeypatch, module, name, position: int = 0) -> list:
    """Record argument ``position`` of every call of ``module.name`` (the numbers a choice reads)."""
    real, seen = getattr(module, name), []

    def recording(*args, **kwargs):
        seen.append(np.array(args[position], dtype=float, copy=True))
        return real(*args, **kwargs)

    monkeypatch.setattr(module, name, recording)
    return seen


def unseeded_draws(monkeypatch, tmp_path) -> dict:
    """Two unseeded draws of each mechanism: the count cap's tails, the time scale's count (through the session),
    the sequence clip's histogram, and every private family's release (through the pipeline)."""
    draws = {}
    tails = spy(monkeypatch, count_cap, "choose_cap")
    events = cap_events()[0]
    for _ in range(2):
        binned.chosen_count_cap(events, cap_config("ssp").with_changes(seed=None))
    draws["count cap tails"] = tails
    histograms = spy(monkeypatch, sequence, "choose_clip")
    for _ in range(2):
        prepare_stats(clip_events()[0], clip_config("exp").with_changes(seed=None))
    draws["sequence clip histogram"] = histograms
    counts = []  # an integer count with σ ≈ 18: four draws, all equal with probability about 4e-6
    for k in range(4):
        session = PrivacySession.for_events(count_events()[0], LedgerBook(tmp_path / f"u-{k}.json"), f"u-{k}")
        config = FitConfig(method="ssp", bin_size=1.0, lags=2, epsilon=4.0, calibration="formal", count_cap=2)
        counts.append(session.release_scaled(config, 0.05).time_scale.noisy_count)
    draws["time scale count (the count share)"] = counts
    for name in ("ssp", "pgd", "cg", "pgd-clip", "ctls", "exp"):
        family = get_family(name)
        options = dict(bound=1.0, radius=1.0, clip=1.0, iters=2)
        config = FitConfig(method=name, bin_size=1.0, lags=2, epsilon=1.0, calibration="formal", count_cap=2,
                           **family.own_options(options))
        stats, _ = prepare_stats(cap_events()[0], config)
        report = privacy_report(stats, config)
        draws[name] = [run_private(stats, config, report).H for _ in range(2)]
    stats, _ = prepare_stats(width_events()[0], width_config().with_changes(seed=None))
    report = privacy_report(stats, width_config())
    draws["ctls by validation"] = [run_private(stats, width_config().with_changes(seed=None), report).H
                                   for _ in range(2)]
    return draws


def check_unseeded(monkeypatch, tmp_path) -> dict:
    draws = unseeded_draws(monkeypatch, tmp_path)
    for mechanism, (first, *others) in draws.items():
        assert not all(np.array_equal(first, other) for other in others), f"unseeded draws of {mechanism} are equal"
    return draws


def test_two_unseeded_draws_differ_for_every_mechanism(monkeypatch, tmp_path):
    draws = check_unseeded(monkeypatch, tmp_path)
    assert len(draws) == 10


def test_an_unseeded_count_drawn_from_a_fixed_seed_is_caught(monkeypatch, tmp_path):
    def fixed(seed, discrete=False):
        return noise_source((0, 0x5CA1E))

    monkeypatch.setattr(selection, "scale_rng", fixed)
    monkeypatch.setattr(session_module, "scale_rng", fixed)
    with pytest.raises(AssertionError, match="draws of time scale count"):
        check_unseeded(monkeypatch, tmp_path)


"""The family-blind neighbour search (``dphawkes_core/estimators/neighbour_search.py``) as an adversary: told
nothing about where a family's bound is reached, it finds the exponential family's swap over the bound as it was
before issue 40 (insertions only), kills a bound taken at the smallest corner through the contract suite's own
check, and catches an understated sensitivity in every private family; it asks a family for its noised
vectors and nothing else, and re-measures its best pairs through partitioned stores.

The old and the mutant bounds are built here as the search meets them (monkeypatched over ``exp_sensitivity`` where
the family reads it); the product keeps the old bound's total only to re-cost ledgers written before the fix
(``estimators/exp/recost.short_exp_sensitivity``, checked against it below).
Every private family passing the search with its real bounds is the contract suite's ``neighbour search`` check
(``tests/core/estimators/test_family_contract.py``)."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest

import dphawkes_core.estimators.exp as exp_family
import dphawkes_core.estimators.exp.release as exp_release
from dphawkes_core.estimators import FitConfig, get_family, method_names
from dphawkes_core.estimators.checks import FamilyCheckError, check_neighbour_search
from dphawkes_core.estimators.exp.release import ExpSensitivity, corner_bounds, exp_sensitivity
from dphawkes_core.estimators.neighbour_search import INSERT, SWAP, Budget, search_neighbours

EXP = get_family("exp")
PRIVATE = [name for name in method_names() if get_family(name).privacy.private]


def insertion_corners(dim, decays, width, count_cap, gram_scale=1.0, totals_weight=1.0) -> list[ExpSensitivity]:
    """The four insertion corners of the exponential release (what the bound was made of before the swap)."""
    out = []
    for end in (0, 1):
        for after in (True, False):
            parts = corner_bounds(dim, decays, width, count_cap, end, after, totals_weight)
            out.append(ExpSensitivity(math.sqrt(parts["gram"] / gram_scale**2 + parts["rest"]), float(gram_scale),
                                      (end, after), parts))
    return out


def old_bound(*args, **kwargs) -> ExpSensitivity:
    """The bound before issue 40: the largest insertion corner (no swap case)."""
    return max(insertion_corners(*args, **kwargs), key=lambda s: s.total)


def test_the_old_bound_is_the_one_older_ledgers_are_recosted_from():
    """The bound this search refutes is the one the ledger re-costs releases from (the same total)."""
    from dphawkes_core.estimators.exp.recost import short_exp_sensitivity

    for args in ((5, (2.8, 6.0, 12.0), 4.0, 1, 12.0), (2, (0.7, 1.5, 3.0), 0.5, 2, 3.0), (8, (20.0,), 1.0, 1, 10.0)):
        assert short_exp_sensitivity(*args) == old_bound(*args[:4], gram_scale=args[4]).total


def smallest_corner(*args, **kwargs) -> ExpSensitivity:
    """A planted bug: the bound taken at the smallest insertion corner."""
    return min(insertion_corners(*args, **kwargs), key=lambda s: s.total)


# public settings where fast decays against w make a swap mix two corners: d = 5, w = 4, C = 1, ρ = 12
SWAP_CONFIG = FitConfig(method="exp", bin_size=4.0, lags=1, calibration="formal", count_cap=1, sigma2=1.0,
                        decays=(2.8, 6.0, 12.0), exp_gram_scale=12.0)
SWAP_BUDGET = Budget(starts=2, steps=40, polish=2, partitions=False)


def test_the_search_finds_the_swap_over_the_old_bound(monkeypatch):
    """Under the old bound the search, on public settings alone, finds a swap (z at the start of a full bin
    evicting the kept event at its end) that moves the release past S, while no insertion does: the old bound
    held for insertions and missed the swap."""
    monkeypatch.setattr(exp_family, "exp_sensitivity", old_bound)
    report = search_neighbours(EXP, SWAP_BUDGET, configs=[(SWAP_CONFIG, 5)])
    by_kind = report.worst_by_kind()
    assert by_kind[SWAP].ratio > 1.02  # 1.082 measured
    assert by_kind[INSERT].ratio <= 1 + 1e-9


def test_with_the_corrected_bound_the_same_search_stays_under_it():
    """The same search on the same settings, with the bound as it is: the swap it finds stays below S and still
    reaches most of it (the swap's bound is not loose there)."""
    report = search_neighbours(EXP, SWAP_BUDGET, configs=[(SWAP_CONFIG, 5)])
    assert report.worst.ratio <= 1 + 1e-9
    assert report.worst_by_kind()[SWAP].ratio > 0.9  # 0.974 measured
    assert exp_sensitivity(5, SWAP_CONFIG.decays, 4.0, 1, 12.0).kind == "swap"


def test_the_contract_check_kills_the_smallest_corner_mutant(monkeypatch):
    """The bound taken at the smallest corner passes the family's own tests (their adversary is built from the
    corner the code reports) but not the contract suite's family-blind check."""
    monkeypatch.setattr(exp_family, "exp_sensitivity", smallest_corner)
    with pytest.raises(FamilyCheckError, match="past its stated sensitivity"):
        check_neighbour_search(EXP)


#: How far below its stated S a family's planted S is: some 20 % under what a small search (2 configs, 1 climb of 20
#: moves, one polish) reaches on the real bounds (measured: ssp 1.00, exp 0.73 — 0.90 before exp's options gained the
#: derived Gram, which moved the search's generator —, ctls 0.74, pgd 0.50, cg 0.49, pgd-clip 0.24 of S), so that
#: another BLAS kernel's round-off cannot turn the verdict. A search weakened by more
#: fails here; the gradient families' bounds hold over a whole ball of states and are loose at d >= 2
#: (tests/core/privacy/test_sensitivity_worst_case.py).
UNDERSTATED = {"ssp": 0.8, "exp": 0.6, "ctls": 0.6, "pgd": 0.4, "cg": 0.4, "pgd-clip": 0.2}
SMALL = Budget(configs=2, starts=1, steps=20, polish=1, partitions=False, sequence_configs=0)


def test_every_private_family_has_a_planted_understatement():
    assert sorted(UNDERSTATED) == sorted(PRIVATE)


@pytest.mark.parametrize("name", sorted(UNDERSTATED))
def test_the_check_catches_an_understated_sensitivity_in_every_family(name, monkeypatch):
    """Every private family's noised vectors checked against an understated S are caught."""
    family = get_family(name)
    real = type(family).noised_queries
    factor = UNDERSTATED[name]

    def understated(self, stats, config, state=None):
        return tuple(replace(q, sensitivity=q.sensitivity * factor) for q in real(self, stats, config, state))

    monkeypatch.setattr(type(family), "noised_queries", understated)
    with pytest.raises(FamilyCheckError, match="past its stated sensitivity"):
        check_neighbour_search(family, SMALL)


def test_it_asks_a_family_for_its_noised_vectors_only(monkeypatch):
    """With the family's adversarial events and states made unreachable, the search runs the same: it reads
    neither."""
    def refused(*args, **kwargs):
        raise AssertionError("the neighbour search asked the family where its bound is reached")

    monkeypatch.setattr(type(EXP), "worst_case_events", refused)
    monkeypatch.setattr(type(EXP), "worst_case_state", refused)
    monkeypatch.setattr(exp_release, "worst_case_events", refused)
    report = search_neighbours(EXP, Budget(configs=1, starts=1, steps=10, polish=1))
    assert report.findings and report.worst.ratio <= 1 + 1e-9


def test_a_sensitivity_read_from_the_data_is_reported():
    """A family whose stated S differs between two neighbours (read from the data) is reported as such."""
    class FromData(type(get_family("ssp"))):
        def noised_queries(self, stats, config, state=None):
            (query,) = super().noised_queries(stats, config, state)
            return (replace(query, sensitivity=query.sensitivity * (1 + float(np.sum(query.vector)))),)

    config = FitConfig(method="ssp", bin_size=1.0, lags=2, calibration="formal", count_cap=2, sigma2=1.0)
    report = search_neighbours(FromData(), Budget(starts=2, steps=20, polish=0, partitions=False),
                               configs=[(config, 2)])
    assert report.worst.ratio == math.inf and "read from the data" in report.worst.query


def test_its_best_pairs_are_measured_again_through_partitioned_stores():
    """The best pair of a config is re-measured on Parquet stores cut at z, just after it, at its bin edge and
    inside its bin; the statistics are the in-process ones, so the ratio is the in-process one."""
    config = FitConfig(method="exp", bin_size=1.0, lags=1, calibration="formal", count_cap=2, sigma2=1.0)
    report = search_neighbours(EXP, Budget(starts=1, steps=15, polish=1), configs=[(config, 2)])
    through = [f for f in report.findings if f.where.startswith("partitions")]
    assert {f.where for f in through} == {"partitions: cut at z", "partitions: cut just after z",
                                          "partitions: cut at z's bin edge", "partitions: cut inside z's bin"}
    in_process = {(f.kind, f.added): f.ratio for f in report.findings if f.where == "in process"}
    for finding in through:
        assert finding.ratio == pytest.approx(in_process[(finding.kind, finding.added)], rel=1e-9)


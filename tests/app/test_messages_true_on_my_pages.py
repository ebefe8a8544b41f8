"""One assertion per message fixed on the Home, Reproduce, Audit and Budget pages and in the comparison's
sentence: the audit's headline and metric show one number, a refused setting keeps the last result and says
which field and range, ledger rows name the data set, its window and fingerprint, server advice only for
administrators, and the best formal estimator is never one no better than zero."""

from __future__ import annotations

import re

from app_tools import ROOT, TIMEOUT, figures, open_estimate, private_dataset, texts
from conftest import no_problems
from streamlit.testing.v1 import AppTest
from test_words_on_screen import problems

from dphawkes_core.release.ledger_store import LEDGER_ENV

AUDIT, BUDGET, REPRODUCE = (str(ROOT / "pages" / p) for p in ("5_Privacy_audit.py", "6_Privacy_budget.py",
                                                             "4_Reproduce_paper.py"))


def run_broken_audit() -> AppTest:
    at = AppTest.from_file(AUDIT, default_timeout=TIMEOUT).run()
    at.selectbox(key="au_method").set_value("ssp").run()
    at.number_input(key="au_trials").set_value(200).run()
    at.toggle(key="au_broken").set_value(True).run()
    at.button(key="au_run").click().run()
    no_problems(at) if not at.session_state["audit_result"].violated else None
    return at


def test_the_audit_headline_and_its_metric_show_the_same_bound():
    at = run_broken_audit()
    result = at.session_state["audit_result"]
    assert result.violated and result.mu_claimed is not None
    metric = next(m for m in at.metric if m.label.startswith("audited lower bound"))
    headline = re.search(r"leaks ε ≥ ([0-9.e+]+)", at.error[0].value).group(1)
    assert metric.value == headline == f"{result.epsilon_audited:.3g}"
    assert result.epsilon_audited == max(result.epsilon_lower_bound, result.epsilon_lower_bound_gdp)
    assert not problems(at)  # the verdict and its figures: no path, flag or emoji


def test_a_refused_audit_setting_says_so_and_keeps_the_last_audit():
    at = run_broken_audit()
    before = figures(at)
    at.number_input(key="au_eps").set_value(-1.0).run()  # below the field's minimum
    refusal = texts(at.error).lower()
    assert "claimed ε must be at least 0.001" in refusal and "-1 was entered" in refusal
    assert figures(at) == before and not problems(at)  # the last audit stays on screen; no emoji on the refusal
    assert at.number_input(key="au_trials").value == 200  # every field stays drawn and keeps its value
    at.number_input(key="au_trials").set_value(10).run()  # two refused fields: both named in one message
    refusal = texts(at.error).lower()
    assert "trials per data set must be at least 20 and at most 100000" in refusal and "claimed ε" in refusal


def test_reproduce_refuses_an_out_of_range_value_and_keeps_its_results():
    at = AppTest.from_file(REPRODUCE, default_timeout=TIMEOUT).run()
    at.button(key="run_fig1").click().run()
    no_problems(at)
    assert not problems(at)  # the verdict is drawn with a Material icon, not an emoji
    assert any(":material/" in m.value and "Verdict" in m.value for m in at.markdown)
    kernel = figures(at)
    at.number_input(key="repro_runs").set_value(0).run()
    assert "runs per boxplot" in texts(at.error).lower() and "must be at least 1 and at most 50" in texts(at.error)
    assert at.button(key="run_fig2").disabled and figures(at) == kernel


def open_budget(dataset, epsilon: float) -> AppTest:
    at = AppTest.from_file(BUDGET, default_timeout=TIMEOUT)
    at.session_state["dataset"] = dataset
    at.run()
    at.number_input(key="budget_epsilon").set_value(epsilon)
    next(b for b in at.button if b.label == "Set the budget").click().run()
    return at


def test_ledger_rows_name_the_data_set_its_window_and_fingerprint():
    first, second = private_dataset(seed=5), private_dataset(seed=6)  # both uploaded as "mine.csv"
    open_budget(first, 4.0)
    at = open_budget(second, 3.0)
    no_problems(at)
    table = next(df.value for df in at.dataframe if "fingerprint" in df.value.columns)
    assert len(table) == 2 and table["fingerprint"].nunique() == 2 and table["data set"].nunique() == 2
    for dataset in (first, second):
        row = table[table["data set"].str.contains(f"{dataset.events.n_events:,} events")]
        assert row["data set"].iloc[0].startswith("mine.csv — ") and "window [0, " in row["data set"].iloc[0]


def test_server_advice_only_in_the_administrators_expander():
    at = AppTest.from_file(BUDGET, default_timeout=TIMEOUT)
    at.session_state["dataset"] = private_dataset()
    at.run()
    no_problems(at)
    outside = " ".join(m.value for m in at.markdown) + texts(at.caption)
    assert LEDGER_ENV not in outside and "--ledger" not in outside
    admin = next(e for e in at.expander if e.label.startswith("For administrators"))
    code = " ".join(c.value for c in admin.code)
    assert f"{LEDGER_ENV}=" in code and "--ledger" in code


def test_the_refused_budget_value_says_so():
    at = AppTest.from_file(BUDGET, default_timeout=TIMEOUT)
    at.session_state["dataset"] = private_dataset()
    at.run()
    at.number_input(key="budget_epsilon").set_value(0.0)
    next(b for b in at.button if b.label == "Set the budget").click().run()
    assert "total ε for this data set must be at least 0.01" in texts(at.error).lower()
    assert not problems(at)


def test_the_figure_3_preset_names_no_best_formal_estimator_no_better_than_zero():
    at = open_estimate(preset="fig3")
    no_problems(at)
    named = [c.value for c in at.caption if "best formal estimator" in c.value]
    errors = [float(e) for c in named for e in re.findall(r"grid-free error ([0-9.]+)", c)[:1]]
    assert all(e < 0.95 for e in errors), named

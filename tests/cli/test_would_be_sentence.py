"""The CLI's note on a fit without a ledger is the core's sentence of what the same settings would be on private
data (:func:`dphawkes_core.privacy.formal_words.would_be_sentence`), the one the app's formal column shows."""

from dphawkes_cli.main import main
from dphawkes_core.privacy.formal_words import would_be_sentence
from dphawkes_core.privacy.report import formal_status

ROWS = "time,dimension\n" + "".join(f"{0.5 + 0.7 * k},{k % 2}\n" for k in range(60))
FORMAL = ["--method", "ssp", "--bin-size", "1", "--lags", "2", "--epsilon", "1", "--calibration", "formal",
          "--count-cap", "2", "--end-time", "50"]


def test_the_note_says_what_the_settings_would_be_on_private_data(tmp_path, capsys):
    data = tmp_path / "events.csv"
    data.write_text(ROWS)
    assert main(["fit", str(data), *FORMAL, "--dimensions", "2", "--json", str(tmp_path / "a.json")]) == 0
    would = would_be_sentence(formal_status("formal", seed=None, window_stated=True), "cli")
    assert f"note: no --ledger: {would}. formal_settings true" in capsys.readouterr().err
    assert main(["fit", str(data), *FORMAL, "--json", str(tmp_path / "b.json")]) == 0
    undeclared = would_be_sentence(formal_status("formal", seed=None, window_stated=True, data_derived=("d",)), "cli")
    err = capsys.readouterr().err
    assert f"note: no --ledger: {undeclared}. formal_settings false" in err and "--dimensions" in err

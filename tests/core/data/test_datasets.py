"""Where the real data are looked for when nothing is configured."""

from pathlib import Path

from dphawkes_core.data import datasets

ROOT = Path(__file__).resolve().parents[3]


def test_default_data_dir_is_shared_data_beside_the_repository(monkeypatch):
    """Without ``DPHAWKES_DATA_DIR`` the data are ``<repo>/../shared/data`` (a wrong root only skips tests)."""
    monkeypatch.delenv("DPHAWKES_DATA_DIR", raising=False)
    assert datasets.default_data_dir() == ROOT.parent / "shared" / "data"
    assert datasets.REPO_ROOT == ROOT


def test_a_configured_data_dir_wins(monkeypatch, tmp_path):
    monkeypatch.setenv("DPHAWKES_DATA_DIR", str(tmp_path))
    assert datasets.default_data_dir() == tmp_path

"""Fixtures of every test: a privacy ledger of its own, and empty Streamlit caches on request (every app test gets
them: ``tests/app/conftest.py``). Nothing to import here: ``import conftest`` finds the conftest of the directory
collected last, so shared helpers live in ``tests/references.py`` (imported as ``tests.references``) and, for the
app tests, in ``tests/app/conftest.py``."""

import pytest
import streamlit as st


@pytest.fixture(scope="session", autouse=True)
def session_ledger_file(tmp_path_factory):
    """Servers started by module-scoped fixtures (the browser tests) keep their privacy ledger in a tmp dir too."""
    path = tmp_path_factory.mktemp("ledger") / "ledger.json"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("DPHAWKES_LEDGER", str(path))
        yield path


@pytest.fixture(autouse=True)
def private_ledger_file(tmp_path, monkeypatch):
    """Every test keeps its privacy ledger in its own tmp dir (never the user's ``~/.dphawkes``)."""
    path = tmp_path / "ledger.json"
    monkeypatch.setenv("DPHAWKES_LEDGER", str(path))
    return path


@pytest.fixture
def clear_streamlit_caches():
    """``st.cache_data`` is process-global: start and end every app test with empty caches."""
    st.cache_data.clear()
    st.cache_resource.clear()
    yield
    st.cache_data.clear()
    st.cache_resource.clear()

"""Fixtures shared by the AppTest modules."""

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


def no_problems(at) -> None:
    """An AppTest run without uncaught exceptions and without error boxes."""
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def zcdp_epsilon_reference(rho: float, delta: float) -> float:
    """ε at δ of ρ-zCDP by dp-accounting's RDP conversion (Rényi ε(α) = αρ) on a fine grid of orders α: an
    independent check of the discrete Gaussian's calibration (``dphawkes_core.privacy.noise`` computes it its own
    way)."""
    import numpy as np
    from dp_accounting.rdp.rdp_privacy_accountant import compute_epsilon

    orders = 1 + np.exp(np.linspace(-8, 8, 4001))
    return float(compute_epsilon(orders, orders * rho, delta)[0])

"""What every AppTest module shares: empty Streamlit caches around each test (they are process-global), the
private data set most release tests use, and the check that a run shows no problem."""

from __future__ import annotations

import pytest
from app_tools import private_dataset

from dphawkes_core.data.datasets import Dataset


@pytest.fixture(autouse=True)
def fresh_streamlit_caches(clear_streamlit_caches):
    """Every app test starts and ends with empty caches (``tests/conftest.py``'s ``clear_streamlit_caches``)."""
    yield


@pytest.fixture(scope="module")
def data() -> Dataset:
    """Uploaded (private) events with a stated window and declared dimensions: a formal release is possible."""
    return private_dataset()


def no_problems(at) -> None:
    """An AppTest run without uncaught exceptions and without error boxes."""
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]

"""What every AppTest module shares: empty Streamlit caches around each test (they are process-global), the
private data set most release tests use, and the check that a run shows no problem; and what every browser test
module shares: the app served for the module, with a ledger of its own, and a headless Chromium."""

from __future__ import annotations

import pytest
from app_tools import chromium_browser, private_dataset, served_app

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


@pytest.fixture(scope="module")
def server(tmp_path_factory, request):
    """The app served by ``streamlit run`` for one browser test module, with a ledger of its own (never the user's):
    ``(url, ledger path)``; skips, saying why, without Chromium or playwright."""
    with served_app(tmp_path_factory.mktemp(request.module.__name__.rsplit(".", 1)[-1])) as served:
        yield served


@pytest.fixture(scope="module")
def browser(server):
    """Headless Debian Chromium for the module, started once its app is served."""
    with chromium_browser() as chromium:
        yield chromium

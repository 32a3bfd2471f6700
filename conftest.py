"""Every pytest run of this repository (tests, the doctests of ``cc_analytics``, the notebooks under
nbval) keeps what it caches in a folder of its own: never the user's cache (``cc_analytics.cache``)."""

from __future__ import annotations

import os

import pytest


@pytest.fixture(autouse=True, scope="session")
def _own_cache_folder(tmp_path_factory: pytest.TempPathFactory) -> None:
    os.environ["CC_ANALYTICS_CACHE_DIR"] = str(tmp_path_factory.mktemp("user-cache"))

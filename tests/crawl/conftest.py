"""Fixtures for crawler tests (the server itself lives in crawl_testsite.py)."""
from __future__ import annotations

import pytest

from crawl_testsite import LocalSite


@pytest.fixture
def local_site():
    sites = []

    def make(routes):
        s = LocalSite(routes).__enter__()
        sites.append(s)
        return s

    yield make
    for s in sites:
        s.__exit__(None, None, None)

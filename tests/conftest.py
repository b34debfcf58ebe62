"""Fixtures several test files share."""
from __future__ import annotations

import locale

import pytest


@pytest.fixture
def ascii_locale():
    """A machine whose locale encoding is ASCII (nothing changes in Python's UTF-8 mode)."""
    old = locale.setlocale(locale.LC_CTYPE)
    locale.setlocale(locale.LC_CTYPE, "C")
    yield
    locale.setlocale(locale.LC_CTYPE, old)


"""Page tests need a real browser: Debian's chromium and chromium-driver (the ``browser``
fixture is in ``conftest.py``)."""

from __future__ import annotations

import shutil

import pytest

CHROMIUM, DRIVER = shutil.which("chromium"), shutil.which("chromedriver")
NEEDS_BROWSER = pytest.mark.skipif(
    not (CHROMIUM and DRIVER), reason="Debian's chromium and chromium-driver are not installed"
)

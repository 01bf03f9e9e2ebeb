"""The demo report in a real browser: no console error, no broken image; a screenshot."""

from __future__ import annotations

from pathlib import Path

import pytest

from browser_helpers import NEEDS_BROWSER

pytestmark = NEEDS_BROWSER
SCREENSHOT = Path(__file__).resolve().parents[2] / "docs" / "images" / "demo-report.png"


@pytest.mark.xdist_group("demo")  # the demo runs once, in the worker of both its tests
def test_the_demo_report_renders_without_errors_or_broken_images(demo_run, browser):
    result, folder = demo_run
    assert result.returncode == 0, result.stderr
    browser.get((folder / "report.html").resolve().as_uri())
    images = browser.execute_script(
        "return Array.from(document.images).map(i => [i.alt, i.complete, i.naturalWidth]);"
    )
    assert len(images) >= 4
    broken = [alt for alt, complete, width in images if not complete or width == 0]
    assert not broken, f"broken images: {broken}"
    errors = [entry for entry in browser.get_log("browser") if entry["level"] == "SEVERE"]
    assert not errors, errors
    assert "NaN" not in browser.find_element("tag name", "body").text
    SCREENSHOT.parent.mkdir(exist_ok=True)
    browser.save_screenshot(str(SCREENSHOT))

"""Page tests need a real browser: Debian's chromium and chromium-driver (the ``browser``
fixture is in ``conftest.py``)."""

from __future__ import annotations

import shutil

import pytest

CHROMIUM, DRIVER = shutil.which("chromium"), shutil.which("chromedriver")
NEEDS_BROWSER = pytest.mark.skipif(
    not (CHROMIUM and DRIVER), reason="Debian's chromium and chromium-driver are not installed"
)


def gone(element):
    """A wait condition: ``element`` has left the page. Selenium's ``staleness_of`` asks the
    element whether it is enabled and counts only a stale reference as gone; while the page
    is being replaced, chromedriver sometimes answers "unhandled inspector error" instead
    (a CI run failed so), which means the same thing here."""
    from selenium.common.exceptions import StaleElementReferenceException, WebDriverException

    def left(_driver) -> bool:
        try:
            element.is_enabled()
        except StaleElementReferenceException:
            return True
        except WebDriverException as error:
            if "inspector error" in str(error):
                return True
            raise
        return False

    return left


# Every button's text and background colour as the browser draws them (a transparent
# background shows its nearest painted ancestor's).
BUTTON_COLOURS = """
const painted = (element) => {
  for (let node = element; node; node = node.parentElement) {
    const colour = getComputedStyle(node).backgroundColor;
    if (colour && colour !== 'rgba(0, 0, 0, 0)' && colour !== 'transparent') return colour;
  }
  return 'rgb(255, 255, 255)';
};
return [...document.querySelectorAll('button')].map(
  (b) => [b.textContent.trim(), getComputedStyle(b).color, painted(b)]);
"""


def _luminance(css: str) -> float:
    """WCAG 2.x relative luminance of an ``rgb(...)``/``rgba(...)`` colour."""
    values = [float(v) for v in css[css.index("(") + 1 : css.index(")")].split(",")[:3]]
    linear = [
        c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4
        for c in (v / 255 for v in values)
    ]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def contrast_ratio(foreground: str, background: str) -> float:
    """WCAG 2.x contrast ratio of two CSS colours (1 to 21).

    >>> round(contrast_ratio("rgb(255, 255, 255)", "rgb(0, 0, 0)"), 1)
    21.0
    >>> round(contrast_ratio("rgb(255, 255, 255)", "rgb(239, 239, 239)"), 2)  # white on grey
    1.15
    """
    light, dark = sorted((_luminance(foreground), _luminance(background)), reverse=True)
    return (light + 0.05) / (dark + 0.05)


def low_contrast_buttons(driver) -> list[tuple[str, float]]:
    """Buttons of the page below WCAG AA's 4.5:1 for text, with their ratio."""
    return [
        (text, round(contrast_ratio(colour, background), 2))
        for text, colour, background in driver.execute_script(BUTTON_COLOURS)
        if contrast_ratio(colour, background) < 4.5
    ]

"""The review page in a real browser (Debian's chromium and chromium-driver, via Selenium)."""

from __future__ import annotations

from pathlib import Path

import pytest

from browser_helpers import NEEDS_BROWSER, gone, low_contrast_buttons
from clusterednb.cli import main
from service_helpers import Server, call

pytest.importorskip("fastapi", reason="the service extra is not installed")
pytestmark = NEEDS_BROWSER
SCREENSHOT = Path(__file__).resolve().parents[2] / "docs" / "images" / "review-page.png"


def test_sign_in_review_answer_and_filter(tmp_path, capsys, browser):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    org = tmp_path / "org"
    assert main(["meeting", "simulate", "-o", str(org), "--pending", "3"]) == 0
    args = ["meeting", "fit", "--requests", str(org / "requests.csv"), "--store"]
    assert main([*args, str(tmp_path / "none.db"), "--model", str(org / "model.cnb")]) == 0
    store = tmp_path / "store.db"
    assert (
        main(["users", "add", "user03", "--email", "user03@org.example", "--store", str(store)])
        == 0
    )
    token = capsys.readouterr().out.strip().splitlines()[-1]
    extra = (
        "--directory",
        str(org / "directory.json"),
        "--model",
        str(org / "model.cnb"),
        "--ask-band",
        "0.6",
    )
    with Server(store, *extra) as server:
        calendar = (org / "calendars" / "user03.ics").read_bytes()
        assert call(server, "PUT", "/api/calendar", token, calendar, "text/calendar")[0] == 200
        for path in sorted((org / "pending" / "user03").glob("request-*.ics")):
            assert (
                call(server, "POST", "/api/requests", token, path.read_bytes(), "text/calendar")[0]
                == 201
            )
        browser.get(server.url + "/")
        assert browser.current_url.endswith("/login")  # not signed in: the sign-in form
        browser.find_element(By.NAME, "token").send_keys("user03.not-a-token")
        browser.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
        WebDriverWait(browser, 20).until(lambda driver: "not valid" in driver.page_source)
        browser.find_element(By.NAME, "token").send_keys(token)
        browser.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
        wait = WebDriverWait(browser, 20)
        wait.until(lambda driver: driver.find_elements(By.CSS_SELECTOR, "section.card"))
        cards = browser.find_elements(By.CSS_SELECTOR, "section.card")
        assert len(cards) == 3
        assert low_contrast_buttons(browser) == []  # WCAG AA: 4.5:1 for every button's text
        assert browser.find_element(By.ID, "no-passes").text  # no calendar pass yet: said so
        assert "P(accept) = " in cards[0].text and "from " in cards[0].text
        # probabilities as the command line prints them, never a rounded "100%"
        assert "%" not in " ".join(card.text for card in cards)
        SCREENSHOT.parent.mkdir(parents=True, exist_ok=True)
        browser.save_screenshot(str(SCREENSHOT))
        cookie = browser.get_cookie("cnb_session")
        assert cookie["httpOnly"]
        pending = browser.find_element(By.ID, "filter-pending")
        n_pending = int(pending.text.split("(")[1].rstrip(")"))
        assert n_pending >= 1  # the wide ask band makes it ask
        pending.click()
        wait.until(gone(cards[0]))
        asked = browser.find_elements(By.CSS_SELECTOR, "section.card")
        assert len(asked) == n_pending
        asked[0].find_element(By.CSS_SELECTOR, "button.accept").click()
        wait.until(gone(asked[0]))
        assert len(browser.find_elements(By.CSS_SELECTOR, "section.card")) == n_pending - 1
        answered = [r for r in call(server, "GET", "/api/requests", token)[1] if r["answer"]]
        assert [r["answer"] for r in answered] == ["accept"]
        # A form without the session's CSRF token is refused.
        status, answer, _ = call(
            server,
            "POST",
            f"/requests/{answered[0]['id']}/answer",
            None,
            b"accepted=no&csrf=forged",
            "application/x-www-form-urlencoded",
        )
        assert status in (401, 403) and answer["error"]
        errors = [e for e in browser.get_log("browser") if e["level"] == "SEVERE"]
        assert not errors, errors


def test_rules_and_calendar_on_the_page_and_an_expired_request(tmp_path, capsys, browser, radicale):
    """The settings form changes what the API answers; a bad time zone is said on the page;
    the calendar form keeps the password out of the page; an ended meeting shows as expired
    with nothing to click."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait
    from test_service import invitation

    from clusterednb.service.store import ServiceStore

    store = tmp_path / "store.db"
    assert main(["users", "add", "ann", "--email", "ann@org.example", "--store", str(store)]) == 0
    token = capsys.readouterr().out.strip().splitlines()[-1]
    old = invitation("old", "ann@org.example").replace(b"20261104T", b"20261004T")
    with Server(store) as server:
        status, record, _ = call(server, "POST", "/api/requests", token, old, "text/calendar")
        assert status == 201 and record["decision"] == "expired"
        mars = invitation("mars", "ann@org.example").replace(b"America/New_York", b"Mars/Olympus")
        status, noted, _ = call(server, "POST", "/api/requests", token, mars, "text/calendar")
        assert status == 201 and noted["warnings"]
        browser.get(server.url + "/login")
        browser.find_element(By.NAME, "token").send_keys(token)
        browser.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
        wait = WebDriverWait(browser, 20)
        wait.until(lambda driver: driver.find_elements(By.ID, "settings-form"))
        card = browser.find_element(By.ID, f"request-{record['id']}")
        assert "expired: never answered" in card.text
        noted_card = browser.find_element(By.ID, f"request-{noted['id']}")
        assert "Mars/Olympus" in noted_card.text  # the unknown time zone, said on the page
        assert not card.find_elements(By.CSS_SELECTOR, "button.accept")
        form = browser.find_element(By.ID, "settings-form")
        for name, value in (
            ("time_zone", "Europe/Berlin"),
            ("working_hours", "08:30-16:30"),
            ("working_days", "Mon-Thu"),
            ("out_of_office", "2026-12-21..2027-01-01"),
            ("comment", "Answered by my assistant."),
        ):
            field = form.find_element(By.NAME, name)
            field.clear()
            field.send_keys(value)
        form.find_element(By.ID, "save-settings").click()
        wait.until(lambda _: call(server, "GET", "/api/settings", token)[1]["comment"])
        settings = call(server, "GET", "/api/settings", token)[1]
        assert settings["working_hours"] == ["08:30", "16:30"]
        assert settings["working_days"] == [0, 1, 2, 3]
        assert settings["out_of_office"] == [["2026-12-21", "2027-01-01"]]
        assert settings["time_zone"] == "Europe/Berlin"
        form = browser.find_element(By.ID, "settings-form")
        field = form.find_element(By.NAME, "time_zone")
        field.clear()
        field.send_keys("Mars/Olympus")
        form.find_element(By.ID, "save-settings").click()
        wait.until(lambda driver: driver.find_elements(By.ID, "settings-error"))
        assert "unknown time zone" in browser.find_element(By.ID, "settings-error").text
        assert call(server, "GET", "/api/settings", token)[1]["time_zone"] == "Europe/Berlin"
        form = browser.find_element(By.ID, "calendar-form")
        form.find_element(By.NAME, "url").send_keys(radicale)
        form.find_element(By.NAME, "username").send_keys("ann")
        form.find_element(By.NAME, "password").send_keys("page-secret")  # the wrong one
        form.find_element(By.ID, "save-calendar").click()
        wait.until(lambda driver: driver.find_elements(By.ID, "calendar-error"))
        assert "the login was refused" in browser.find_element(By.ID, "calendar-error").text
        assert "page-secret" not in browser.page_source
        form = browser.find_element(By.ID, "calendar-form")
        form.find_element(By.NAME, "url").clear()
        form.find_element(By.NAME, "url").send_keys(radicale)
        form.find_element(By.NAME, "username").clear()
        form.find_element(By.NAME, "username").send_keys("ann")
        form.find_element(By.NAME, "password").send_keys("secret")
        form.find_element(By.ID, "save-calendar").click()
        wait.until(lambda driver: "Forget it" in driver.page_source)
        assert "secret" not in browser.find_element(By.ID, "calendar-form").text
    with ServiceStore(store) as opened:
        (account,) = opened.calendar_accounts()
        assert (account.user, account.username, account.password) == ("ann", "ann", "secret")
    assert oct(store.stat().st_mode)[-3:] == "600"

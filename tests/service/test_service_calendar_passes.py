"""One process serves the API, the page and the calendars: ``cnb serve --sync-every`` runs each
registered person's CalDAV pass (Radicale, aiosmtpd and Chromium started by the tests)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

from browser_helpers import NEEDS_BROWSER
from caldav_helpers import INVITATIONS, USER, server_copy, upload
from clusterednb.cli import main
from clusterednb.meeting.invitation import find_attendee
from service_helpers import Server, call

pytest.importorskip("fastapi", reason="the service extra is not installed")
SECRET = "secret"


def register(tmp_path, store, url, capsys) -> str:
    assert main(["users", "add", "ann", "--email", USER, "--store", str(store)]) == 0
    token = capsys.readouterr().out.strip().splitlines()[-1]
    password = tmp_path / "password"
    password.write_text(SECRET + "\n")
    password.chmod(0o600)
    command = ["users", "calendar", "ann", "--store", str(store), "--caldav", url]
    assert main([*command, "--username", "ann", "--password-file", str(password)]) == 0
    assert "readable by you only" in capsys.readouterr().out
    assert oct(store.stat().st_mode)[-3:] == "600"
    return token


def wait_for(predicate, seconds: float = 60.0):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        found = predicate()
        if found:
            return found
        time.sleep(0.3)
    raise AssertionError("timed out")


def partstat(calendar, uid: str) -> str:
    event = next(iter(server_copy(calendar, uid).walk("VEVENT")))
    return str(find_attendee(event, USER).params["PARTSTAT"])


@NEEDS_BROWSER
def test_asked_on_the_calendar_answered_on_the_page_answered_on_the_calendar(
    radicale,
    smtp,
    setting,
    tmp_path,
    capsys,
    browser,
):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    from clusterednb.service.store import ServiceStore

    inbox, smtp_address = smtp
    _, calendar = upload(radicale, {"ny": INVITATIONS["ny"]})
    store = tmp_path / "service.db"
    token = register(tmp_path, store, radicale, capsys)
    extra = (
        "--model", str(setting / "model.cnb"), "--directory", str(setting / "directory.json"),
        "--ask-band", "100", "--sync-every", "0.02", "--smtp", smtp_address,
        "--from", "assistant@org.example",
    )  # fmt: skip
    with Server(store, *extra) as server:
        (asked,) = wait_for(lambda: call(server, "GET", "/api/requests", token)[1])
        assert asked["decision"] == "ask" and partstat(calendar, "ny") == "NEEDS-ACTION"
        browser.get(server.url + "/login")
        browser.find_element(By.NAME, "token").send_keys(token)
        browser.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
        wait = WebDriverWait(browser, 20)
        wait.until(lambda driver: driver.find_elements(By.CSS_SELECTOR, "section.card"))
        card = browser.find_element(By.ID, f"request-{asked['id']}")
        card.find_element(By.CSS_SELECTOR, "button.accept").click()
        wait.until(lambda driver: "you: accept" in driver.page_source)
        wait_for(lambda: partstat(calendar, "ny") == "ACCEPTED")
        wait_for(lambda: len(inbox.messages) == 1)
        assert inbox.messages[0]["To"] == "boss@org.example"
        time.sleep(3)  # more rounds of passes send nothing again
        assert len(inbox.messages) == 1
        browser.get(server.url + "/")  # the person's passes, on the page
        row = wait.until(lambda driver: driver.find_element(By.ID, "pass-calendar"))
        assert radicale in row.text and "0 replies to send, 0 answers to write" in row.text
        assert "failing" not in row.text
        log = server.log.read_text()
        assert "calendar pass for ann" in log and SECRET not in log
        for path in ("/api/status", "/api/settings", "/api/requests"):
            assert SECRET not in json.dumps(call(server, "GET", path, token)[1])
    with ServiceStore(store) as opened:
        assert [(r["uid"], r["answer"]) for r in opened.answered()] == [("ny", "accept")]


def test_the_settings_and_a_store_others_can_read(radicale, setting, tmp_path, capsys):
    store = tmp_path / "service.db"
    register(tmp_path, store, radicale, capsys)
    store.chmod(0o644)
    command = [sys.executable, "-m", "clusterednb.cli", "serve", "--store", str(store)]
    done = subprocess.run(
        [*command, "--sync-every", "1"], capture_output=True, text=True, timeout=60,
        env={**os.environ},
    )  # fmt: skip
    assert done.returncode == 1
    assert "other accounts may read it" in done.stderr and "chmod 600" in done.stderr
    assert SECRET not in done.stderr + done.stdout
    assert main(["users", "calendar", "ann", "--store", str(store), "--remove"]) == 0
    assert "removed ann's calendar account" in capsys.readouterr().out

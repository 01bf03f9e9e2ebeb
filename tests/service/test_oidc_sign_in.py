"""Sign-in with the organisation's OpenID Connect provider (issue 51), end to end: a real
``cnb serve`` over a real store, a real provider (oidc-provider from the npm registry, on
another site than the service) and Debian's Chromium clicking through both.

The provider hands out a faulty ID token for three logins (expired, issued to another
client, changed after signing): what a broken or hostile provider would send. Nothing of the
protocol is mocked.
"""

from __future__ import annotations

import sqlite3
import urllib.request

import pytest

from browser_helpers import NEEDS_BROWSER, gone
from oidc_helpers import NEEDS_NODE, Provider
from service_helpers import Server, call

pytestmark = [NEEDS_BROWSER, NEEDS_NODE, pytest.mark.xdist_group("oidc")]

PEOPLE = {
    "ann": "ann@example.org",
    "boss": "admin.boss@example.org",
    "exp": "expired@example.org",
    "aud": "wrongaud@example.org",
    "tam": "tampered@example.org",
    "unv": "unverified@example.org",
}


@pytest.fixture(scope="module")
def organisation(tmp_path_factory):
    """The service with its people, signed in through the provider: ``(server, provider,
    tokens)``."""
    from clusterednb.service.store import ServiceStore

    directory = tmp_path_factory.mktemp("oidc")
    store_path = directory / "service.db"
    with ServiceStore(store_path) as store:
        tokens = {user: store.add_user(user, email) for user, email in PEOPLE.items()}
    server = Server(store_path)
    with Provider(directory, f"{server.url}/auth/callback", f"{server.url}/login") as provider:
        server.extra = ("--sync-every", "0", *provider.options())
        with server:
            yield server, provider, tokens


def _sign_in(browser, server, login: str) -> str:
    """Click "Sign in with your organisation", sign in at the provider as ``login`` and
    consent; return the page the browser lands on."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as shown
    from selenium.webdriver.support.ui import WebDriverWait

    browser.execute_cdp_cmd("Network.clearBrowserCookies", {})
    browser.get(f"{server.url}/login")
    browser.find_element(By.ID, "organisation-sign-in").click()
    wait = WebDriverWait(browser, 20)
    wait.until(shown.presence_of_element_located((By.NAME, "login")))
    assert browser.current_url.startswith("http://localhost:")  # the provider's site
    browser.find_element(By.NAME, "login").send_keys(login)
    browser.find_element(By.NAME, "password").send_keys("any password")
    sign_in = browser.find_element(By.CSS_SELECTOR, "button[type=submit]")
    sign_in.click()
    # the login page must be gone first: its own button would otherwise pass for the
    # consent page's, and the consent would go unclicked (a CI run timed out so)
    wait.until(gone(sign_in))
    wait.until(shown.presence_of_element_located((By.CSS_SELECTOR, "button[type=submit]")))
    if "Authorize" in browser.title or "consent" in browser.page_source:
        browser.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
    wait.until(lambda driver: driver.current_url.startswith(server.url))
    wait.until(
        lambda driver: (
            "/auth/callback" not in driver.current_url or "Not signed in" in driver.page_source
        )
    )
    return browser.page_source


def _session_cookie(browser) -> str | None:
    found = browser.get_cookie("cnb_session")
    return found["value"] if found else None


def _people_and_sessions(server) -> tuple[int, int]:
    with sqlite3.connect(server.store) as db:
        return db.execute("SELECT count(*), (SELECT count(*) FROM sessions) FROM users").fetchone()


def _get(server, path: str, cookie: str) -> int:
    """The status of a GET carrying the session cookie, redirects not followed."""

    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args, **kwargs):
            return None

    opener = urllib.request.build_opener(NoRedirect)
    request = urllib.request.Request(server.url + path, headers={"Cookie": f"cnb_session={cookie}"})
    try:
        with opener.open(request, timeout=30) as response:
            return response.status
    except urllib.error.HTTPError as error:
        return error.code


def test_a_person_signs_in_through_the_provider_and_out_of_both(organisation, browser):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    server, provider, _ = organisation
    page = _sign_in(browser, server, PEOPLE["ann"])
    assert browser.current_url == f"{server.url}/", page[:500]
    assert "ann@example.org" in page and "Sign out" in page
    cookie = _session_cookie(browser)
    assert cookie and _get(server, "/", cookie) == 200
    assert _get(server, "/admin", cookie) == 403  # not in the administrators' group
    with sqlite3.connect(server.store) as db:
        assert db.execute("SELECT via FROM sessions WHERE user = 'ann'").fetchall() == [("oidc",)]

    browser.find_element(By.XPATH, "//button[text()='Sign out']").click()
    wait = WebDriverWait(browser, 20)
    wait.until(lambda driver: driver.current_url.startswith(provider.issuer))  # its logout
    browser.find_element(By.CSS_SELECTOR, "button[autofocus], button[value=yes]").click()
    wait.until(lambda driver: driver.current_url.startswith(f"{server.url}/login"))
    assert _get(server, "/", cookie) == 303  # the replayed cookie opens nothing
    with sqlite3.connect(server.store) as db:
        assert db.execute("SELECT count(*) FROM sessions WHERE user = 'ann'").fetchone() == (0,)
    # the provider's session ended too: signing in again asks for the login
    browser.find_element(By.ID, "organisation-sign-in").click()
    wait.until(lambda driver: driver.find_elements(By.NAME, "login"))


def test_the_admin_group_administers_and_no_one_else(organisation, browser):
    server, _, _ = organisation
    page = _sign_in(browser, server, PEOPLE["boss"])
    assert browser.current_url == f"{server.url}/", page[:500]
    assert _get(server, "/admin", _session_cookie(browser)) == 200
    browser.get(f"{server.url}/admin")
    assert "ann@example.org" in browser.page_source  # everyone's assistant


@pytest.mark.parametrize(
    ("login", "status", "says"),
    [
        ("eve@example.org", 403, "eve@example.org has no assistant here"),
        (PEOPLE["unv"], 403, "did not verify the address"),
        (PEOPLE["exp"], 400, "expired"),
        (PEOPLE["aud"], 400, "aud"),
        (PEOPLE["tam"], 400, "Sign-in failed"),
    ],
    ids=["unknown-email", "unverified-email", "expired-id-token", "wrong-aud", "tampered"],
)
def test_a_refused_sign_in_opens_nothing(organisation, browser, login, status, says):
    server, _, _ = organisation
    before = _people_and_sessions(server)
    page = _sign_in(browser, server, login)
    assert "Not signed in" in page and says in page, page[:1500]
    assert _session_cookie(browser) is None
    assert _people_and_sessions(server) == before  # no account made, no session opened
    last_callback = server.log.read_text().split("GET /auth/callback")[-1]
    assert f" {status} " in last_callback.splitlines()[0]


def test_tokens_still_open_the_api_and_not_the_page(organisation):
    server, _, tokens = organisation
    assert call(server, "GET", "/api/requests", tokens["ann"])[0] == 200
    status, body, _ = call(
        server,
        "POST",
        "/login",
        body=b"token=" + tokens["ann"].encode(),
        content_type="application/x-www-form-urlencoded",
    )
    assert status == 403 and b"Sign in with your organisation" in body
    # a callback nobody started (no state kept): refused as a bad request, never a 5xx
    status, body, _ = call(server, "GET", "/auth/callback?code=made-up&state=made-up")
    assert status == 400 and b"Sign-in failed" in body

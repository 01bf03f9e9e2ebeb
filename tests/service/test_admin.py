"""The administrator's page (issue 51, one part), through a real uvicorn server: every person
with their registration, last passes, what waits and what was learnt; adding and removing a
person; running one person's pass now; anyone's record for an administrator and nobody
else's for anyone else; 403 for a person who does not administer."""

from __future__ import annotations

import re

import httpx
import pytest
from test_service import add_user, invitation, world  # noqa: F401  (a module fixture)

from clusterednb.cli import main
from service_helpers import Server, call

pytest.importorskip("fastapi", reason="the service extra is not installed")


def _signed_in(server: Server, token: str) -> tuple[httpx.Client, str]:
    """A browser session of ``token``'s person and the CSRF token its pages carry."""
    browser = httpx.Client(base_url=server.url)
    assert browser.post("/login", data={"token": token}).status_code == 303
    csrf = re.search(r'name="csrf" value="([^"]+)"', browser.get("/").text).group(1)
    return browser, csrf


def test_an_administrator_sees_and_runs_everyones_assistant(world, tmp_path, capsys):  # noqa: F811
    store = tmp_path / "store.db"
    ann = add_user(store, "user03", capsys)
    boss = add_user(store, "boss", capsys, "--admin")
    password = tmp_path / "password"
    password.write_text("secret\n")
    password.chmod(0o600)
    store.chmod(0o600)
    register = ["users", "calendar", "user03", "--store", str(store), "--caldav"]
    assert (
        main(
            [
                *register,
                "http://127.0.0.1:9/dav/",
                "--username",
                "ann",
                "--password-file",
                str(password),
                "--no-check",
            ]
        )
        == 0
    )
    extra = ("--directory", str(world / "directory.json"), "--model", str(world / "model.cnb"))
    with Server(store, *extra, "--sync-every", "0") as server:
        call(
            server,
            "POST",
            "/api/requests",
            ann,
            invitation("m1", "user03@org.example"),
            "text/calendar",
        )
        admin, csrf = _signed_in(server, boss)
        page = admin.get("/admin")
        assert page.status_code == 200
        assert 'id="person-user03"' in page.text and "calendar http://127.0.0.1:9/dav/" in page.text
        assert "secret" not in page.text  # no password, ever

        ran = admin.post("/admin/users/user03/pass", data={"csrf": csrf})
        assert ran.status_code == 303
        page = admin.get("/admin").text
        row = page.split('id="person-user03"')[1].split("</tr>")[0]
        assert "failing: cannot use the CalDAV server http://127.0.0.1:9/dav/" in row

        added = admin.post(
            "/admin/users", data={"csrf": csrf, "user": "cy", "email": "cy@org.example"}
        )
        token = re.search(r"<code>(cy\.[^<]+)</code>", added.text).group(1)
        assert call(server, "GET", "/api/status", token)[0] == 200
        assert (
            admin.post(
                "/admin/users", data={"csrf": "forged", "user": "dan", "email": "d@o.example"}
            ).status_code
            == 403
        )
        assert admin.post("/admin/users/cy/remove", data={"csrf": csrf}).status_code == 303
        assert call(server, "GET", "/api/status", token)[0] == 401

        status, entries, _ = call(server, "GET", "/api/activity?user=user03", boss)
        assert status == 200 and [e["uid"] for e in entries] == ["m1"]
        record = admin.get("/admin/activity/user03").text
        assert 'id="activity-table"' in record and "Budget review" in record
        assert entries[0]["action"] in record
        status, body, _ = call(server, "GET", "/api/activity?user=boss", ann)
        assert status == 403 and "administrator" in body["error"]
        assert call(server, "GET", "/api/activity?user=nobody", boss)[0] == 404

        person, person_csrf = _signed_in(server, ann)
        assert person.get("/admin").status_code == 403
        assert person.get("/admin/activity/user03").status_code == 403
        assert (
            person.post(
                "/admin/users", data={"csrf": person_csrf, "user": "x", "email": "x@o.example"}
            ).status_code
            == 403
        )
        admin.close()
        person.close()


def test_a_person_makes_and_revokes_their_own_tokens(world, tmp_path, capsys):  # noqa: F811
    store = tmp_path / "store.db"
    ann = add_user(store, "user03", capsys)
    bob = add_user(store, "user05", capsys)
    extra = ("--directory", str(world / "directory.json"), "--model", str(world / "model.cnb"))
    with Server(store, *extra) as server:
        person, csrf = _signed_in(server, ann)
        made = person.post("/tokens", data={"csrf": csrf, "name": "calendar script"})
        token = re.search(r"<code>(user03\.p\d+\.[^<]+)</code>", made.text).group(1)
        assert call(server, "GET", "/api/status", token)[0] == 200
        assert call(server, "GET", "/api/settings", token)[0] == 200
        token_id = int(token.split(".")[1][1:])
        page = person.get("/").text
        assert "calendar script" in page and token not in page  # shown once, never again
        assert person.post("/tokens", data={"csrf": "forged", "name": "x"}).status_code == 403
        assert person.post("/tokens", data={"csrf": csrf, "name": "  "}).status_code == 400

        other, other_csrf = _signed_in(server, bob)  # not bob's to revoke
        refused = other.post(f"/tokens/{token_id}/revoke", data={"csrf": other_csrf})
        assert refused.status_code == 404
        assert call(server, "GET", "/api/status", token)[0] == 200
        forged = token.rsplit(".", 1)[0] + ".not-the-secret"
        assert call(server, "GET", "/api/status", forged)[0] == 401

        revoked = person.post(f"/tokens/{token_id}/revoke", data={"csrf": csrf})
        assert revoked.status_code == 303
        assert call(server, "GET", "/api/status", token)[0] == 401
        assert call(server, "GET", "/api/status", ann)[0] == 200  # the first token stays
        person.close()
        other.close()

"""The organisation's sign-in as configured (issue 51): its flags, its secret file, the
sessions it opens, and a store of schema 5 brought to 6. The protocol itself is tested end to
end in ``test_oidc_sign_in.py``."""

from __future__ import annotations

import sqlite3
import subprocess
import sys

import pytest

from clusterednb.examples import service as toy
from clusterednb.meeting.errors import MeetingError
from clusterednb.service.sign_in.provider import (
    OidcSettings,
    SignInRefused,
    person_of,
    read_secret,
)
from clusterednb.service.store import SCHEMA_VERSION, ServiceStore


def _cnb(*arguments: str) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "clusterednb.cli", *arguments]
    return subprocess.run(command, capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize(
    ("flags", "says"),
    [
        (["--oidc-client-id", "cnb"], "the --oidc-* options need --oidc-issuer URL"),
        (["--oidc-issuer", "idp.example.org"], "--oidc-issuer must be an http(s) URL"),
        (["--oidc-issuer", "https://idp.example.org"], "needs --oidc-client-id"),
        (
            ["--oidc-issuer", "https://idp.example.org", "--oidc-client-id", "cnb"],
            "needs --oidc-client-secret-file",
        ),
    ],
)
def test_cnb_serve_refuses_an_incomplete_provider(tmp_path, flags, says):
    done = _cnb("serve", "--store", str(tmp_path / "s.db"), *flags)
    assert done.returncode != 0 and says in done.stderr, done.stderr
    assert not (tmp_path / "s.db").exists()  # refused before anything was made


def test_the_client_secret_comes_from_a_private_file_and_is_never_shown(tmp_path):
    secret = tmp_path / "secret"
    with pytest.raises(MeetingError, match="is not a file"):
        read_secret(secret)
    secret.write_text("  \n")
    secret.chmod(0o600)
    with pytest.raises(MeetingError, match="is empty"):
        read_secret(secret)
    secret.write_text("the-secret\n")
    secret.chmod(0o640)
    with pytest.raises(MeetingError, match="other accounts may read it"):
        read_secret(secret)
    secret.chmod(0o600)
    settings = OidcSettings.from_options("https://idp.example.org/", "cnb", secret, "")
    assert settings.client_secret == "the-secret" and settings.admin_group is None
    assert "the-secret" not in repr(settings) and "the-secret" not in str(settings)
    done = _cnb("serve", "--store", str(tmp_path / "s.db"), "--oidc-issuer", "ftp://x")
    assert "the-secret" not in done.stderr + done.stdout


def test_claims_open_only_a_known_verified_person(tmp_path):
    store, _ = toy.service_store()
    ok = {"email": "bob@example.org", "email_verified": True}
    assert person_of(store, ok, None)[0].user == "bob"
    assert person_of(store, {**ok, "groups": ["cnb-admins"]}, "cnb-admins")[1] is True
    assert person_of(store, {**ok, "groups": "cnb-admins"}, "cnb-admins")[1] is False  # a list
    assert person_of(store, {**ok, "groups": ["cnb-admins"]}, None)[1] is False
    entra = {"email": "bob@example.org", "xms_edov": True}  # Microsoft's verified-domain claim
    assert person_of(store, entra, None)[0].user == "bob"
    for claims, says in [
        ({"email_verified": True}, "no email address"),
        ({"email": "bob@example.org"}, "did not verify"),
        ({"email": "bob@example.org", "email_verified": "true"}, "did not verify"),
    ]:
        with pytest.raises(SignInRefused, match=says):
            person_of(store, claims, None)
    store.add_user("bob2", "BOB@example.org")
    with pytest.raises(SignInRefused, match="more than one person"):
        person_of(store, ok, None)
    store.revoke("bob2")
    assert person_of(store, ok, None)[0].user == "bob"  # a revoked account is not a person
    assert store.counts()["users"] == 2  # ann and bob: nothing was made


def test_a_store_of_schema_5_gains_how_sessions_were_opened(tmp_path):
    path = tmp_path / "old.db"
    with ServiceStore(path) as store:
        store.add_user("ann", "ann@example.org")
        old_session, _ = store.open_session("ann")
    with sqlite3.connect(path) as connection:
        connection.execute("ALTER TABLE sessions DROP COLUMN admin")
        connection.execute("ALTER TABLE sessions DROP COLUMN via")
        connection.execute("PRAGMA user_version=5")
    with ServiceStore(path) as store:
        assert store.session(old_session)[0].user == "ann"  # a session of before goes on
        assert store.close_session(old_session) == "token"
        session, _ = store.open_session("ann", admin=True, via="oidc")
        assert store.session(session)[0].admin and not store.users()[0].admin
    with sqlite3.connect(path) as connection:
        assert connection.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 6


def test_a_provider_that_does_not_answer_is_a_page_not_a_crash(tmp_path):
    from service_helpers import Server, call, free_port

    secret = tmp_path / "secret"
    secret.write_text("the-secret\n")
    secret.chmod(0o600)
    issuer = f"http://127.0.0.1:{free_port()}"  # nobody listens there
    flags = ["--oidc-issuer", issuer, "--oidc-client-id", "cnb"]
    with Server(tmp_path / "s.db", *flags, "--oidc-client-secret-file", str(secret)) as server:
        status, body, _ = call(server, "GET", "/login")
        assert status == 200 and b"Sign in with your organisation" in body
        status, body, _ = call(server, "GET", "/auth/login")
        assert status == 503 and b"did not answer" in body
        status, body, _ = call(server, "GET", "/auth/callback?error=access_denied&state=x")
        assert status == 400 and b"Sign-in failed" in body
    assert "the-secret" not in server.log.read_text()

"""Real servers for the calendar tests, started on 127.0.0.1 and stopped by the tests:
Radicale (CalDAV) and aiosmtpd (SMTP); and the model and directory of a small organisation.
The fixtures are registered by ``conftest.py``."""

from __future__ import annotations

import email
import json
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import numpy as np
import pytest

from clusterednb.meeting.directory import Directory, UserEntry
from service_helpers import free_port

USER = "ann@org.example"


def wait_until_answering(url: str, tries: int = 100) -> None:
    """Wait (0.1 s a try) until an HTTP server just started answers at ``url``."""
    for _ in range(tries):
        try:
            urllib.request.urlopen(url, timeout=1)
            return
        except urllib.error.HTTPError:
            return  # it answers, if not with 200
        except OSError:
            time.sleep(0.1)


@pytest.fixture
def radicale(tmp_path):
    users = tmp_path / "users"
    users.write_text("ann:secret\n")
    port = free_port()
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "radicale",
            "--server-hosts",
            f"127.0.0.1:{port}",
            "--storage-filesystem-folder",
            str(tmp_path / "collections"),
            "--auth-type",
            "htpasswd",
            "--auth-htpasswd-filename",
            str(users),
            "--auth-htpasswd-encryption",
            "plain",
            "--rights-type",
            "owner_only",
            "--logging-level",
            "warning",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}/"
    wait_until_answering(url)
    yield url
    process.terminate()
    process.wait(timeout=30)


@pytest.fixture
def smtp():
    from aiosmtpd.controller import Controller

    class Inbox:
        def __init__(self) -> None:
            self.messages: list[email.message.Message] = []

        async def handle_DATA(self, server, session, envelope):
            self.messages.append(email.message_from_bytes(envelope.content))
            return "250 OK"

    inbox = Inbox()
    controller = Controller(inbox, hostname="127.0.0.1", port=free_port())
    controller.start()
    yield inbox, f"127.0.0.1:{controller.port}"
    controller.stop()


@pytest.fixture(scope="module")
def setting(tmp_path_factory):
    from clusterednb import ClusteredNB
    from clusterednb.meeting import FEATURE_NAMES, meeting_schema, simulate_organisation

    folder = tmp_path_factory.mktemp("sync")
    requests = simulate_organisation(np.random.default_rng(0)).requests
    model = ClusteredNB(inference="bhc", schema=meeting_schema(), progress=False).fit(
        requests[list(FEATURE_NAMES)], requests["accepted"], requests["user"]
    )
    model.save(folder / "model.cnb")
    Directory(
        jobs={"boss@org.example": "administrator"},
        users={
            "ann": UserEntry(
                USER,
                "America/New_York",
                "Building 32",
                {"boss@org.example": "supervisor"},
                {"budget": "critical"},
            )
        },
    ).to_json(folder / "directory.json")
    return folder


DOVECOT_CONF = """base_dir = {folder}/run
state_dir = {folder}/run
log_path = {folder}/dovecot.log
listen = 127.0.0.1
protocols = imap
ssl = required
ssl_cert = <{folder}/cert.pem
ssl_key = <{folder}/key.pem
disable_plaintext_auth = yes
auth_mechanisms = plain login xoauth2
passdb {{
  driver = oauth2
  mechanisms = xoauth2
  args = {folder}/oauth2.conf.ext
}}
passdb {{
  driver = passwd-file
  args = scheme=PLAIN {folder}/users
}}
userdb {{
  driver = static
  args = uid=dovecot gid=dovecot home={folder}/home/%u
}}
mail_location = maildir:~/Maildir
first_valid_uid = 1
service imap-login {{
  chroot =
  inet_listener imap {{
    address = 127.0.0.1
    port = {imap}
  }}
  inet_listener imaps {{
    address = 127.0.0.1
    port = {imaps}
    ssl = yes
  }}
}}
service anvil {{
  chroot =
}}
"""


OAUTH2_CONF = """introspection_mode = post
introspection_url = http://127.0.0.1:{port}/introspect
username_attribute = username
active_attribute = active
active_value = true
"""


def introspection_server(token: str):
    """An OAuth 2 token introspection endpoint (RFC 7662) on 127.0.0.1 that knows one token,
    as Dovecot's oauth2 passdb asks it; returns the server (serving in a thread)."""
    import http.server
    import threading
    import urllib.parse

    class Introspection(http.server.BaseHTTPRequestHandler):
        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("Content-Length", 0))).decode()
            active = urllib.parse.parse_qs(body).get("token", [""])[0] == token
            answer = {"active": True, "username": USER} if active else {"active": False}
            data = json.dumps(answer).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *_):
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), Introspection)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


class Mailbox:
    """A Dovecot server on 127.0.0.1 with one account (``USER``, password ``secret``, or the
    OAuth token ``token`` by XOAUTH2): IMAPS on ``imaps``, STARTTLS on ``imap``, a throw-away
    certificate in ``cert``."""

    def __init__(self, folder, imap: int, imaps: int, token: str) -> None:
        self.folder, self.imap, self.imaps, self.token = folder, imap, imaps, token
        self.cert = folder / "cert.pem"

    def connect(self):
        import imaplib
        import ssl

        context = ssl.create_default_context(cafile=str(self.cert))
        connection = imaplib.IMAP4_SSL("127.0.0.1", self.imaps, ssl_context=context)
        connection.login(USER, "secret")
        connection.select("INBOX")
        return connection

    def deliver(self, *messages: bytes) -> None:
        connection = self.connect()
        for message in messages:
            connection.append("INBOX", "", None, message)
        connection.logout()

    def flags(self) -> dict[str, set[str]]:
        """Each message's flags, by its Message-ID."""
        import email

        connection = self.connect()
        found = {}
        _, data = connection.uid("SEARCH", None, "ALL")
        for uid in data[0].split():
            _, parts = connection.uid("FETCH", uid, "(FLAGS BODY.PEEK[HEADER.FIELDS (MESSAGE-ID)])")
            head = parts[0]
            flags = head[0].decode().split("FLAGS (")[1].split(")")[0].split()
            message_id = email.message_from_bytes(head[1])["Message-ID"]
            found[message_id] = set(flags)
        connection.logout()
        return found


@pytest.fixture
def dovecot():
    """Debian's Dovecot in a temporary folder (it must be readable by Dovecot's own users)."""
    import os
    import secrets
    import shutil
    import socket
    import tempfile
    from pathlib import Path

    if shutil.which("dovecot") is None:
        pytest.skip("Debian's dovecot-imapd is not installed")
    if os.geteuid() != 0:
        pytest.skip("Dovecot's test set-up runs as root (its users own the mail)")
    folder = Path(tempfile.mkdtemp(prefix="cnb-dovecot-"))
    folder.chmod(0o755)
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj",
         "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1", "-keyout",
         str(folder / "key.pem"), "-out", str(folder / "cert.pem")],
        check=True, capture_output=True,
    )  # fmt: skip
    (folder / "users").write_text(f"{USER}:{{PLAIN}}secret\n")
    (folder / "home").mkdir()
    shutil.chown(folder / "home", "dovecot", "dovecot")
    (folder / "run").mkdir()
    imap, imaps = free_port(), free_port()
    token = secrets.token_urlsafe(24)
    introspection = introspection_server(token)
    (folder / "oauth2.conf.ext").write_text(OAUTH2_CONF.format(port=introspection.server_port))
    config = folder / "dovecot.conf"
    config.write_text(DOVECOT_CONF.format(folder=folder, imap=imap, imaps=imaps))
    process = subprocess.Popen(
        ["dovecot", "-F", "-c", str(config)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    for _ in range(100):
        try:
            socket.create_connection(("127.0.0.1", imaps), timeout=1).close()
            break
        except OSError:
            if process.poll() is not None:
                pytest.fail(f"dovecot did not start: {process.stderr.read().decode()}")
            time.sleep(0.1)
    yield Mailbox(folder, imap, imaps, token)
    process.terminate()
    process.wait(timeout=30)
    introspection.shutdown()
    shutil.rmtree(folder, ignore_errors=True)


ADDRESS_SET = """<?xml version="1.0" encoding="utf-8"?>
<D:propertyupdate xmlns:D="DAV:" xmlns:C="urn:ietf:params:xml:ns:caldav">
<D:set><D:prop><C:calendar-user-address-set><D:href>mailto:{email}</D:href>
</C:calendar-user-address-set></D:prop></D:set></D:propertyupdate>"""


@pytest.fixture
def xandikos_scheduling(tmp_path, smtp):
    """Xandikos (a CalDAV server that schedules, RFC 6638) on 127.0.0.1, single-user, with
    ``USER`` as its principal's calendar address and its iMIP going to the ``smtp`` sink;
    yields its URL."""
    import shutil

    binary = shutil.which("xandikos") or str(Path(sys.executable).with_name("xandikos"))
    if not Path(binary).exists():
        pytest.skip("xandikos is not installed")
    _, smtp_address = smtp
    smtp_port = smtp_address.rpartition(":")[2]
    port = free_port()
    process = subprocess.Popen(
        [binary, "serve", "-d", str(tmp_path / "xandikos"), "--defaults", "-l", "127.0.0.1",
         "-p", str(port), "--imip-send", "smtp", "--smtp-host", "127.0.0.1", "--smtp-port",
         smtp_port, "--smtp-from", "xandikos@org.example", "--state-dir",
         str(tmp_path / "xandikos-state")],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}/"
    wait_until_answering(url)
    request = urllib.request.Request(
        url + "user/",
        data=ADDRESS_SET.format(email=USER).encode(),
        method="PROPPATCH",
        headers={"Content-Type": "application/xml; charset=utf-8"},
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        assert response.status == 207
    yield url
    process.terminate()
    process.wait(timeout=30)

"""Real servers for the calendar tests, started on 127.0.0.1 and stopped by the tests:
Radicale (CalDAV) and aiosmtpd (SMTP); and the model and directory of a small organisation.
The fixtures are registered by ``conftest.py``."""

from __future__ import annotations

import email
import subprocess
import sys
import time
import urllib.error
import urllib.request

import numpy as np
import pytest

from clusterednb.meeting.directory import Directory, UserEntry
from service_helpers import free_port

USER = "ann@org.example"


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
    for _ in range(100):
        try:
            urllib.request.urlopen(url, timeout=1)
            break
        except urllib.error.HTTPError:
            break
        except OSError:
            time.sleep(0.1)
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

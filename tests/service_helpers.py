"""A real ``cnb serve`` on 127.0.0.1 for the tests, and a small HTTP client (stdlib only)."""

from __future__ import annotations

import json
import os
import random
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

CHOSEN_PORTS = (20_000, 32_000)
"""Where :func:`free_port` looks: below the kernel's ephemeral range (32768–60999 on Linux),
from which outgoing connections take their source ports. A port the kernel hands out as
ephemeral can be taken by any client before the test's server binds it (it happened: "address
already in use"); one below the range only by another server."""
_PICK = random.Random(os.getpid())  # the two pytest workers look in different orders


def _ephemeral_low() -> int:
    try:
        return int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 32_768


def free_port() -> int:
    """A port of 127.0.0.1 that nothing holds now, below the ephemeral range (the kernel's
    own choice where that range starts lower than :data:`CHOSEN_PORTS` ends)."""
    low, high = CHOSEN_PORTS
    if _ephemeral_low() > high:
        for _ in range(200):
            port = _PICK.randrange(low, high)
            with socket.socket() as sock:
                try:
                    sock.bind(("127.0.0.1", port))
                except OSError:
                    continue
                return port
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class PortTaken(RuntimeError):
    """The server could not bind its port: another process took it first."""


class Server:
    """``cnb serve`` in a subprocess; stops by itself when the test ends."""

    def __init__(self, store: Path, *extra: str) -> None:
        self.store, self.extra = store, extra
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.process: subprocess.Popen | None = None
        self.log = store.with_suffix(".log")

    def start(self, timeout: float = 60.0, attempts: int = 3) -> Server:
        """Start and wait for ``/healthz``. A port taken between :func:`free_port` and the
        server's bind (another process's ephemeral port) is replaced by a fresh one, at most
        ``attempts`` times in all."""
        for attempt in range(attempts):
            try:
                return self._start_once(timeout)
            except PortTaken:
                if attempt == attempts - 1:
                    raise
                self.port = free_port()
                self.url = f"http://127.0.0.1:{self.port}"
        raise AssertionError("unreachable")

    def _start_once(self, timeout: float) -> Server:
        command = [
            sys.executable,
            "-m",
            "clusterednb.cli",
            "serve",
            "--store",
            str(self.store),
            "--port",
            str(self.port),
            *self.extra,
        ]
        self.process = subprocess.Popen(
            command,
            stdout=self.log.open("ab"),
            stderr=subprocess.STDOUT,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                said = self.log.read_text()[-2000:]
                self.process = None
                if "address already in use" in said:
                    raise PortTaken(said)
                raise RuntimeError(f"server exited: {said}")
            try:
                if call(self, "GET", "/healthz")[0] == 200:
                    return self
            except OSError:
                time.sleep(0.2)
        raise RuntimeError("server did not start in time")

    def stop(self, sig: int = signal.SIGTERM) -> int:
        if self.process is None:
            return 0
        self.process.send_signal(sig)
        try:
            return self.process.wait(timeout=30)
        finally:
            self.process = None

    def __enter__(self) -> Server:
        return self.start()

    def __exit__(self, *_: object) -> None:
        if self.process is not None:
            self.process.kill()
            self.process.wait()


def call(
    server: Server,
    method: str,
    path: str,
    token: str | None = None,
    body: bytes | dict | None = None,
    content_type: str | None = None,
    timeout: float = 30.0,
) -> tuple[int, Any, dict[str, str]]:
    """``(status, parsed JSON or bytes, headers)`` of one request."""
    headers = {}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    if isinstance(body, dict):
        body, content_type = json.dumps(body).encode(), "application/json"
    if content_type:
        headers["Content-Type"] = content_type
    request = urllib.request.Request(server.url + path, data=body, method=method, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            status, data, head = response.status, response.read(), dict(response.headers)
    except urllib.error.HTTPError as error:
        status, data, head = error.code, error.read(), dict(error.headers)
    if head.get("content-type", "").startswith("application/json"):
        return status, json.loads(data), head
    return status, data, head

"""Load on ``POST /api/requests``: requests per second and p50/p99 latency, on 127.0.0.1.

Starts ``cnb serve`` on the simulated organisation (its directory and model), creates one
user, then 8 client threads post distinct invitations (2 000 in all, bounded to 120 s) and
the server is stopped. Usage: python benchmarks/bench_service.py [--posts N] [--clients C]
"""

from __future__ import annotations

import argparse
import os
import platform
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

INVITATION = """BEGIN:VCALENDAR\r
VERSION:2.0\r
PRODID:bench\r
METHOD:REQUEST\r
BEGIN:VEVENT\r
UID:{uid}\r
SEQUENCE:0\r
DTSTAMP:20261101T120000Z\r
DTSTART;TZID=America/Los_Angeles:20261104T{hour:02d}0000\r
DTEND;TZID=America/Los_Angeles:20261104T{hour:02d}3000\r
SUMMARY:budget review\r
ORGANIZER:mailto:guest1@outside.example\r
ATTENDEE;PARTSTAT=NEEDS-ACTION:mailto:user03@org.example\r
END:VEVENT\r
END:VCALENDAR\r
"""


def _cnb(*args: str) -> str:
    command = [sys.executable, "-m", "clusterednb.cli", *args]
    return subprocess.run(command, check=True, capture_output=True, text=True).stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--posts", type=int, default=2000)
    parser.add_argument("--clients", type=int, default=8)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp())
    org = folder / "org"
    _cnb("meeting", "simulate", "-o", str(org), "--pending", "1")
    _cnb(
        "meeting",
        "fit",
        "--requests",
        str(org / "requests.csv"),
        "--store",
        str(folder / "none.db"),
        "--model",
        str(org / "model.cnb"),
    )
    store = folder / "store.db"
    token = _cnb(
        "users", "add", "user03", "--email", "user03@org.example", "--store", str(store)
    ).strip()
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "clusterednb.cli",
            "serve",
            "--store",
            str(store),
            "--port",
            str(port),
            "--directory",
            str(org / "directory.json"),
            "--model",
            str(org / "model.cnb"),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=os.environ.copy(),
    )
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(300):
            try:
                urllib.request.urlopen(url + "/healthz", timeout=1)
                break
            except OSError:
                time.sleep(0.2)
        calendar = (org / "calendars" / "user03.ics").read_bytes()
        headers = {"Authorization": f"Bearer {token}", "Content-Type": "text/calendar"}
        urllib.request.urlopen(
            urllib.request.Request(
                url + "/api/calendar", data=calendar, method="PUT", headers=headers
            )
        )
        deadline = time.monotonic() + 120

        def post(index: int) -> float | None:
            if time.monotonic() > deadline:
                return None
            body = INVITATION.format(uid=f"bench-{index}", hour=8 + index % 9).encode()
            request = urllib.request.Request(url + "/api/requests", data=body, headers=headers)
            started = time.perf_counter()
            with urllib.request.urlopen(request, timeout=30) as response:
                assert response.status == 201
            return time.perf_counter() - started

        started = time.perf_counter()
        with ThreadPoolExecutor(args.clients) as pool:
            latencies = [t for t in pool.map(post, range(args.posts)) if t is not None]
        elapsed = time.perf_counter() - started
    finally:
        server.terminate()
        server.wait(timeout=30)
    latencies = np.array(latencies)
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cores, python {platform.python_version()}"
    )
    p50, p99 = 1000 * np.median(latencies), 1000 * np.quantile(latencies, 0.99)
    print(
        f"{latencies.size} POST /api/requests from {args.clients} clients in {elapsed:.1f} s: "
        f"{latencies.size / elapsed:.0f} requests/s; latency p50 {p50:.0f} ms, p99 {p99:.0f} ms"
    )


if __name__ == "__main__":
    main()

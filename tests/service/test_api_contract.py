"""The API keeps its OpenAPI contract: schemathesis, every check of its default set, against
``cnb serve`` (uvicorn on 127.0.0.1, a real SQLite store, a valid token), with a bounded
number of examples and the stateful phase over the schema's links: in ``make test`` 10
examples per operation without the coverage phase, in ``make test-all`` 25 and every phase.

schemathesis runs from its own environment, ``.venv-contract`` (``make test`` installs it):
the ``[caldav]`` extra installs ``urllib3-future`` under the name ``urllib3``, with which
schemathesis' ``requests`` transport fails on its own, before any request is made.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
from pathlib import Path

import pytest

from clusterednb.cli import main
from service_helpers import Server, call

ROOT = Path(__file__).resolve().parents[2]
SCHEMATHESIS = Path(os.environ.get("CNB_SCHEMATHESIS", ROOT / ".venv-contract/bin/schemathesis"))
EMAIL = "ann@example.org"


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    folder = tmp_path_factory.mktemp("contract")
    store = folder / "service.db"
    with contextlib.redirect_stdout(io.StringIO()) as out:
        assert main(["users", "add", "ann", "--email", EMAIL, "--store", str(store)]) == 0
    with Server(store) as server:
        yield server, out.getvalue().strip(), folder


PHASES = {10: ["--phases", "examples,fuzzing,stateful"], 25: []}
"""``make test`` leaves out the coverage phase (its boundary and negative cases, 63 of the
114 s this test took in the default suite, whatever the number of examples);
``make test-all`` runs every phase."""


@pytest.mark.parametrize("examples", [10, pytest.param(25, marks=pytest.mark.slow)])
def test_schemathesis_finds_no_failure(served, examples):
    assert SCHEMATHESIS.exists(), f"{SCHEMATHESIS} is missing: `make test` installs it"
    server, token, folder = served
    done = subprocess.run(
        [
            str(SCHEMATHESIS),
            "run",
            f"{server.url}/openapi.json",
            "--header",
            f"Authorization: Bearer {token}",
            "--max-examples",
            str(examples),
            *PHASES[examples],
            "--seed",
            "1",
            "--workers",
            "1",
            "--request-timeout",
            "20",
        ],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=folder,  # schemathesis keeps a cache in its working folder: not in the checkout
        env={
            **os.environ,
            "PYTHONPATH": str(Path(__file__).parent),
            "SCHEMATHESIS_HOOKS": "contract_hooks",
            "CNB_CONTRACT_EMAIL": EMAIL,
        },
    )
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-2000:]
    assert "Tested: 12" in done.stdout, done.stdout[-3000:]  # every operation of the API


def test_the_schema_documents_bodies_security_codes_and_version(served):
    server, _, _ = served
    status, schema, _ = call(server, "GET", "/openapi.json")
    assert status == 200
    from clusterednb.version import __version__

    assert schema["info"]["version"] == __version__
    assert schema["components"]["securitySchemes"]["HTTPBearer"]["scheme"] == "bearer"
    paths = schema["paths"]
    assert "text/calendar" in paths["/api/requests"]["post"]["requestBody"]["content"]
    assert "text/calendar" in paths["/api/calendar"]["put"]["requestBody"]["content"]
    feedback = paths["/api/requests/{request_id}/feedback"]["post"]["requestBody"]
    assert "application/json" in feedback["content"]
    assert set(paths["/api/requests"]["post"]["responses"]) == {
        "200",
        "201",
        "400",
        "401",
        "413",
        "415",
    }
    for operations in paths.values():
        for operation in operations.values():
            assert "422" not in operation["responses"]
    assert not {"/login", "/logout", "/", "/requests/{request_id}/answer"} & set(paths)
    json.dumps(schema)


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", "/api/requests/9223372036854775808"),
        ("GET", "/api/requests/9223372036854775808/reply.ics"),
        ("POST", "/api/requests/9223372036854775808/feedback"),
        ("GET", "/api/requests/-1"),
        ("GET", "/api/requests/abc"),
    ],
)
def test_an_id_out_of_range_is_a_400_never_a_500(served, method, path):
    server, token, _ = served
    status, body, _ = call(server, method, path, token=token, body={"accepted": True})
    assert status == 400 and set(body) == {"error"}


def test_unknown_routes_and_methods_answer_the_error_shape(served):
    server, token, _ = served
    status, body, _ = call(server, "GET", "/no/such/route", token=token)
    assert status == 404 and set(body) == {"error"}
    status, body, headers = call(server, "DELETE", "/api/requests", token=token)
    assert status == 405 and set(body) == {"error"}
    assert headers["allow"] == "GET, POST"  # both routes of the path, not one


def test_a_401_names_the_bearer_scheme(served):
    server, _, _ = served
    import urllib.error
    import urllib.request

    with pytest.raises(urllib.error.HTTPError) as raised:
        urllib.request.urlopen(f"{server.url}/api/requests", timeout=10)
    assert raised.value.code == 401
    assert raised.value.headers["WWW-Authenticate"] == "Bearer"
    assert json.loads(raised.value.read()) == {
        "error": "missing, invalid or revoked API token (Authorization: Bearer)"
    }


@pytest.mark.parametrize("year", ["1900", "9999"])
def test_an_invitation_outside_1970_2100_is_refused_not_decided(served, year):
    server, token, _ = served
    body = (
        "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//t//EN\r\nMETHOD:REQUEST\r\n"
        f"BEGIN:VEVENT\r\nUID:far-{year}@example.org\r\nDTSTAMP:20261201T090000Z\r\n"
        f"DTSTART:{year}0101T090000Z\r\nDURATION:PT1H\r\nSUMMARY:far\r\n"
        "ORGANIZER:mailto:carol@example.org\r\n"
        f"ATTENDEE;PARTSTAT=NEEDS-ACTION:mailto:{EMAIL}\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"
    ).encode()
    status, answer, _ = call(server, "POST", "/api/requests", token, body, "text/calendar")
    assert status == 400 and f"starts in {int(year)}" in answer["error"]


def test_an_organisers_cancel_closes_the_pending_question(served):
    server, token, _ = served
    invitation = (
        "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//t//EN\r\nMETHOD:REQUEST\r\n"
        "BEGIN:VEVENT\r\nUID:called-off@example.org\r\nDTSTAMP:20261201T090000Z\r\n"
        "DTSTART:20271210T090000Z\r\nDURATION:PT1H\r\nSUMMARY:called off\r\n"
        "ORGANIZER:mailto:carol@example.org\r\n"
        f"ATTENDEE;PARTSTAT=NEEDS-ACTION:mailto:{EMAIL}\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"
    )
    status, stored, _ = call(
        server, "POST", "/api/requests", token, invitation.encode(), "text/calendar"
    )
    assert status == 201
    cancel = invitation.replace("METHOD:REQUEST", "METHOD:CANCEL").replace(
        "SUMMARY:called off", "STATUS:CANCELLED"
    )
    status, answer, _ = call(
        server, "POST", "/api/requests", token, cancel.encode(), "text/calendar"
    )
    assert status == 200
    closed = 1 if stored["answer"] is None else 0
    assert answer == {"status": "cancelled", "uid": "called-off@example.org", "closed": closed}
    listed = [r["uid"] for r in call(server, "GET", "/api/requests", token)[1]]
    assert ("called-off@example.org" in listed) == (closed == 0)
    elsewhere = cancel.replace(f"mailto:{EMAIL}", "mailto:someone@example.org")
    status, _, _ = call(server, "POST", "/api/requests", token, elsewhere.encode(), "text/calendar")
    assert status == 400  # not among its attendees

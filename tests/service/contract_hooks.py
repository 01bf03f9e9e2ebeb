"""schemathesis hooks for the contract test (loaded by ``SCHEMATHESIS_HOOKS``; not a test
module): how to draw a ``text/calendar`` body that is a valid invitation.

JSON Schema can say only that the body is text starting with ``BEGIN:VCALENDAR``; positive
data must also obey RFC 5545 and RFC 5546, or the service rightly refuses it. Every drawn
invitation invites ``CNB_CONTRACT_EMAIL`` (the token's account) to one future meeting, with
drawn UID, summary, day, time, length, sequence and organiser.
"""

from __future__ import annotations

import os

import schemathesis
from hypothesis import strategies as st

EMAIL = os.environ.get("CNB_CONTRACT_EMAIL", "ann@example.org")
WORDS = st.text(alphabet="abcdefghijklmnopqrstuvwxyz ", min_size=1, max_size=30).map(str.strip)


def invitation(
    uid: str, summary: str, day: int, hour: int, minutes: int, sequence: int, organiser: str
) -> bytes:
    """One iTIP REQUEST inviting ``EMAIL`` (CRLF lines, none over 75 octets)."""
    start = f"2027{(day // 28) % 12 + 1:02d}{day % 28 + 1:02d}T{hour:02d}0000Z"
    lines = [
        "BEGIN:VCALENDAR",
        "VERSION:2.0",
        "PRODID:-//clusterednb contract test//EN",
        "METHOD:REQUEST",
        "BEGIN:VEVENT",
        f"UID:{uid}@contract.example.org",
        "DTSTAMP:20261201T090000Z",
        f"DTSTART:{start}",
        f"DURATION:PT{minutes}M",
        f"SEQUENCE:{sequence}",
        f"SUMMARY:{summary or 'meeting'}",
        f"ORGANIZER:mailto:{organiser}@example.org",
        f"ATTENDEE;PARTSTAT=NEEDS-ACTION;RSVP=TRUE:mailto:{EMAIL}",
        "END:VEVENT",
        "END:VCALENDAR",
    ]
    return ("\r\n".join(lines) + "\r\n").encode()


INVITATIONS = st.builds(
    invitation,
    uid=st.text(alphabet="abcdefghij0123456789-", min_size=1, max_size=20),
    summary=WORDS,
    day=st.integers(0, 335),
    hour=st.integers(6, 19),
    minutes=st.sampled_from([15, 30, 45, 60, 90, 120]),
    sequence=st.integers(0, 5),
    organiser=st.sampled_from(["carol", "dave", "erin"]),
)

schemathesis.openapi.media_type("text/calendar", INVITATIONS)


@schemathesis.hook
def map_body(ctx, body):
    """Settings that JSON Schema lets through but the rules refuse, made valid: working hours
    that start before they end, out-of-office periods whose first day is not after the last,
    a comment of one line. Anything else (and every body meant to break the schema) is left
    as drawn."""
    if ctx.operation.path != "/api/settings" or not isinstance(body, dict):
        return body
    hours = body.get("working_hours")
    if isinstance(hours, list) and len(hours) == 2 and all(isinstance(h, str) for h in hours):
        start, end = sorted(hours)
        body["working_hours"] = [start, end] if start != end else ["00:00", "23:59"]
    periods = body.get("out_of_office")
    if isinstance(periods, list):
        body["out_of_office"] = [
            sorted(p) if isinstance(p, list) and all(isinstance(d, str) for d in p) else p
            for p in periods
        ]
    if isinstance(body.get("comment"), str):
        body["comment"] = " ".join(body["comment"].split())
    return body

"""Invitations written as iCalendar text, put on a CalDAV server and read back, and the
arguments of ``cnb meeting sync``: shared by the tests of the passes, the service and the
command line."""

from __future__ import annotations

import json

import icalendar

from calendar_servers import USER
from clusterednb.cli import main
from clusterednb.meeting.invitation import read_calendar

NEW_YORK_ZONE = """BEGIN:VTIMEZONE
TZID:America/New_York
BEGIN:STANDARD
DTSTART:19701101T020000
RRULE:FREQ=YEARLY;BYMONTH=11;BYDAY=1SU
TZOFFSETFROM:-0400
TZOFFSETTO:-0500
END:STANDARD
BEGIN:DAYLIGHT
DTSTART:19700308T020000
RRULE:FREQ=YEARLY;BYMONTH=3;BYDAY=2SU
TZOFFSETFROM:-0500
TZOFFSETTO:-0400
END:DAYLIGHT
END:VTIMEZONE"""


def vcalendar(*events: str, zones: str = "") -> str:
    return (
        "BEGIN:VCALENDAR\nVERSION:2.0\nPRODID:test\n" + zones + "".join(events) + "END:VCALENDAR\n"
    )


def vevent(
    uid: str,
    start: str,
    end: str,
    *,
    attendee: str = USER,
    sequence: int = 0,
    partstat: str = "NEEDS-ACTION",
    extra: str = "",
    summary: str = "Budget review",
    zone: str = "America/New_York",
) -> str:
    when = (
        f"DTSTART;TZID={zone}:{start}\nDTEND;TZID={zone}:{end}\n"
        if zone
        else f"DTSTART:{start}\nDTEND:{end}\n"
    )
    who = f"ATTENDEE;PARTSTAT={partstat};RSVP=TRUE;CN=Ann:mailto:{attendee}\n" if attendee else ""
    return (
        f"BEGIN:VEVENT\nUID:{uid}\nSEQUENCE:{sequence}\nDTSTAMP:20261101T120000Z\n{when}"
        f"SUMMARY:{summary}\nORGANIZER:mailto:boss@org.example\n{who}{extra}END:VEVENT\n"
    )


def upload(url: str, objects: dict[str, str]):
    import caldav  # the tests that upload skip without it

    client = caldav.DAVClient(url=url, username="ann", password="secret")
    calendar = client.principal().make_calendar(name="work")
    for text in objects.values():
        calendar.add_event(text.replace("\n", "\r\n"))
    return client, calendar


def put_raw(client, calendar, uid: str, text: str) -> None:
    """Replace an event on the server byte for byte (as another calendar client would)."""
    href = str(calendar.event_by_uid(uid).url)
    response = client.request(
        href,
        "PUT",
        text.replace("\n", "\r\n").encode(),
        {"Content-Type": "text/calendar; charset=utf-8"},
    )
    assert response.status in (201, 204)


def server_copy(calendar, uid: str) -> icalendar.Calendar:
    return read_calendar(calendar.event_by_uid(uid).data.encode())


def sync_args(url, setting, tmp_path, password="secret"):
    secret = tmp_path / "password.txt"
    secret.write_text(password + "\n")
    secret.chmod(0o600)
    return [
        "meeting",
        "sync",
        "--caldav",
        url,
        "--username",
        "ann",
        "--password-file",
        str(secret),
        "--user",
        USER,
        "--model",
        str(setting / "model.cnb"),
        "--state",
        str(tmp_path / "state.db"),
    ]


def run_sync(url, setting, tmp_path, capsys, *extra):
    args = [
        *sync_args(url, setting, tmp_path),
        "--directory",
        str(setting / "directory.json"),
        "--json",
        *extra,
    ]
    status = main(args)
    captured = capsys.readouterr()
    return status, (json.loads(captured.out) if status == 0 else None), captured.err


INVITATIONS = {
    "ny": vcalendar(vevent("ny", "20261104T100000", "20261104T103000"), zones=NEW_YORK_ZONE + "\n"),
    "berlin": vcalendar(
        vevent("berlin", "20261105T160000", "20261105T170000", zone="Europe/Berlin")
    ),
    "allday": vcalendar(
        vevent("allday", "", "", zone="").replace(
            "DTSTART:\nDTEND:\n", "DTSTART;VALUE=DATE:20261106\n"
        )
    ),
    "weekly": vcalendar(
        vevent(
            "weekly",
            "20261102T090000",
            "20261102T093000",
            extra="RRULE:FREQ=WEEKLY;COUNT=6\n",
            summary="Weekly sync",
        ),
        vevent(
            "weekly",
            "20261109T140000",
            "20261109T143000",
            summary="Weekly sync (moved)",
            extra="RECURRENCE-ID;TZID=America/New_York:20261109T090000\n",
        ),
        zones=NEW_YORK_ZONE + "\n",
    ),
    "updated": vcalendar(
        vevent("updated", "20261104T150000", "20261104T160000", sequence=1),
        zones=NEW_YORK_ZONE + "\n",
    ),
    "cancelled": vcalendar(
        vevent("cancelled", "20261104T110000", "20261104T120000", extra="STATUS:CANCELLED\n"),
        zones=NEW_YORK_ZONE + "\n",
    ),
    "notme": vcalendar(
        vevent("notme", "20261104T130000", "20261104T140000", attendee="someone@else.example"),
        zones=NEW_YORK_ZONE + "\n",
    ),
    "busy": vcalendar(
        vevent("busy", "20261104T100000", "20261104T110000", attendee="", summary="Dentist"),
        zones=NEW_YORK_ZONE + "\n",
    ),
}

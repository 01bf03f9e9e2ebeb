"""What a CalDAV pass does with one invitation: decide it, record the intent, write it, owe
the reply, and finish what an earlier pass left half done.

The order is what makes a pass safe to interrupt anywhere. A decision is stored, with the
PARTSTAT the organiser should hear, before the server is touched; the PARTSTAT is then written
under the ETag that was read, and only if the invitation is still the version decided (its
``SEQUENCE`` and ``DTSTART``); the write and the REPLY it owes are recorded in one transaction;
the REPLY is mailed from the outbox (:mod:`~clusterednb.service.passes.outbox`). A later pass
that finds the stored intent not on the server writes it; one that finds it on the server but
not recorded records it (the write's response was lost); and an answer the person gave on the
page or through the API (to a question, or correcting the assistant) is written over what the
assistant wrote and told to the organiser. One event that cannot be written (a read-only
calendar: 403) is skipped with a note; the others are answered.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import icalendar

from clusterednb.exceptions import warn_at_caller
from clusterednb.meeting.deciding import Decision, request_record
from clusterednb.meeting.directory import UserEntry
from clusterednb.meeting.errors import MeetingError, MeetingWarning
from clusterednb.meeting.invitation import (
    calendar_address,
    find_attendee,
    recurrence_key,
    sequence_number,
)
from clusterednb.meeting.invitation_decision import decide_invitation, single_event
from clusterednb.meeting.reply import make_reply, reply_message
from clusterednb.meeting.rules import EXPIRED_REASON, PersonRules, has_passed, now
from clusterednb.service.delivery_tables import OutgoingReply
from clusterednb.service.passes.caldav_server import connection_problem, set_partstat, version_of
from clusterednb.service.passes.settings import PARTSTATS, PassResult, invitee_of

ANSWERS = {"ACCEPTED": True, "DECLINED": False}


def intended_partstat(decision: str, on_ask: str) -> str | None:
    """What the organiser should hear of a fresh decision (None: nothing until the person
    answers).

    Examples
    --------
    >>> intended_partstat("accept", "none"), intended_partstat("ask", "tentative")
    ('ACCEPTED', 'TENTATIVE')
    >>> intended_partstat("ask", "none") is None
    True
    """
    if decision in PARTSTATS:
        return PARTSTATS[decision]
    return "TENTATIVE" if decision == "ask" and on_ask == "tentative" else None


def reply_for(
    single: icalendar.Calendar,
    event: icalendar.Event,
    email: str,
    sender: str,
    partstat: str,
    zone: str,
    comment: str | None,
) -> OutgoingReply:
    """The iMIP REPLY telling the organiser ``partstat``, ready for the outbox."""
    reply = make_reply(single, email, partstat, now(), zone, comment).to_ical()
    summary = str(event.get("SUMMARY", "(no title)"))
    organizer = calendar_address(event["ORGANIZER"])
    return OutgoingReply.of(reply_message(reply, sender, organizer, summary, partstat), partstat)


@dataclass
class CalendarPass:
    """What every invitation of one CalDAV pass shares (a :class:`SyncSettings`, the
    open store, the CalDAV client, the person's whole calendar and rules), and the results
    whose reply is in the outbox, by request id (the pass says afterwards whether it went).
    """

    settings: Any
    store: Any
    client: Any
    everything: icalendar.Calendar
    user: str
    entry: UserEntry | None
    rules: PersonRules
    scheduling: bool = False
    queued: set[int] = field(default_factory=set)
    mailed: dict[int, PassResult] = field(default_factory=dict)

    @property
    def email(self) -> str:
        return calendar_address(self.settings.email)

    def event(self, href: str, calendar: icalendar.Calendar, event: icalendar.Event):
        """What the pass does with one ``VEVENT`` of the object at ``href``."""
        email = self.email
        attendee = find_attendee(event, email)
        if attendee is None or "ORGANIZER" not in event or "UID" not in event:
            return None
        if calendar_address(event["ORGANIZER"]) == email:
            return None
        uid, recurrence = str(event["UID"]), recurrence_key(event)
        try:
            sequence = sequence_number(event)
        except MeetingError as error:
            warn_at_caller(f"{href} skipped: {error}", MeetingWarning)
            return None
        base = {
            "href": href,
            "uid": uid,
            "recurrence_id": recurrence,
            "sequence": sequence,
            "summary": str(event.get("SUMMARY", "(no title)")),
        }
        status = str(attendee.params.get("PARTSTAT", "NEEDS-ACTION")).upper()
        dry = self.settings.dry_run
        if not dry:
            self.store.supersede(self.user, uid, recurrence, sequence)
        known = self.store.find_request(self.user, uid, recurrence, sequence)
        if str(event.get("STATUS", "")).upper() == "CANCELLED":
            return self._cancelled(base, known)
        if known is not None and known["state"] == "cancelled":
            return PassResult(**base, decision="-", p_accept=None, action="cancelled before")
        waiting = status in ("NEEDS-ACTION", "TENTATIVE")
        if waiting and has_passed(event, self.rules.zone):
            return self._expired(calendar, event, known, base)
        if known is None:
            if status != "NEEDS-ACTION":
                return None  # answered by the person before the assistant saw it
            return self._decide(href, calendar, event, base)
        return self._follow_up(href, calendar, event, base, known, status)

    # ------------------------------------------------------------------ the branches
    def _cancelled(self, base: dict[str, Any], known: dict | None) -> PassResult:
        if known is not None and known["answer"] is None and known["state"] == "open":
            if known["decision"] == "ask" or known["written"] is None:
                if not self.settings.dry_run:
                    self.store.cancel(self.user, base["uid"], base["recurrence_id"])
                action = "cancelled: the question closed"
                return PassResult(**base, decision="-", p_accept=None, action=action)
        return PassResult(**base, decision="-", p_accept=None, action="cancelled: never answered")

    def _expired(
        self,
        calendar: icalendar.Calendar,
        event: icalendar.Event,
        known: dict | None,
        base: dict[str, Any],
    ) -> PassResult:
        """A waiting invitation whose meeting has ended: never answered, recorded as expired
        (a question left open is closed; the person's late answer is not passed on)."""
        result = PassResult(
            **base, decision="expired", p_accept=None, action="expired: never answered"
        )
        if self.settings.dry_run:
            return result
        if known is None:
            decided = Decision("expired", reasons=(EXPIRED_REASON,))
            record = request_record(event, single_event(calendar, event).to_ical(), {}, [], decided)
            self.store.add_request(self.user, record | {"channel": "caldav"})
        elif known["partstat"] is not None and known["written"] != known["partstat"]:
            result.action = "expired: the answer is not passed on"
        return result

    def _decide(
        self, href: str, calendar: icalendar.Calendar, event: icalendar.Event, base: dict
    ) -> PassResult | None:
        single = single_event(calendar, event)
        invitee = invitee_of(self.settings, self.store, self.user, self.entry, self.rules)
        try:
            found = decide_invitation(
                single, invitee, self.everything, self.settings.model, self.settings.ask_band
            )
        except MeetingError as error:
            warn_at_caller(f"{href} skipped: {error}", MeetingWarning)
            return None
        decided = found.decision
        result = PassResult.proposed(base, decided)
        if self.settings.dry_run:
            return result
        partstat = intended_partstat(decided.decision, self.rules.on_ask)
        record = request_record(event, single.to_ical(), found.features, found.missing, decided)
        stored, _ = self.store.add_request(
            self.user,
            record | {"partstat": partstat, "channel": "caldav", "notes": found.notes},
        )
        if partstat is None:
            result.action = "asked the person"
            return result
        result.action = self._write(href, calendar, event, stored)
        self._remember(stored["id"], result)
        if decided.decision == "ask" and not result.action.startswith(("left", "skipped")):
            result.action = "asked the person; " + result.action.replace("answered", "tentative")
        return result

    def _follow_up(
        self,
        href: str,
        calendar: icalendar.Calendar,
        event: icalendar.Event,
        base: dict[str, Any],
        known: dict[str, Any],
        status: str,
    ) -> PassResult | None:
        """An invitation decided before: finish, pass on or learn what changed since."""
        intended, written = known["partstat"], known["written"]
        result = PassResult(
            **base, decision=known["decision"], p_accept=known["p_accept"], action=""
        )
        dry = self.settings.dry_run
        if intended is not None and status == intended:
            if written != intended:  # written, but the pass ended before it was recorded
                result.action = (
                    "would finish the answer"
                    if dry
                    else self._recorded(calendar, event, known, "finished an interrupted answer")
                )
                self._remember(known["id"], result)
            elif known["decision"] == "ask" and known["answer"] is None:
                result.action = "still waiting for the person (tentative on the server)"
            else:
                return None  # answered, written and told: nothing left to do
            return result
        replaceable = status == "NEEDS-ACTION" or (written is not None and status == written)
        if intended is not None and replaceable:
            if dry:
                result.action = "would write the answer"
                return result
            written_now = self._write(href, calendar, event, known)
            if known["answer"] is not None:
                partstat = PARTSTATS[known["answer"]].lower()
                written_now = f"passed on the person's answer ({partstat}): {written_now}"
            result.action = written_now
            self._remember(known["id"], result)
            return result
        if status in ANSWERS and status != written:  # the person answered in their own client
            if not dry:
                self.store.answer(self.user, known["id"], ANSWERS[status])
                self.store.mark_written(self.user, known["id"], status)
                self.store.drop_owed_replies(self.user, known["id"])  # their client told
            result.action = f"learned the answer ({status.lower()})"
            return result
        result.action = (
            "still waiting for the person" if known["decision"] == "ask" else "answered before"
        )
        return result

    def _remember(self, request_id: int, result: PassResult) -> None:
        """Keep ``result`` to say, after the outbox is sent, whether its reply went."""
        if request_id in self.queued:
            self.mailed[request_id] = result

    # ------------------------------------------------------------------ acting
    def _write(
        self, href: str, calendar: icalendar.Calendar, event: icalendar.Event, record: dict
    ) -> str:
        """Write the record's PARTSTAT on the server (only over the waiting status or what
        the assistant wrote, only into the version decided) and owe the REPLY; what was done,
        in words. A refusal is noted on the record and skipped: the next pass tries again."""
        partstat = record["partstat"]
        replaceable = ["NEEDS-ACTION"]
        if record["written"]:
            replaceable.append(record["written"])
        if record["decision"] == "ask":
            replaceable.append("TENTATIVE")
        uid, recurrence = str(event["UID"]), recurrence_key(event)
        try:
            outcome = set_partstat(
                self.client,
                href,
                uid,
                recurrence,
                self.email,
                partstat,
                tuple(replaceable),
                version_of(event),
                self.rules.comment if self.scheduling else None,
            )
        except Exception as error:  # a refusal or a dropped connection: this event only
            problem = str(error) if isinstance(error, MeetingError) else connection_problem(error)
            where = f"{self.settings.account.url}: {record['summary']!r} ({uid})"
            note = f"{where}: {problem}"
            self.store.note_error(self.user, record["id"], note)
            warn_at_caller(f"{note}; skipped, tried again on the next pass", MeetingWarning)
            return f"skipped: {problem}; tried again on the next pass"
        if outcome != "written":
            return "left alone: changed on the server (decided afresh)"
        return self._recorded(calendar, event, record, "answered on the server")

    def _recorded(
        self, calendar: icalendar.Calendar, event: icalendar.Event, record: dict, said: str
    ) -> str:
        """Record the written PARTSTAT and, where the assistant mails, owe the REPLY."""
        settings, partstat = self.settings, record["partstat"]
        reply = None
        mails = settings.smtp is not None and not self.scheduling
        if mails and record["replied"] != partstat:
            zone = self.entry.timezone if self.entry else "UTC"
            reply = reply_for(
                single_event(calendar, event),
                event,
                self.email,
                settings.sender or self.email,
                partstat,
                zone,
                self.rules.comment,
            )
        self.store.mark_written(self.user, record["id"], partstat, reply)
        if reply is not None:
            self.queued.add(record["id"])
        if self.scheduling:
            return f"{said} (the server tells the organiser)"
        return said

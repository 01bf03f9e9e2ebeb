"""One pass of the assistant over a person's mailbox: every iMIP invitation decided as the
calendar pass decides it, answered by mail.

For every message with a calendar part (:mod:`~clusterednb.service.passes.mail.imap`) and every
``VEVENT`` of it (a recurring series and each moved instance apart):

- ``METHOD:REQUEST`` to the person: decided by the person's rules, then the model
  (:func:`~clusterednb.meeting.rules.decide_by_rules`,
  :func:`~clusterednb.meeting.deciding.decide_or_ask`: the functions the CalDAV pass and the
  service use), with conflicts read from the person's calendar (an ``.ics`` given to the pass,
  else the invitations the person has accepted so far, from the state store); a decision is
  mailed to the organiser as an RFC 5546 ``METHOD:REPLY`` (:func:`~clusterednb.meeting.reply.
  reply_message`: ``multipart/alternative``, a text part and a ``text/calendar;
  method=REPLY`` part, lines folded at 75 octets) and the message is marked answered and
  read; an "ask" is stored for the review page and the message is left unread (or, with
  ``on_ask = tentative``, answered TENTATIVE until the person decides). An answer the person
  gives later on the page or through the API is mailed on the next pass.
- ``METHOD:CANCEL`` closes the pending question; a higher ``SEQUENCE`` is decided afresh.
- Never answered, by name: no organiser, not invited, the organiser is the person, a ``REPLY``
  or ``COUNTER`` (an answer to someone's invitation, not one to answer), a meeting that has
  ended (recorded as expired), an invitation dated outside 1970–2100.

What was answered is remembered in the state store by UID, RECURRENCE-ID and SEQUENCE (a
second pass sends nothing again) and on the message (a keyword). A malformed message is
skipped with a warning naming its Message-ID; the pass goes on.
"""

from __future__ import annotations

import imaplib
from dataclasses import dataclass, field
from typing import Any

import icalendar

from clusterednb.exceptions import warn_at_caller
from clusterednb.meeting.deciding import Decision, request_record
from clusterednb.meeting.errors import MeetingError, MeetingWarning
from clusterednb.meeting.invitation import (
    calendar_address,
    check_start_year,
    find_attendee,
    read_calendar,
    recurrence_key,
    sequence_number,
)
from clusterednb.meeting.invitation_decision import decide_invitation, single_event
from clusterednb.meeting.rules import EXPIRED_REASON, PersonRules, has_passed
from clusterednb.service.delivery_tables import OutgoingReply
from clusterednb.service.passes.calendar_event import intended_partstat, reply_for
from clusterednb.service.passes.mail.imap import (
    ImapAccount,
    MailboxUnavailable,
    calendar_messages,
    cause_of,
    connect,
    mark,
    open_folder,
)
from clusterednb.service.passes.mail.messages import calendar_parts, message_id, read_message
from clusterednb.service.passes.outbox import say_delivery, send_owed
from clusterednb.service.passes.pass_state import person_pass, state_store, user_key
from clusterednb.service.passes.settings import PassResult, PassSettings, invitee_of

DEALT = ("answered", "refused", "expired", "cancelled", "not answered", "passed on")
"""Actions after which a message is marked answered (and read)."""


@dataclass(frozen=True)
class MailSettings(PassSettings):
    """What one mailbox pass needs (the ``cnb meeting mail`` options): the mailbox, and the
    person's own calendar for conflicts.

    Examples
    --------
    >>> from pathlib import Path
    >>> settings = MailSettings(ImapAccount("imap.example.org", 993, "ann", password="pw"),
    ...                         "ann@example.org", model=None, state=Path("ann.db"))
    >>> settings.costs, settings.dry_run
    ((1.0, 1.0), False)
    """

    account: ImapAccount
    calendar: icalendar.Calendar | None = None


def accepted_calendar(store: Any, user: str) -> icalendar.Calendar | None:
    """The invitations ``user`` accepted so far (by the assistant or themselves), as one
    calendar for busy time and conflicts; None when there are none."""
    events = []
    for record in store.requests(user):
        if (record["answer"] or record["decision"]) != "accept":
            continue
        try:
            events.extend(read_calendar(bytes(record["ics"])).subcomponents)
        except MeetingError:
            continue
    if not events:
        return None
    combined = icalendar.Calendar()
    combined.add("PRODID", "-//clusterednb//mail//EN")
    combined.add("VERSION", "2.0")
    for component in events:
        if component.name in ("VEVENT", "VTIMEZONE"):
            combined.add_component(component)
    return combined


def mail_pass(settings: MailSettings) -> list[PassResult]:
    """One pass (see the module); what it did with each invitation.

    Examples
    --------
    A server that cannot be reached is one clear error (exit status 2 on the command line):

    >>> from clusterednb.examples import models as toy
    >>> account = ImapAccount("127.0.0.1", 9, "ann", password="pw")
    >>> mail_pass(MailSettings(account, "ann@example.org", None, toy.scratch_file("m.db"),
    ...                        dry_run=True))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    clusterednb.service.passes.mail.imap.MailboxUnavailable: cannot use the IMAP server
    127.0.0.1:9: ...
    """
    if settings.smtp is None and not settings.dry_run:
        raise MeetingError("answering by mail needs --smtp HOST:PORT (or --dry-run)")
    user, entry = user_key(settings)
    account = settings.account
    with person_pass(settings, user):
        connection = connect(account)
        try:
            with state_store(settings) as store:
                rules = store.rules(user, entry.timezone if entry else "UTC")
                on_ask = settings.on_ask or rules.on_ask
                comment = settings.comment or rules.comment
                context = _Context(settings, store, user, entry, rules, on_ask, comment)
                if not settings.dry_run:
                    context.pass_on_answers()
                dropped = _read_folder(context, connection)
                if not settings.dry_run:
                    say_delivery(send_owed(store, user, settings.smtp), context.mailed)
                if dropped is not None:
                    raise dropped
        finally:
            try:
                connection.logout()
            except (OSError, imaplib.IMAP4.error):
                pass
    return context.outcomes


def _read_folder(context: _Context, connection: imaplib.IMAP4) -> MailboxUnavailable | None:
    """Decide every invitation of the folder not dealt with before; the connection's failure
    when the server drops it midway (what was done so far is kept)."""
    settings, store, user = context.settings, context.store, context.user
    account = settings.account
    where = f"{account.host}:{account.port}"
    try:
        validity = open_folder(connection, account.folder, readonly=settings.dry_run)
        seen = store.seen_messages(user, account.folder, validity)
        for uid, raw in calendar_messages(connection, skip=seen):
            done = context.message(raw)
            if not done or settings.dry_run:
                continue
            asked = any(o.action.startswith(("asked", "still waiting")) for o in done)
            if asked or all(o.action.startswith(DEALT) for o in done):
                if not asked:  # a question is read again until the person answers it
                    store.mark_seen(user, account.folder, validity, int(uid))
                try:  # a hint for the person's mail client; the store is what counts
                    mark(connection, uid, asked)
                except imaplib.IMAP4.error as error:
                    warn_at_caller(
                        f"the IMAP server {where} did not keep the keyword on message {uid!r}: "
                        f"{error} (the store remembers it)",
                        MeetingWarning,
                    )
    except (OSError, imaplib.IMAP4.abort) as error:
        return MailboxUnavailable(
            f"the IMAP server {where} dropped the connection during {user}'s pass: "
            f"{cause_of(error)}; what was done is kept, the rest is read on the next pass"
        )
    return None


@dataclass
class _Context:
    """What every invitation of one pass shares."""

    settings: MailSettings
    store: Any
    user: str
    entry: Any
    rules: PersonRules
    on_ask: str
    comment: str | None
    outcomes: list[PassResult] = field(default_factory=list)
    mailed: dict[int, PassResult] = field(default_factory=dict)

    def message(self, raw: bytes) -> list[PassResult]:
        """What the pass does with one message (also kept in :attr:`outcomes`, where each
        invitation is reported once a pass)."""
        done = self._message(raw)
        reported = {(o.uid, o.recurrence_id, o.sequence) for o in self.outcomes}
        self.outcomes.extend(
            o for o in done if (o.uid, o.recurrence_id, o.sequence) not in reported
        )
        return done

    def _message(self, raw: bytes) -> list[PassResult]:
        try:
            message = read_message(raw)
            parts, notes = calendar_parts(message)
        except Exception as error:  # a message the mail parser cannot read: skip it
            warn_at_caller(f"a message skipped: {error}", MeetingWarning)
            return []
        for note in notes:
            warn_at_caller(note, MeetingWarning)
        done, read = [], set()
        for part in parts:
            for event in part.calendar.walk("VEVENT"):
                key = (part.method, event.get("UID"), recurrence_key(event), event.get("SEQUENCE"))
                if key in read:  # the same invitation twice (Google: inline and invite.ics)
                    continue
                read.add(key)
                try:
                    outcome = self.event(part.method, part.calendar, event)
                except MeetingError as error:
                    warn_at_caller(f"message {message_id(message)}: {error}", MeetingWarning)
                    continue
                if outcome is not None:
                    done.append(outcome)
        return done

    def event(self, method: str, calendar: Any, event: Any) -> PassResult | None:
        settings, store, user = self.settings, self.store, self.user
        email = calendar_address(settings.email)
        uid = str(event.get("UID", ""))
        recurrence = recurrence_key(event) if uid else ""
        sequence = sequence_number(event) if uid else 0
        base = {
            "href": "",
            "uid": uid,
            "recurrence_id": recurrence,
            "sequence": sequence,
            "summary": str(event.get("SUMMARY", "(no title)")),
        }

        def said(action: str, decision: str = "-") -> PassResult:
            return PassResult(**base, decision=decision, p_accept=None, action=action)

        if method in ("REPLY", "COUNTER"):
            return said(f"not answered: a {method} answers an invitation, it is not one")
        if method == "CANCEL":
            closed = 0 if settings.dry_run else store.cancel(user, uid, recurrence or None)
            if not closed and not settings.dry_run:
                store.supersede(user, uid, recurrence, sequence + 1)
            return said("cancelled: the question closed" if closed else "cancelled: nothing open")
        if method != "REQUEST":
            return None
        if "ORGANIZER" not in event or not uid:
            return said("refused: no organiser or no UID")
        if find_attendee(event, email) is None:
            return said("refused: the person is not invited")
        organizer = calendar_address(event["ORGANIZER"])
        if organizer == email:
            return said("refused: the person is the organiser")
        check_start_year(event)
        if not settings.dry_run:
            store.supersede(user, uid, recurrence, sequence)
        known = store.find_request(user, uid, recurrence, sequence)
        single = single_event(calendar, event)
        if has_passed(event, self.rules.zone):
            if known is None and not settings.dry_run:
                expired = Decision("expired", reasons=(EXPIRED_REASON,))
                store.add_request(user, request_record(event, single.to_ical(), {}, [], expired))
            return said("expired: never answered", "expired")
        if known is not None:
            if known["state"] == "cancelled":
                return said("cancelled before")
            if known["decision"] == "ask" and known["answer"] is not None:
                return said("passed on the person's answer", "ask")
            waiting = known["decision"] == "ask" and known["answer"] is None
            action = "still waiting for the person" if waiting else "answered before"
            return PassResult(
                **base, decision=known["decision"], p_accept=known["p_accept"], action=action
            )
        everything = settings.calendar or accepted_calendar(store, user)
        invitee = invitee_of(settings, store, user, self.entry, self.rules)
        found = decide_invitation(single, invitee, everything, settings.model, settings.ask_band)
        decided = found.decision
        result = PassResult.proposed(base, decided)
        if settings.dry_run:
            return result
        partstat = intended_partstat(decided.decision, self.on_ask)
        record = request_record(event, single.to_ical(), found.features, found.missing, decided)
        reply = None if partstat is None else self._reply(single, event, partstat)
        stored, _ = store.add_request(
            user, record | {"partstat": partstat, "channel": "mail", "notes": found.notes}, reply
        )
        if decided.decision == "ask":
            result.action = "asked the person"
            if reply is not None:
                result.action += "; answered tentative by mail"
        else:
            result.action = f"answered {partstat.lower()} by mail"
        if reply is not None:
            self.mailed[stored["id"]] = result
        return result

    def pass_on_answers(self) -> None:
        """Queue a REPLY for every invitation of the mailbox whose organiser has not heard
        what they should: the person's answer to a question, or their correction of the
        assistant, given on the page or through the API (meetings that have begun excepted).
        """
        from clusterednb.service.views import has_started

        for record in self.store.replies_owed_by_mail(self.user):
            base = {key: record[key] for key in ("uid", "recurrence_id", "sequence", "summary")}
            partstat = record["partstat"]
            if has_started(record):
                continue
            single = read_calendar(bytes(record["ics"]))
            event = single.walk("VEVENT")[0]
            self.store.queue_reply(self.user, record["id"], self._reply(single, event, partstat))
            who = "the person's answer" if record["answer"] else "the answer"
            result = PassResult(
                href="",
                **base,
                decision=record["decision"],
                p_accept=record["p_accept"],
                action=f"passed on {who}: answered {partstat.lower()} by mail",
            )
            self.outcomes.append(result)
            self.mailed[record["id"]] = result

    def _reply(self, single: Any, event: Any, partstat: str) -> OutgoingReply:
        """The REPLY telling the organiser ``partstat``, ready for the outbox."""
        email = calendar_address(self.settings.email)
        zone = self.entry.timezone if self.entry else self.rules.time_zone
        sender = self.settings.sender or email
        return reply_for(single, event, email, sender, partstat, zone, self.comment)

"""The JSON API's routes: invitations in, decisions and replies out, the person's calendar,
status and rules. Every route reads what it needs through :mod:`~clusterednb.service.dependencies`.

A request id that is not the caller's is a 404 (never a 403), so the existence of another
user's request is not revealed.
"""

from __future__ import annotations

import csv
import io
from typing import Annotated, Any, Literal

import icalendar
from fastapi import APIRouter, Depends, Query, Request
from fastapi import Path as PathParam
from fastapi.responses import JSONResponse, Response

from clusterednb.exceptions import CNBError
from clusterednb.meeting.invitation import read_calendar
from clusterednb.meeting.reply import make_reply
from clusterednb.meeting.rules import PersonRules, now
from clusterednb.service.accounts import Account
from clusterednb.service.activity_tables import ACTIVITY_FIELDS
from clusterednb.service.api_schema import (
    FEEDBACK_BODY,
    MAX_ID,
    REQUEST_LINKS,
    SETTINGS_BODY,
    ActivityEntry,
    ApiError,
    CalendarStored,
    Cancelled,
    ServiceStatus,
    Settings,
    StoredRequest,
    calendar_body,
    errors,
)
from clusterednb.service.dependencies import (
    Caller,
    Model,
    Organisation,
    Store,
    ask_band_of,
    rules_of,
)
from clusterednb.service.intake import receive_cancellation, receive_invitation
from clusterednb.service.store import ServiceStore
from clusterednb.service.views import has_started, public_record

MAX_REQUEST_BYTES = 1 << 20
MAX_CALENDAR_BYTES = 16 << 20
RequestId = Annotated[int, PathParam(ge=1, le=MAX_ID, description="The request's id")]

router = APIRouter()


async def _body(request: Request, limit: int, kind: str) -> bytes:
    """The request body as ``text/calendar`` bytes, at most ``limit`` (else 413)."""
    content_type = request.headers.get("content-type", "")
    if not content_type.lower().startswith("text/calendar"):
        raise ApiError(415, f"{kind} must be sent as Content-Type: text/calendar")
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise ApiError(413, f"{kind} is larger than {limit} bytes")
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise ApiError(413, f"{kind} is larger than {limit} bytes")
        chunks.append(chunk)
    return b"".join(chunks)


def _parse(data: bytes, kind: str) -> icalendar.Calendar:
    """``data`` read as a calendar, or a 400 naming ``kind``."""
    if not data.strip():
        raise ApiError(400, f"{kind} is empty")
    try:
        return read_calendar(data)
    except (CNBError, RecursionError) as error:
        raise ApiError(400, f"{kind}: {error}") from error


def _owned(store: ServiceStore, who: Account, request_id: int) -> dict[str, Any]:
    """The caller's stored request ``request_id`` (else 404)."""
    record = store.request(who.user, request_id)
    if record is None:
        raise ApiError(404, f"no request {request_id}")
    return record


@router.post(
    "/api/requests",
    operation_id="post_request",
    status_code=201,
    response_model=None,
    responses={
        201: {
            "model": StoredRequest,
            "description": "Decided (or asked) and stored",
            "links": REQUEST_LINKS,
        },
        200: {
            "model": StoredRequest | Cancelled,
            "description": "Stored before (the same UID, RECURRENCE-ID and SEQUENCE); or, "
            "for an organiser's METHOD:CANCEL, the pending questions it closed",
        },
        **errors(400, 401, 413, 415),
    },
    openapi_extra=calendar_body(
        "An iTIP REQUEST (RFC 5546) with one VEVENT inviting you, or the organiser's CANCEL of one",
        MAX_REQUEST_BYTES,
    ),
)
async def post_request(
    request: Request,
    who: Caller,
    store: Store,
    learner: Model,
    directory: Organisation,
    ask_band: Annotated[float, Depends(ask_band_of)],
) -> JSONResponse:
    data = await _body(request, MAX_REQUEST_BYTES, "the request")
    calendar = _parse(data, "the request")
    if str(calendar.get("METHOD", "")).upper() == "CANCEL":
        return JSONResponse(receive_cancellation(store, who, calendar), status_code=200)
    stored, created, notes = receive_invitation(
        store, learner.current(), directory, who, calendar, data, ask_band
    )
    body = public_record(stored) | ({"warnings": notes} if notes else {})
    return JSONResponse(body, status_code=201 if created else 200)


@router.get(
    "/api/requests",
    operation_id="list_requests",
    response_model=None,
    responses={200: {"model": list[StoredRequest]}, **errors(401)},
)
def list_requests(who: Caller, store: Store) -> list[dict[str, Any]]:
    return [public_record(r) for r in store.requests(who.user)]


@router.get(
    "/api/requests/{request_id}",
    operation_id="get_request",
    response_model=None,
    responses={200: {"model": StoredRequest}, **errors(400, 401, 404)},
)
def get_request(request_id: RequestId, who: Caller, store: Store) -> dict[str, Any]:
    return public_record(_owned(store, who, request_id))


@router.post(
    "/api/requests/{request_id}/feedback",
    operation_id="give_feedback",
    response_model=None,
    responses={200: {"model": StoredRequest}, **errors(400, 401, 404)},
    openapi_extra=FEEDBACK_BODY,
)
async def feedback(
    request_id: RequestId, request: Request, who: Caller, store: Store, learner: Model
) -> dict[str, Any]:
    _owned(store, who, request_id)
    try:
        body = await request.json()
    except ValueError as error:
        raise ApiError(400, 'feedback must be JSON {"accepted": true|false}') from error
    if not isinstance(body, dict) or not isinstance(body.get("accepted"), bool):
        raise ApiError(400, 'feedback must be JSON {"accepted": true|false}')
    record = store.answer(who.user, request_id, body["accepted"])
    learner.request_refit()
    return public_record(record)


@router.get(
    "/api/requests/{request_id}/reply.ics",
    operation_id="get_reply",
    response_class=Response,
    responses={
        200: {
            "description": "The iTIP REPLY (RFC 5546) to send to the organiser",
            "content": {"text/calendar": {"schema": {"type": "string"}}},
        },
        **errors(400, 401, 404, 409),
    },
)
def reply(request_id: RequestId, who: Caller, store: Store, directory: Organisation) -> Response:
    record = _owned(store, who, request_id)
    if record["decision"] == "expired" or (record["answer"] is None and has_started(record)):
        raise ApiError(409, "the meeting has already begun: it is never answered")
    if record["answer"] is None and record["decision"] == "ask":
        raise ApiError(409, "this request waits for the user's answer; no reply yet")
    accept = (record["answer"] or record["decision"]) == "accept"
    rules = rules_of(store, directory, who.user)
    calendar = make_reply(
        read_calendar(bytes(record["ics"])),
        who.email,
        "ACCEPTED" if accept else "DECLINED",
        now(),
        rules.time_zone,
        rules.comment,
    )
    return Response(calendar.to_ical(), media_type="text/calendar; method=REPLY; charset=utf-8")


@router.put(
    "/api/calendar",
    operation_id="put_calendar",
    response_model=None,
    responses={200: {"model": CalendarStored}, **errors(400, 401, 413, 415)},
    openapi_extra=calendar_body(
        "Your own calendar (RFC 5545), read for conflicts", MAX_CALENDAR_BYTES
    ),
)
async def put_calendar(request: Request, who: Caller, store: Store) -> dict[str, Any]:
    data = await _body(request, MAX_CALENDAR_BYTES, "the calendar")
    calendar = _parse(data, "the calendar")
    store.set_calendar(who.user, data)
    return {"status": "stored", "events": len(list(calendar.walk("VEVENT")))}


@router.get(
    "/api/status",
    operation_id="status",
    response_model=None,
    responses={200: {"model": ServiceStatus}, **errors(401)},
)
def status(who: Caller, store: Store, learner: Model) -> dict[str, Any]:
    return store.counts() | learner.status()


@router.get(
    "/api/settings",
    operation_id="get_settings",
    response_model=None,
    responses={200: {"model": Settings}, **errors(401)},
)
def get_settings(who: Caller, store: Store, directory: Organisation) -> dict[str, Any]:
    return rules_of(store, directory, who.user).to_dict()


@router.put(
    "/api/settings",
    operation_id="put_settings",
    response_model=None,
    responses={200: {"model": Settings}, **errors(400, 401)},
    openapi_extra=SETTINGS_BODY,
)
async def put_settings(
    request: Request, who: Caller, store: Store, directory: Organisation
) -> dict[str, Any]:
    try:
        body = await request.json()
    except ValueError as error:
        raise ApiError(400, "the settings must be a JSON object") from error
    known = rules_of(store, directory, who.user).to_dict()
    changed = {**known, **body} if isinstance(body, dict) else body
    return store.set_rules(who.user, PersonRules.from_dict(changed)).to_dict()


def activity_csv(entries: list[dict[str, Any]]) -> str:
    """The record as CSV, one entry a line under a header; a text that a spreadsheet would
    read as a formula starts with an apostrophe.

    Examples
    --------
    >>> entry = dict.fromkeys(ACTIVITY_FIELDS, "") | {"summary": "=1+1", "p_accept": 0.9}
    >>> activity_csv([entry]).splitlines()[1].split(",")[7:12]
    ["'=1+1", '', '', '', '0.9']
    """
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=ACTIVITY_FIELDS, lineterminator="\r\n")
    writer.writeheader()
    for entry in entries:
        writer.writerow(
            {
                name: f"'{value}"
                if isinstance(value, str) and value[:1] in "=+-@" and value
                else value
                for name, value in entry.items()
            }
        )
    return out.getvalue()


@router.get(
    "/api/activity",
    operation_id="get_activity",
    response_model=None,
    responses={
        200: {
            "model": list[ActivityEntry],
            "description": "What the assistant did on your behalf, newest first: every decision "
            "(by the model or one of your rules), question, answer of yours, PARTSTAT written "
            "and reply sent; as JSON, or as CSV with format=csv",
            "content": {"text/csv": {"schema": {"type": "string"}}},
        },
        **errors(400, 401, 403, 404),
    },
)
def get_activity(
    who: Caller,
    store: Store,
    format: Annotated[Literal["json", "csv"], Query(description="json or csv")] = "json",
    limit: Annotated[int, Query(ge=1, le=100_000, description="At most this many")] = 1000,
    user: Annotated[
        str | None,
        Query(max_length=200, description="Another person's record (administrators only)"),
    ] = None,
) -> Response:
    person = who.user if user is None else user
    if person != who.user:
        if not who.admin:
            raise ApiError(403, "only an administrator reads another person's record")
        if not store.has_user(person):
            raise ApiError(404, f"no person {person!r}")
    entries = [{name: e[name] for name in ACTIVITY_FIELDS} for e in store.activity(person, limit)]
    if format == "csv":
        return Response(
            activity_csv(entries),
            media_type="text/csv; charset=utf-8",
            headers={"Content-Disposition": 'attachment; filename="activity.csv"'},
        )
    return JSONResponse(entries)

"""The HTTP API's contract as OpenAPI: response shapes, request bodies, status codes, links.

The models here document what the routes of :mod:`clusterednb.service.app` answer; the routes
build plain dicts, so a mismatch shows in the contract tests (schemathesis against the running
server), never as an error to a client. Every error of every route is :class:`ErrorBody`.
"""

from __future__ import annotations

from typing import Any, Literal
from zoneinfo import available_timezones

from pydantic import BaseModel, Field

MAX_ID = 2**63 - 1
"""The largest request id (SQLite's INTEGER); a larger one is a 400, never a 500."""


class ApiError(Exception):
    """An error answered as ``{"error": message}`` with ``status`` (and ``headers``).

    Examples
    --------
    >>> error = ApiError(404, "no such request")
    >>> error.status, str(error)
    (404, 'no such request')
    """

    def __init__(self, status: int, message: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status, self.message, self.headers = status, message, headers


class ErrorBody(BaseModel):
    """Every error: ``{"error": "what was wrong"}``."""

    error: str = Field(description="What was wrong, in words")


class Reason(BaseModel):
    """One reason that pushed a decision: a feature's value and its log-odds of accepting."""

    feature: str
    value: str | None
    log_odds: float
    words: str | None = Field(default=None, description="The same in plain words")


class ExpectedLoss(BaseModel):
    """Posterior expected loss of each action under the user's costs."""

    accept: float
    decline: float


class StoredRequest(BaseModel):
    """An invitation as the service stored and decided it."""

    id: int = Field(ge=1, le=MAX_ID)
    uid: str
    recurrence_id: str | None
    sequence: int = Field(ge=0)
    summary: str
    organizer: str
    starts_at: str
    received_at: str
    decision: Literal["accept", "decline", "ask", "expired"]
    p_accept: float | None = Field(ge=0.0, le=1.0)
    expected_loss: ExpectedLoss | None
    reasons: list[Reason]
    missing: list[str]
    answer: Literal["accept", "decline"] | None
    warnings: list[str] | None = Field(
        default=None, description="Notes met on the way (only when there were any)"
    )


class Cancelled(BaseModel):
    """An organiser's cancellation closed the caller's pending questions about a meeting."""

    status: Literal["cancelled"]
    uid: str
    closed: int = Field(ge=0, description="How many unanswered invitations it closed")


class CalendarStored(BaseModel):
    """The user's calendar was stored."""

    status: Literal["stored"]
    events: int = Field(ge=0)


class ServiceStatus(BaseModel):
    """Counts of the store and the state of the organisation's model."""

    users: int = Field(ge=0)
    requests: int = Field(ge=0)
    answers: int = Field(ge=0)
    model: bool
    model_age_seconds: float | None
    clusters: int | None


class ActivityEntry(BaseModel):
    """One thing the assistant did on the person's behalf (newest first)."""

    at: str = Field(description="When, in UTC (ISO 8601)")
    action: str = Field(
        description='"decided", "asked", "answered" (by you), "ACCEPTED written on the '
        'calendar", "reply sent to the organiser (DECLINED)", ...'
    )
    request_id: int = Field(ge=1, le=MAX_ID)
    channel: Literal["api", "caldav", "mail"]
    uid: str
    recurrence_id: str
    sequence: int = Field(ge=0)
    summary: str
    organizer: str
    decision: Literal["accept", "decline", "ask", "expired"]
    decided_by: Literal["model", "rule", "you"]
    p_accept: float | None = Field(ge=0, le=1)
    reason: str = Field(description="The reasons in words (or the rule that decided)")


class Settings(BaseModel):
    """A person's rules, applied before the model, and reply choices
    (:class:`~clusterednb.meeting.rules.PersonRules`)."""

    time_zone: str = Field(description="IANA time zone of the hours and days below")
    working_hours: list[str] | None = Field(
        min_length=2, max_length=2, description='["09:00", "17:00"]; null: no such rule'
    )
    working_days: list[int] = Field(description="0 = Monday … 6 = Sunday")
    outside_hours: Literal["decline", "ask"]
    out_of_office: list[list[str]] = Field(
        description='Periods ["YYYY-MM-DD", "YYYY-MM-DD"], first and last day included'
    )
    while_away: Literal["decline", "ask"]
    on_ask: Literal["none", "tentative"] = Field(
        description="What an ask does on the calendar: leave it waiting, or answer TENTATIVE"
    )
    comment: str | None = Field(description="One sentence added to every reply (COMMENT)")


class FailingPass(BaseModel):
    """A person's pass that failed, or left a reply owed or an answer unwritten."""

    user: str
    kind: Literal["calendar", "mailbox"]
    server: str
    since: str | None = Field(description="When the failures began (UTC, ISO 8601)")
    error: str | None = Field(description="The last problem, in one line")


class Health(BaseModel):
    """The service answers; ``degraded`` while any person's pass fails."""

    status: Literal["ok", "degraded"]
    failing: list[FailingPass] | None = None


ERRORS = {
    400: "Bad input: the message names the value",
    401: "Missing, invalid or revoked API token",
    403: "Not yours to read: another person's record is for administrators",
    404: "No such request of yours (or no such person)",
    409: "The request waits for your answer, or its meeting has begun: no reply",
    413: "The body is too large",
    415: "The body is not text/calendar",
}


def errors(*codes: int) -> dict[int | str, dict[str, Any]]:
    """The ``responses`` entries of these error codes, each an :class:`ErrorBody`.

    Examples
    --------
    >>> sorted(errors(401, 404))
    [401, 404]
    """
    found: dict[int | str, dict[str, Any]] = {}
    for code in codes:
        found[code] = {"model": ErrorBody, "description": ERRORS[code]}
        if code == 401:
            found[code]["headers"] = {
                "WWW-Authenticate": {"description": "Bearer", "schema": {"type": "string"}}
            }
    return found


EXAMPLE_INVITATION = (
    "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//example//EN\r\nMETHOD:REQUEST\r\n"
    "BEGIN:VEVENT\r\nUID:planning-1@example.org\r\nDTSTAMP:20261201T090000Z\r\n"
    "DTSTART:20261210T140000Z\r\nDTEND:20261210T150000Z\r\nSUMMARY:Planning\r\n"
    "ORGANIZER:mailto:carol@example.org\r\n"
    "ATTENDEE;PARTSTAT=NEEDS-ACTION;RSVP=TRUE:mailto:ann@example.org\r\n"
    "END:VEVENT\r\nEND:VCALENDAR\r\n"
)


def calendar_body(description: str, max_bytes: int) -> dict[str, Any]:
    """An ``openapi_extra`` whose request body is iCalendar text (RFC 5545) of at most
    ``max_bytes``.

    Examples
    --------
    >>> list(calendar_body("an invitation", 10)["requestBody"]["content"])
    ['text/calendar']
    """
    return {
        "requestBody": {
            "required": True,
            "description": f"{description} (at most {max_bytes} bytes), for example:\n\n"
            + "".join(f"    {line}\n" for line in EXAMPLE_INVITATION.splitlines()),
            "content": {
                "text/calendar": {
                    "schema": {
                        "type": "string",
                        "minLength": 1,
                        "pattern": "^BEGIN:VCALENDAR",
                        "description": "iCalendar text; what JSON Schema cannot say (the "
                        "grammar of RFC 5545, the rules of RFC 5546) is checked by the "
                        "service and refused with a 400 naming the rule",
                    },
                }
            },
        }
    }


FEEDBACK_BODY = {
    "requestBody": {
        "required": True,
        "description": "The user's answer",
        "content": {
            "application/json": {
                "schema": {
                    "type": "object",
                    "properties": {"accepted": {"type": "boolean"}},
                    "required": ["accepted"],
                },
                "example": {"accepted": True},
            }
        },
    }
}

TIME_ZONES = sorted(available_timezones() - {"localtime", "Factory"}) or ["UTC"]
"""Every IANA time zone this machine knows: the settings' ``time_zone``."""

SETTINGS_BODY = {
    "requestBody": {
        "required": True,
        "description": "The settings to change (the others keep their values)",
        "content": {
            "application/json": {
                "schema": {
                    "type": "object",
                    "properties": {
                        "time_zone": {"enum": TIME_ZONES},
                        "working_hours": {
                            "type": ["array", "null"],
                            "items": {
                                "type": "string",
                                "pattern": "^([01][0-9]|2[0-3]):[0-5][0-9]$",
                            },
                            "minItems": 2,
                            "maxItems": 2,
                        },
                        "working_days": {
                            "type": "array",
                            "items": {"type": "integer", "minimum": 0, "maximum": 6},
                        },
                        "outside_hours": {"enum": ["decline", "ask"]},
                        "out_of_office": {
                            "type": "array",
                            "items": {
                                "type": "array",
                                "items": {"type": "string", "format": "date"},
                                "minItems": 2,
                                "maxItems": 2,
                            },
                        },
                        "while_away": {"enum": ["decline", "ask"]},
                        "on_ask": {"enum": ["none", "tentative"]},
                        "comment": {"type": ["string", "null"], "maxLength": 500},
                    },
                    "additionalProperties": False,
                },
                "example": {
                    "time_zone": "Europe/London",
                    "working_hours": ["09:00", "17:00"],
                    "out_of_office": [["2026-12-21", "2027-01-01"]],
                    "on_ask": "tentative",
                },
            }
        },
    }
}

REQUEST_LINKS = {
    "GetRequest": {
        "operationId": "get_request",
        "parameters": {"request_id": "$response.body#/id"},
    },
    "GiveFeedback": {
        "operationId": "give_feedback",
        "parameters": {"request_id": "$response.body#/id"},
    },
    "GetReply": {
        "operationId": "get_reply",
        "parameters": {"request_id": "$response.body#/id"},
    },
}


def without_validation_errors(schema: dict[str, Any]) -> dict[str, Any]:
    """The generated schema without FastAPI's 422 answers, which this service never gives
    (a request that fails validation is a 400 :class:`ErrorBody`, documented per route).

    Examples
    --------
    >>> schema = {"paths": {"/a": {"get": {"responses": {"200": {}, "422": {}}}}},
    ...           "components": {"schemas": {"HTTPValidationError": {}, "ValidationError": {}}}}
    >>> without_validation_errors(schema)
    {'paths': {'/a': {'get': {'responses': {'200': {}}}}}, 'components': {'schemas': {}}}
    """
    for operations in schema.get("paths", {}).values():
        for operation in operations.values():
            operation.get("responses", {}).pop("422", None)
    components = schema.get("components", {}).get("schemas", {})
    for name in ("HTTPValidationError", "ValidationError"):
        components.pop(name, None)
    return schema

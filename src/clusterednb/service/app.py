"""The HTTP API and the review page (FastAPI); no model logic lives here.

Every error is JSON ``{"error": "..."}`` naming what was wrong; a bad request is a 4xx,
never a 5xx. A request id that is not the caller's is a 404 (never a 403), so the existence
of another user's request is not revealed.
"""

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Annotated, Any

import icalendar
from fastapi import Depends, FastAPI, Request
from fastapi import Path as PathParam
from fastapi.exceptions import RequestValidationError
from fastapi.openapi.utils import get_openapi
from fastapi.responses import JSONResponse, Response
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from starlette.exceptions import HTTPException as StarletteHTTPException

from clusterednb.exceptions import CNBError
from clusterednb.meeting.deciding import ASK_BAND
from clusterednb.meeting.directory import Directory
from clusterednb.meeting.invitation import read_calendar
from clusterednb.meeting.reply import make_reply
from clusterednb.meeting.rules import PersonRules, now
from clusterednb.service.accounts import Account
from clusterednb.service.api_schema import (
    FEEDBACK_BODY,
    MAX_ID,
    REQUEST_LINKS,
    SETTINGS_BODY,
    ApiError,
    CalendarStored,
    Cancelled,
    Health,
    ServiceStatus,
    Settings,
    StoredRequest,
    calendar_body,
    errors,
    without_validation_errors,
)
from clusterednb.service.health import METRICS_TYPE, health, metrics_text
from clusterednb.service.intake import receive_cancellation, receive_invitation
from clusterednb.service.learning import Learner
from clusterednb.service.pages import add_pages
from clusterednb.service.passes.schedule import CalendarPasses
from clusterednb.service.settings_tables import check_private
from clusterednb.service.store import ServiceStore
from clusterednb.service.views import has_started, public_record
from clusterednb.version import __version__

log = logging.getLogger("clusterednb.service")
MAX_REQUEST_BYTES = 1 << 20
MAX_CALENDAR_BYTES = 16 << 20


RequestId = Annotated[int, PathParam(ge=1, le=MAX_ID, description="The request's id")]
BEARER = HTTPBearer(
    auto_error=False,
    description="The API token that `cnb users add` printed: `Authorization: Bearer TOKEN`",
)


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
    if not data.strip():
        raise ApiError(400, f"{kind} is empty")
    try:
        return read_calendar(data)
    except (CNBError, RecursionError) as error:
        raise ApiError(400, f"{kind}: {error}") from error


def create_app(
    store_path: str | Path,
    directory_path: str | Path | None = None,
    model_path: str | Path | None = None,
    ask_band: float = ASK_BAND,
    debounce: float = 1.0,
    sync_every: float = 0.0,
    smtp: tuple[str, int] | None = None,
    sender: str | None = None,
) -> FastAPI:
    """The service's ASGI application.

    Parameters
    ----------
    store_path : str or Path
        The SQLite store (created when absent).
    directory_path : str or Path, optional
        The organisation's directory (jobs, relations, topics, sites, time zones).
    model_path : str or Path, optional
        The organisation's model: the base that every answer in the store updates.
    ask_band : float, default=ASK_BAND
        Expected-loss difference below which the service asks instead of deciding.
    debounce : float, default=1.0
        Seconds between an answer and the refit it triggers.
    sync_every : float, default=0.0
        Seconds between rounds of the registered people's calendar passes
        (:mod:`~clusterednb.service.passes.schedule`); 0: none.
    smtp : (host, port), optional
        The passes also mail the organisers their replies (from ``sender``).

    Examples
    --------
    The application answers on any ASGI server; here through httpx's in-process transport
    (which does not run the lifespan that opens the store, so only the schema is asked):

    >>> import asyncio, httpx
    >>> from clusterednb.models import examples as toy
    >>> app = create_app(toy.scratch_file("service.db"))
    >>> async def schema():
    ...     transport = httpx.ASGITransport(app=app)
    ...     async with httpx.AsyncClient(transport=transport, base_url="http://cnb") as client:
    ...         return (await client.get("/openapi.json")).status_code
    >>> asyncio.run(schema())
    200
    """
    directory = Directory.from_json(directory_path) if directory_path else None
    base = Path(model_path) if model_path else None
    state: dict[str, Any] = {}

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        store = ServiceStore(store_path)
        learner = Learner(store, base, debounce)
        learner.start()
        passes = None
        if sync_every > 0:
            if store.calendar_accounts() or store.mail_accounts():
                check_private(store_path)  # it holds passwords
            passes = CalendarPasses(
                store, learner.current, sync_every, directory, smtp, sender, ask_band
            )
            passes.start()
        state.update(store=store, learner=learner)
        yield
        if passes is not None:
            passes.stop()
        learner.stop()
        store.close()

    app = FastAPI(
        title="clusterednb meeting assistant",
        version=__version__,
        description="Decide or ask about meeting invitations under each person's costs; "
        'every error is JSON {"error": "..."}.',
        lifespan=lifespan,
    )

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            schema = get_openapi(
                title=app.title,
                version=app.version,
                description=app.description,
                routes=app.routes,
            )
            app.openapi_schema = without_validation_errors(schema)
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]

    @app.exception_handler(ApiError)
    async def api_error(_: Request, error: ApiError) -> JSONResponse:
        return JSONResponse(
            {"error": error.message}, status_code=error.status, headers=error.headers
        )

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, error: StarletteHTTPException) -> JSONResponse:
        headers = dict(getattr(error, "headers", None) or {})
        if error.status_code == 405:  # every method of every route on this path, not one's
            headers["Allow"] = ", ".join(_allowed_methods(app, request.url.path))
        return JSONResponse(
            {"error": str(error.detail)}, status_code=error.status_code, headers=headers
        )

    @app.exception_handler(RequestValidationError)
    async def validation_error(_: Request, error: RequestValidationError) -> JSONResponse:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e.get('loc', ()))}: {e.get('msg')}" for e in error.errors()
        )
        return JSONResponse({"error": f"bad request: {problems}"}, status_code=400)

    @app.exception_handler(CNBError)
    async def input_error(_: Request, error: CNBError) -> JSONResponse:
        return JSONResponse({"error": str(error)}, status_code=400)

    @app.exception_handler(Exception)
    async def internal_error(_: Request, error: Exception) -> JSONResponse:
        log.exception("internal error")
        return JSONResponse({"error": "internal error (logged)"}, status_code=500)

    def store() -> ServiceStore:
        return state["store"]

    def account(
        credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(BEARER)],
    ) -> Account:
        found = store().authenticate(credentials.credentials.strip()) if credentials else None
        if found is None:
            raise ApiError(
                401,
                "missing, invalid or revoked API token (Authorization: Bearer)",
                {"WWW-Authenticate": "Bearer"},
            )
        return found

    Caller = Annotated[Account, Depends(account)]

    def rules_of(user: str) -> PersonRules:
        entry = directory.users.get(user) if directory else None
        return store().rules(user, entry.timezone if entry else "UTC")

    # ------------------------------------------------------------------ API
    @app.get(
        "/healthz", operation_id="health", response_model=None, responses={200: {"model": Health}}
    )
    def healthz() -> dict[str, Any]:
        return health(store())

    @app.get(
        "/metrics",
        operation_id="metrics",
        response_class=Response,
        responses={
            200: {
                "description": "Passes, failing people, the outbox and unwritten answers, in "
                "Prometheus' text format",
                "content": {"text/plain": {"schema": {"type": "string"}}},
            }
        },
    )
    def metrics() -> Response:
        return Response(metrics_text(store()), media_type=METRICS_TYPE)

    @app.post(
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
            "An iTIP REQUEST (RFC 5546) with one VEVENT inviting you, or the organiser's "
            "CANCEL of one",
            MAX_REQUEST_BYTES,
        ),
    )
    async def post_request(request: Request, who: Caller) -> JSONResponse:
        data = await _body(request, MAX_REQUEST_BYTES, "the request")
        calendar = _parse(data, "the request")
        if str(calendar.get("METHOD", "")).upper() == "CANCEL":
            return JSONResponse(receive_cancellation(store(), who, calendar), status_code=200)
        stored, created, notes = receive_invitation(
            store(), state["learner"].current(), directory, who, calendar, data, ask_band
        )
        body = public_record(stored) | ({"warnings": notes} if notes else {})
        return JSONResponse(body, status_code=201 if created else 200)

    @app.get(
        "/api/requests",
        operation_id="list_requests",
        response_model=None,
        responses={200: {"model": list[StoredRequest]}, **errors(401)},
    )
    def list_requests(who: Caller) -> list[dict[str, Any]]:
        return [public_record(r) for r in store().requests(who.user)]

    def owned(who: Account, request_id: int) -> dict[str, Any]:
        record = store().request(who.user, request_id)
        if record is None:
            raise ApiError(404, f"no request {request_id}")
        return record

    @app.get(
        "/api/requests/{request_id}",
        operation_id="get_request",
        response_model=None,
        responses={200: {"model": StoredRequest}, **errors(400, 401, 404)},
    )
    def get_request(request_id: RequestId, who: Caller) -> dict[str, Any]:
        return public_record(owned(who, request_id))

    @app.post(
        "/api/requests/{request_id}/feedback",
        operation_id="give_feedback",
        response_model=None,
        responses={200: {"model": StoredRequest}, **errors(400, 401, 404)},
        openapi_extra=FEEDBACK_BODY,
    )
    async def feedback(request_id: RequestId, request: Request, who: Caller) -> dict[str, Any]:
        owned(who, request_id)
        try:
            body = await request.json()
        except ValueError as error:
            raise ApiError(400, 'feedback must be JSON {"accepted": true|false}') from error
        if not isinstance(body, dict) or not isinstance(body.get("accepted"), bool):
            raise ApiError(400, 'feedback must be JSON {"accepted": true|false}')
        record = store().answer(who.user, request_id, body["accepted"])
        state["learner"].request_refit()
        return public_record(record)

    @app.get(
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
    def reply(request_id: RequestId, who: Caller) -> Response:
        record = owned(who, request_id)
        if record["decision"] == "expired" or (record["answer"] is None and has_started(record)):
            raise ApiError(409, "the meeting has already begun: it is never answered")
        if record["answer"] is None and record["decision"] == "ask":
            raise ApiError(409, "this request waits for the user's answer; no reply yet")
        accept = (record["answer"] or record["decision"]) == "accept"
        rules = rules_of(who.user)
        calendar = make_reply(
            read_calendar(bytes(record["ics"])),
            who.email,
            "ACCEPTED" if accept else "DECLINED",
            now(),
            rules.time_zone,
            rules.comment,
        )
        return Response(calendar.to_ical(), media_type="text/calendar; method=REPLY; charset=utf-8")

    @app.put(
        "/api/calendar",
        operation_id="put_calendar",
        response_model=None,
        responses={200: {"model": CalendarStored}, **errors(400, 401, 413, 415)},
        openapi_extra=calendar_body(
            "Your own calendar (RFC 5545), read for conflicts", MAX_CALENDAR_BYTES
        ),
    )
    async def put_calendar(request: Request, who: Caller) -> dict[str, Any]:
        data = await _body(request, MAX_CALENDAR_BYTES, "the calendar")
        calendar = _parse(data, "the calendar")
        store().set_calendar(who.user, data)
        return {"status": "stored", "events": len(list(calendar.walk("VEVENT")))}

    @app.get(
        "/api/status",
        operation_id="status",
        response_model=None,
        responses={200: {"model": ServiceStatus}, **errors(401)},
    )
    def status(who: Caller) -> dict[str, Any]:
        return store().counts() | state["learner"].status()

    # ------------------------------------------------------------------ settings
    @app.get(
        "/api/settings",
        operation_id="get_settings",
        response_model=None,
        responses={200: {"model": Settings}, **errors(401)},
    )
    def get_settings(who: Caller) -> dict[str, Any]:
        return rules_of(who.user).to_dict()

    @app.put(
        "/api/settings",
        operation_id="put_settings",
        response_model=None,
        responses={200: {"model": Settings}, **errors(400, 401)},
        openapi_extra=SETTINGS_BODY,
    )
    async def put_settings(request: Request, who: Caller) -> dict[str, Any]:
        try:
            body = await request.json()
        except ValueError as error:
            raise ApiError(400, "the settings must be a JSON object") from error
        changed = {**rules_of(who.user).to_dict(), **body} if isinstance(body, dict) else body
        return store().set_rules(who.user, PersonRules.from_dict(changed)).to_dict()

    add_pages(app, store, state, rules_of)
    return app


def _allowed_methods(app: FastAPI, path: str) -> list[str]:
    """The methods of every route whose path matches ``path``, sorted."""
    methods: set[str] = set()
    for route in app.routes:
        pattern = getattr(route, "path_regex", None)
        if pattern is not None and pattern.match(path):
            methods |= set(getattr(route, "methods", None) or ())
    return sorted(methods)

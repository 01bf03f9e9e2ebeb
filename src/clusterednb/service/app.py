"""The HTTP API and the review page (FastAPI); no model logic lives here.

Every error is JSON ``{"error": "..."}`` naming what was wrong; a bad request is a 4xx,
never a 5xx. A request id that is not the caller's is a 404 (never a 403), so the existence
of another user's request is not revealed.
"""

import datetime as dt
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Annotated, Any
from zoneinfo import ZoneInfo

import icalendar
from fastapi import Depends, FastAPI, Request
from fastapi import Path as PathParam
from fastapi.exceptions import RequestValidationError
from fastapi.openapi.utils import get_openapi
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from fastapi.templating import Jinja2Templates
from starlette.exceptions import HTTPException as StarletteHTTPException

from clusterednb.exceptions import CNBError
from clusterednb.meeting.deciding import ASK_BAND
from clusterednb.meeting.directory import Directory
from clusterednb.meeting.invitation import read_calendar
from clusterednb.meeting.reply import make_reply
from clusterednb.service.accounts import Account
from clusterednb.service.api_schema import (
    FEEDBACK_BODY,
    MAX_ID,
    REQUEST_LINKS,
    CalendarStored,
    Cancelled,
    Health,
    ServiceStatus,
    StoredRequest,
    calendar_body,
    errors,
    without_validation_errors,
)
from clusterednb.service.intake import receive_cancellation, receive_invitation
from clusterednb.service.learning import Learner
from clusterednb.service.store import ServiceStore
from clusterednb.service.views import page_row, public_record
from clusterednb.version import __version__

log = logging.getLogger("clusterednb.service")
MAX_REQUEST_BYTES = 1 << 20
MAX_CALENDAR_BYTES = 16 << 20
SESSION_COOKIE = "cnb_session"
TEMPLATES = Jinja2Templates(directory=str(Path(__file__).parent / "templates"))


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

    Examples
    --------
    The application answers on any ASGI server; here through httpx's in-process transport:

    >>> import asyncio, httpx
    >>> from clusterednb.models import examples as toy
    >>> app = create_app(toy.scratch_file("service.db"))
    >>> async def health():
    ...     transport = httpx.ASGITransport(app=app)
    ...     async with httpx.AsyncClient(transport=transport, base_url="http://cnb") as client:
    ...         return (await client.get("/healthz")).status_code
    >>> asyncio.run(health())
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
        state.update(store=store, learner=learner)
        yield
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

    def zone_of(user: str) -> ZoneInfo:
        entry = directory.users.get(user) if directory else None
        return ZoneInfo(entry.timezone) if entry else ZoneInfo("UTC")

    # ------------------------------------------------------------------ API
    @app.get(
        "/healthz", operation_id="health", response_model=None, responses={200: {"model": Health}}
    )
    def healthz() -> dict[str, str]:
        return {"status": "ok"}

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
        if record["answer"] is None and record["decision"] == "ask":
            raise ApiError(409, "this request waits for the user's answer; no reply yet")
        accept = (record["answer"] or record["decision"]) == "accept"
        entry = directory.users.get(who.user) if directory else None
        calendar = make_reply(
            read_calendar(bytes(record["ics"])),
            who.email,
            accept,
            dt.datetime.now(dt.UTC),
            entry.timezone if entry else "UTC",
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

    # ------------------------------------------------------------------ pages
    def session_of(request: Request) -> tuple[Account, str] | None:
        cookie = request.cookies.get(SESSION_COOKIE)
        return store().session(cookie) if cookie else None

    # The pages answer HTML to a browser and are left out of the API's schema.
    @app.get("/login", response_class=HTMLResponse, include_in_schema=False)
    def login_form(request: Request) -> HTMLResponse:
        return TEMPLATES.TemplateResponse(request, "login.html", {"error": None})

    @app.post("/login", response_class=HTMLResponse, include_in_schema=False)
    async def login(request: Request) -> Response:
        form = await request.form()
        token = str(form.get("token", "")).strip()
        found = store().authenticate(token)
        if found is None:
            context = {"error": "That token is not valid (or was revoked)."}
            return TEMPLATES.TemplateResponse(request, "login.html", context)
        session, _ = store().open_session(found.user)
        response = RedirectResponse("/", status_code=303)
        response.set_cookie(
            SESSION_COOKIE, session, httponly=True, samesite="strict", max_age=12 * 3600
        )
        return response

    @app.post("/logout", include_in_schema=False)
    async def logout(request: Request) -> Response:
        found = session_of(request)
        form = await request.form()
        if found is not None and form.get("csrf") == found[1]:
            store().close_session(request.cookies[SESSION_COOKIE])
        response = RedirectResponse("/login", status_code=303)
        response.delete_cookie(SESSION_COOKIE)
        return response

    @app.get("/", response_class=HTMLResponse, include_in_schema=False)
    def review(request: Request, show: str = "all") -> Response:
        found = session_of(request)
        if found is None:
            return RedirectResponse("/login", status_code=303)
        who, csrf = found
        pending_only = show == "pending"
        records = store().requests(who.user)
        waiting = [r for r in records if r["decision"] == "ask" and r["answer"] is None]
        zone = zone_of(who.user)
        shown = waiting if pending_only else records
        rows = [page_row(r, zone) for r in shown]
        context = {
            "who": who,
            "csrf": csrf,
            "rows": rows,
            "show": "pending" if pending_only else "all",
            "n_pending": len(waiting),
        }
        return TEMPLATES.TemplateResponse(request, "review.html", context)

    @app.post("/requests/{request_id}/answer", include_in_schema=False)
    async def answer(request_id: RequestId, request: Request) -> Response:
        found = session_of(request)
        if found is None:
            raise ApiError(401, "sign in first")
        who, csrf = found
        form = await request.form()
        if form.get("csrf") != csrf:
            raise ApiError(403, "the form's CSRF token is missing or wrong; reload the page")
        if form.get("accepted") not in ("yes", "no"):
            raise ApiError(400, "accepted must be yes or no")
        if store().answer(who.user, request_id, form["accepted"] == "yes") is None:
            raise ApiError(404, f"no request {request_id}")
        state["learner"].request_refit()
        return RedirectResponse(f"/?show={form.get('show', 'all')}", status_code=303)

    return app


def _allowed_methods(app: FastAPI, path: str) -> list[str]:
    """The methods of every route whose path matches ``path``, sorted."""
    methods: set[str] = set()
    for route in app.routes:
        pattern = getattr(route, "path_regex", None)
        if pattern is not None and pattern.match(path):
            methods |= set(getattr(route, "methods", None) or ())
    return sorted(methods)

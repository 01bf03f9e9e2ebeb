"""The HTTP service's ASGI application: its lifespan (the store, the learner, the scheduled
passes), its error handlers and its routers; no model logic lives here.

Every error is JSON ``{"error": "..."}`` naming what was wrong; a bad request is a 4xx,
never a 5xx. The routes live in :mod:`~clusterednb.service.health`,
:mod:`~clusterednb.service.api_routes` and :mod:`~clusterednb.service.pages`.
"""

import logging
import secrets
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.openapi.utils import get_openapi
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.routing import Match

from clusterednb.exceptions import CNBError
from clusterednb.meeting.deciding import ASK_BAND
from clusterednb.meeting.directory import Directory
from clusterednb.meeting.errors import MeetingError
from clusterednb.service import api_routes, health, pages
from clusterednb.service.activity_tables import KEEP_ACTIVITY_DAYS
from clusterednb.service.api_schema import ApiError, without_validation_errors
from clusterednb.service.learning import Learner
from clusterednb.service.passes.schedule import CalendarPasses
from clusterednb.service.settings_tables import check_private
from clusterednb.service.sign_in.provider import OidcSettings
from clusterednb.service.store import ServiceStore
from clusterednb.version import __version__

log = logging.getLogger("clusterednb.service")


def create_app(
    store_path: str | Path,
    directory_path: str | Path | None = None,
    model_path: str | Path | None = None,
    ask_band: float = ASK_BAND,
    debounce: float = 1.0,
    sync_every: float = 0.0,
    smtp: tuple[str, int] | None = None,
    sender: str | None = None,
    keep_activity_days: float = KEEP_ACTIVITY_DAYS,
    sign_in: OidcSettings | None = None,
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
    keep_activity_days : float, default=365
        Days an entry of the record of what the assistant did is kept
        (:mod:`~clusterednb.service.activity_tables`).
    sign_in : OidcSettings, optional
        People sign in through the organisation's OpenID Connect provider
        (:mod:`~clusterednb.service.sign_in`) instead of pasting a token; API tokens still
        open the API.

    Examples
    --------
    The application answers on any ASGI server; here through httpx's in-process transport
    (which does not run the lifespan that opens the store, so only the schema is asked):

    >>> import asyncio, httpx
    >>> from clusterednb.examples import models as toy
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

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        store = ServiceStore(store_path)
        store.keep_activity_days = keep_activity_days
        learner = Learner(store, base, debounce)
        learner.start()
        every = sync_every if sync_every > 0 else 60.0  # an administrator may run one anyway
        passes = CalendarPasses(store, learner.current, every, directory, smtp, sender, ask_band)
        if sync_every > 0:
            if store.calendar_accounts() or store.mail_accounts():
                check_private(store_path)  # it holds passwords
            passes.start()
        app.state.store, app.state.learner, app.state.passes = store, learner, passes
        yield
        if sync_every > 0:
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
    app.state.directory, app.state.ask_band = directory, ask_band
    app.openapi = _schema_of(app)  # type: ignore[method-assign]
    _add_error_handlers(app)
    for router in (health.router, api_routes.router, pages.router):
        app.include_router(router)
    app.state.sign_in = _add_sign_in(app, sign_in) if sign_in else None
    return app


def _add_sign_in(app: FastAPI, settings: OidcSettings) -> Any:
    """The organisation's sign-in routes, and the short-lived cookie that carries the state,
    nonce and PKCE verifier across the provider's redirect (SameSite=Lax, ten minutes, signed
    with a key that lives as long as the process; it opens nothing by itself)."""
    try:
        from starlette.middleware.sessions import SessionMiddleware

        from clusterednb.service.sign_in import routes
    except ImportError as error:
        raise MeetingError(
            f"sign-in with an OpenID Connect provider needs the oidc extra ({error.name} is "
            "missing): pip install 'clusterednb[service,oidc]'"
        ) from None
    app.add_middleware(
        SessionMiddleware,
        secret_key=secrets.token_urlsafe(32),
        session_cookie="cnb_sign_in",
        max_age=600,
        same_site="lax",
    )
    app.include_router(routes.router)
    return routes.OrganisationSignIn.of(settings)


def _schema_of(app: FastAPI) -> Callable[[], dict[str, Any]]:
    """The app's OpenAPI schema, built once, without FastAPI's generic 422 answers."""

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

    return openapi


async def _api_error(_: Request, error: ApiError) -> JSONResponse:
    return JSONResponse({"error": error.message}, status_code=error.status, headers=error.headers)


async def _http_error(request: Request, error: StarletteHTTPException) -> JSONResponse:
    headers = dict(getattr(error, "headers", None) or {})
    if error.status_code == 405:  # every method of every route on this path, not one's
        headers["Allow"] = ", ".join(_allowed_methods(request))
    return JSONResponse(
        {"error": str(error.detail)}, status_code=error.status_code, headers=headers
    )


async def _validation_error(_: Request, error: RequestValidationError) -> JSONResponse:
    problems = "; ".join(
        f"{'.'.join(str(p) for p in e.get('loc', ()))}: {e.get('msg')}" for e in error.errors()
    )
    return JSONResponse({"error": f"bad request: {problems}"}, status_code=400)


async def _input_error(_: Request, error: CNBError) -> JSONResponse:
    return JSONResponse({"error": str(error)}, status_code=400)


async def _internal_error(_: Request, error: Exception) -> JSONResponse:
    log.exception("internal error")
    return JSONResponse({"error": "internal error (logged)"}, status_code=500)


def _add_error_handlers(app: FastAPI) -> None:
    """Every error answered as JSON ``{"error": ...}``: 4xx for what the caller sent."""
    app.add_exception_handler(ApiError, _api_error)
    app.add_exception_handler(StarletteHTTPException, _http_error)
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(CNBError, _input_error)
    app.add_exception_handler(Exception, _internal_error)


HTTP_METHODS = ("DELETE", "GET", "HEAD", "OPTIONS", "PATCH", "POST", "PUT")


def _allowed_methods(request: Request) -> list[str]:
    """The methods some route of the app answers at the request's path, sorted (asked of the
    routes themselves, so routes included from routers count)."""
    allowed = []
    for method in HTTP_METHODS:
        scope = {**request.scope, "method": method}
        if any(route.matches(scope)[0] == Match.FULL for route in request.app.routes):
            allowed.append(method)
    return allowed

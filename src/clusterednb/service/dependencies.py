"""What a route needs, read from the running application's state: the store, the learner,
the organisation's directory and ask band, the signed-in caller and their rules.

:func:`~clusterednb.service.app.create_app` fills ``app.state`` (``directory`` and
``ask_band`` when it builds the app; ``store`` and ``learner`` when the lifespan opens them);
the routers in :mod:`~clusterednb.service.api_routes`, :mod:`~clusterednb.service.health` and
:mod:`~clusterednb.service.pages` ask for them through FastAPI's ``Depends``.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from clusterednb.meeting.directory import Directory
from clusterednb.meeting.rules import PersonRules
from clusterednb.service.accounts import Account
from clusterednb.service.api_schema import ApiError
from clusterednb.service.learning import Learner
from clusterednb.service.store import ServiceStore

BEARER = HTTPBearer(
    auto_error=False,
    description="The API token that `cnb users add` printed: `Authorization: Bearer TOKEN`",
)


def store_of(request: Request) -> ServiceStore:
    """The application's open store."""
    return request.app.state.store


def learner_of(request: Request) -> Learner:
    """The application's learner (the current model and the refits answers trigger)."""
    return request.app.state.learner


def directory_of(request: Request) -> Directory | None:
    """The organisation's directory, when the service was given one."""
    return request.app.state.directory


def ask_band_of(request: Request) -> float:
    """The expected-loss difference below which the service asks."""
    return request.app.state.ask_band


Store = Annotated[ServiceStore, Depends(store_of)]
Model = Annotated[Learner, Depends(learner_of)]
Organisation = Annotated[Directory | None, Depends(directory_of)]


def caller(
    store: Store,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(BEARER)],
) -> Account:
    """The account whose API token the request carries (else 401)."""
    found = store.authenticate(credentials.credentials.strip()) if credentials else None
    if found is None:
        raise ApiError(
            401,
            "missing, invalid or revoked API token (Authorization: Bearer)",
            {"WWW-Authenticate": "Bearer"},
        )
    return found


Caller = Annotated[Account, Depends(caller)]


def rules_of(store: ServiceStore, directory: Directory | None, user: str) -> PersonRules:
    """The person's rules, in their directory time zone (UTC when the directory is silent)."""
    entry = directory.users.get(user) if directory else None
    return store.rules(user, entry.timezone if entry else "UTC")

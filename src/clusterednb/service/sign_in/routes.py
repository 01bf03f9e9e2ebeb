"""The sign-in routes: ``/auth/login`` sends the browser to the organisation's provider
(authorization code with PKCE and a nonce), ``/auth/callback`` takes it back, and the ID token
it brings opens a session of the person it names.

Authlib does the protocol: the provider's discovery document and JWKS, the code exchange as a
confidential client, the ID token's signature and its ``iss``, ``aud``, ``exp`` and ``nonce``.
The state, nonce and PKCE verifier wait for the provider's answer in a signed cookie with
``SameSite=Lax`` (a ``Strict`` cookie is not sent when the provider, another site, sends the
browser back). The session that the callback opens is the page's usual ``Strict`` cookie; the
callback hands over to the review page with a page of its own, so that the first request that
carries the cookie starts on this site.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from authlib.common.errors import AuthlibBaseError
from authlib.integrations.starlette_client import OAuth
from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response
from joserfc.errors import JoseError

from clusterednb.service.dependencies import Store
from clusterednb.service.pages import TEMPLATES, set_session_cookie
from clusterednb.service.sign_in.provider import SCOPES, OidcSettings, SignInRefused, person_of

try:  # the HTTP client Authlib uses: httpx2 where installed, else httpx
    import httpx2 as http_client
except ImportError:  # pragma: no cover - an older install
    import httpx as http_client

ID_TOKEN_LEEWAY = 60
"""Seconds of clock difference allowed with the provider on ``exp``, ``iat`` and ``nbf``."""
NETWORK_ERRORS = (http_client.HTTPError, OSError)
log = logging.getLogger("clusterednb.service.sign_in")
router = APIRouter(include_in_schema=False)


@dataclass
class OrganisationSignIn:
    """The configured provider and Authlib's client of it (``app.state.sign_in``)."""

    settings: OidcSettings
    client: Any

    @classmethod
    def of(cls, settings: OidcSettings) -> OrganisationSignIn:
        """A client registered with the provider's discovery document (fetched when first
        needed, so the service starts while the provider is down)."""
        oauth = OAuth()
        oauth.register(
            "organisation",
            server_metadata_url=settings.discovery_url,
            client_id=settings.client_id,
            client_secret=settings.client_secret,
            client_kwargs={
                "scope": SCOPES,
                "code_challenge_method": "S256",
                "token_endpoint_auth_method": "client_secret_basic",
            },
        )
        return cls(settings, oauth.create_client("organisation"))

    async def id_token_rules(self) -> dict[str, Any]:
        """What the ID token must say: this issuer (as the discovery document names it, which
        must be the configured one) and this client among its audiences. Authlib checks
        ``aud`` only when told to; the signature, ``exp``, ``iat`` and ``nonce`` it always
        checks."""
        metadata = await self.client.load_server_metadata()
        issuer = str(metadata.get("issuer", ""))
        if issuer.rstrip("/") != self.settings.issuer.rstrip("/"):
            raise SignInRefused(
                f"the provider calls itself {issuer!r}, not the configured --oidc-issuer "
                f"{self.settings.issuer!r}"
            )
        return {
            "iss": {"essential": True, "values": [issuer]},
            "aud": {"essential": True, "values": [self.settings.client_id]},
        }

    async def logout_redirect(self, request: Request) -> Response | None:
        """The provider's end-session page (RP-initiated logout), back to ``/login``; None
        when the provider offers none or cannot be asked."""
        try:
            metadata = await self.client.load_server_metadata()
            if not metadata.get("end_session_endpoint"):
                return None
            return await self.client.logout_redirect(
                request,
                post_logout_redirect_uri=str(request.url_for("login_form")),
                client_id=self.settings.client_id,
            )
        except (*NETWORK_ERRORS, AuthlibBaseError) as error:
            log.warning("the provider's logout could not be asked: %s", error)
            return None


def _sign_in(request: Request) -> OrganisationSignIn:
    return request.app.state.sign_in


def _result_page(request: Request, status: int, message: str) -> HTMLResponse:
    context = {"message": message, "status": status}
    return TEMPLATES.TemplateResponse(request, "sign_in_result.html", context, status_code=status)


@router.get("/auth/login")
async def oidc_login(request: Request) -> Response:
    """Send the browser to the provider's sign-in."""
    redirect_uri = str(request.url_for("oidc_callback"))
    try:
        return await _sign_in(request).client.authorize_redirect(request, redirect_uri)
    except (*NETWORK_ERRORS, AuthlibBaseError) as error:
        log.warning("the identity provider did not answer: %s", error)
        return _result_page(request, 503, "The organisation's sign-in did not answer; try again.")


@router.get("/auth/callback")
async def oidc_callback(request: Request, store: Store) -> Response:
    """The provider's answer: check the ID token, open the person's session."""
    sign_in = _sign_in(request)
    refused_there = request.query_params.get("error")
    if refused_there:  # the person cancelled, or the provider refused: said as it said it
        reason = request.query_params.get("error_description") or refused_there
        return _result_page(
            request, 400, f"Sign-in failed: {reason[:200]}. Start again from /login."
        )
    try:
        rules = await sign_in.id_token_rules()
        token = await sign_in.client.authorize_access_token(
            request, claims_options=rules, leeway=ID_TOKEN_LEEWAY
        )
        account, admin = person_of(store, token["userinfo"], sign_in.settings.admin_group)
    except SignInRefused as refused:
        log.info("sign-in refused: %s", refused)
        return _result_page(request, 403, f"You cannot sign in here: {refused}.")
    except (AuthlibBaseError, JoseError, KeyError) as error:
        reason = getattr(error, "description", None) or getattr(error, "error", None) or error
        log.warning("sign-in failed: %s", reason)
        return _result_page(request, 400, f"Sign-in failed: {reason}. Start again from /login.")
    except NETWORK_ERRORS as error:
        log.warning("the identity provider did not answer: %s", error)
        return _result_page(request, 503, "The organisation's sign-in did not answer; try again.")
    session, _ = store.open_session(account.user, admin=admin, via="oidc")
    log.info("%s signed in through the organisation's provider", account.user)
    response = TEMPLATES.TemplateResponse(
        request, "sign_in_result.html", {"message": None, "status": 200, "who": account}
    )
    set_session_cookie(response, session)
    return response

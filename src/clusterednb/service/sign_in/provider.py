"""The organisation's OpenID Connect provider as the service knows it: issuer, client, the
administrators' group, and who an ID token's claims name.

The protocol itself (discovery, JWKS, the ID token's signature and its ``iss``, ``aud``,
``exp`` and ``nonce`` checks, PKCE) is Authlib's (:mod:`~clusterednb.service.sign_in.routes`);
this module holds what the service decides: which claims it trusts and which person they open.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from clusterednb.meeting.errors import MeetingError
from clusterednb.service.accounts import Account
from clusterednb.service.settings_tables import check_private
from clusterednb.service.store import ServiceStore

SCOPES = "openid email profile"
"""What the service asks of the provider: the ID token with the person's address."""


class SignInRefused(Exception):
    """The provider vouched for someone the service does not let in; the message says why."""


@dataclass(frozen=True)
class OidcSettings:
    """``cnb serve --oidc-issuer URL --oidc-client-id ID --oidc-client-secret-file FILE
    [--oidc-admin-group NAME]``.

    Attributes
    ----------
    issuer : str
        The provider's issuer URL; its discovery document is
        ``ISSUER/.well-known/openid-configuration``.
    client_id : str
        This service's client id at the provider (a confidential client).
    client_secret : str
        Its secret, read from a file only the service's account may read (never a flag).
    admin_group : str or None
        People in this group (the ID token's ``groups`` claim) administer the service while
        signed in this way.

    Examples
    --------
    >>> settings = OidcSettings("https://login.example.org/realms/staff", "cnb", "s3cret")
    >>> settings.discovery_url
    'https://login.example.org/realms/staff/.well-known/openid-configuration'
    >>> "s3cret" in repr(settings)
    False
    """

    issuer: str
    client_id: str
    client_secret: str = field(repr=False)
    admin_group: str | None = None

    @property
    def discovery_url(self) -> str:
        """Where the provider describes itself."""
        return self.issuer.rstrip("/") + "/.well-known/openid-configuration"

    @classmethod
    def from_options(
        cls, issuer: str, client_id: str | None, secret_file: Path | None, admin_group: str | None
    ) -> OidcSettings:
        """Settings from the command line's values, each checked (the secret from its file).

        Examples
        --------
        >>> OidcSettings.from_options("ftp://idp", "cnb", None, None)
        Traceback (most recent call last):
        ...
        clusterednb.meeting.errors.MeetingError: --oidc-issuer must be an http(s) URL, got 'ftp://idp'
        """
        if not issuer.startswith(("https://", "http://")):
            raise MeetingError(f"--oidc-issuer must be an http(s) URL, got {issuer!r}")
        if not client_id:
            raise MeetingError("--oidc-issuer needs --oidc-client-id")
        if secret_file is None:
            raise MeetingError("--oidc-issuer needs --oidc-client-secret-file")
        return cls(issuer, client_id, read_secret(secret_file), admin_group or None)


def read_secret(path: Path) -> str:
    """The client secret kept in ``path`` (refused when missing, empty or readable by others).

    Examples
    --------
    >>> from clusterednb.examples import models as toy
    >>> path = toy.scratch_file("secret")
    >>> _ = path.write_text("s3cret\\n")
    >>> path.chmod(0o600)
    >>> read_secret(path)
    's3cret'
    >>> path.chmod(0o644)
    >>> read_secret(path)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    clusterednb.meeting.errors.MeetingError: .../secret holds passwords but other accounts ...
    """
    if not path.is_file():
        raise MeetingError(f"--oidc-client-secret-file: {path} is not a file")
    check_private(path)
    secret = path.read_text(encoding="utf-8").strip()
    if not secret:
        raise MeetingError(f"--oidc-client-secret-file: {path} is empty")
    return secret


def verified_email(claims: Mapping[str, Any]) -> str:
    """The address the provider vouches for: ``email`` with ``email_verified`` true (or
    Microsoft Entra ID's ``xms_edov``, its "email domain owner verified" claim).

    Examples
    --------
    >>> verified_email({"email": "ann@example.org", "email_verified": True})
    'ann@example.org'
    >>> verified_email({"email": "ann@example.org", "email_verified": False})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    clusterednb.service.sign_in.provider.SignInRefused: the provider did not verify ...
    """
    email = claims.get("email")
    if not isinstance(email, str) or "@" not in email:
        raise SignInRefused("the provider sent no email address (ask for the 'email' scope)")
    if claims.get("email_verified") is not True and claims.get("xms_edov") is not True:
        raise SignInRefused(f"the provider did not verify the address {email}")
    return email


def person_of(
    store: ServiceStore, claims: Mapping[str, Any], admin_group: str | None
) -> tuple[Account, bool]:
    """The person an ID token's verified claims name, and whether the provider puts them in
    the administrators' group. Nobody is created: an unknown address is refused.

    Examples
    --------
    >>> from clusterednb.examples import service as toy
    >>> store, _ = toy.service_store()
    >>> claims = {"email": "Ann@Example.org", "email_verified": True, "groups": ["cnb-admins"]}
    >>> account, admin = person_of(store, claims, "cnb-admins")
    >>> account.user, admin
    ('ann', True)
    >>> person_of(store, {**claims, "email": "eve@example.org"}, None)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    clusterednb.service.sign_in.provider.SignInRefused: eve@example.org has no assistant here...
    """
    email = verified_email(claims)
    try:
        account = store.user_with_email(email)
    except MeetingError as error:
        raise SignInRefused(str(error)) from None
    if account is None:
        raise SignInRefused(
            f"{email} has no assistant here; ask an administrator to add you (cnb users add)"
        )
    groups = claims.get("groups") or []
    in_group = admin_group is not None and isinstance(groups, list) and admin_group in groups
    return account, in_group

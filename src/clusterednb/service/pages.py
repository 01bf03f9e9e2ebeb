"""The review page: sign in (with the API token, or through the organisation's provider:
:mod:`~clusterednb.service.sign_in`), see every request (local time, the probability
as the command line prints it, the reasons in words), answer the questions, set your rules.

Pages answer HTML to a browser and are left out of the API's schema. A browser session is a
cookie (HttpOnly, SameSite=Strict); every form carries the session's CSRF token.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from fastapi.templating import Jinja2Templates
from starlette.concurrency import run_in_threadpool

from clusterednb.meeting.errors import MeetingError
from clusterednb.meeting.rules import DAYS, PersonRules
from clusterednb.service.accounts import SESSION_HOURS, Account
from clusterednb.service.api_schema import ApiError
from clusterednb.service.dependencies import Model, Organisation, Store, rules_of
from clusterednb.service.learning import Learner
from clusterednb.service.passes.calendar_pass import check_caldav_login
from clusterednb.service.settings_tables import CalendarAccount
from clusterednb.service.store import ServiceStore
from clusterednb.service.views import activity_row, page_row

SESSION_COOKIE = "cnb_session"
TEMPLATES = Jinja2Templates(directory=str(Path(__file__).parent / "templates"))
_RANGE = re.compile(r"^\s*(\w+)\s*-\s*(\w+)\s*$")

router = APIRouter(include_in_schema=False)


def days_in_words(days: tuple[int, ...]) -> str:
    """Working days as the form shows them.

    Examples
    --------
    >>> days_in_words((0, 1, 2, 3, 4)), days_in_words((0, 2)), days_in_words(())
    ('Mon-Fri', 'Mon,Wed', '')
    """
    if len(days) > 2 and days == tuple(range(days[0], days[-1] + 1)):
        return f"{DAYS[days[0]]}-{DAYS[days[-1]]}"
    return ",".join(DAYS[d] for d in days)


def rules_from_form(form: dict[str, str]) -> dict[str, Any]:
    """The settings form's fields as :meth:`PersonRules.from_dict` reads them.

    Examples
    --------
    >>> data = rules_from_form({"working_hours": "09:00-17:00", "working_days": "Mon-Thu",
    ...                         "out_of_office": "2026-12-21..2027-01-01 2027-02-05"})
    >>> data["working_hours"], data["working_days"]
    (['09:00', '17:00'], [0, 1, 2, 3])
    >>> data["out_of_office"]
    [['2026-12-21', '2027-01-01'], ['2027-02-05', '2027-02-05']]
    """
    data: dict[str, Any] = {}
    for name in ("time_zone", "outside_hours", "while_away", "on_ask"):
        if form.get(name):
            data[name] = form[name].strip()
    if "working_hours" in form:
        hours = form["working_hours"].strip()
        data["working_hours"] = [part.strip() for part in hours.split("-")] if hours else None
    if "working_days" in form:
        data["working_days"] = _days(form["working_days"])
    if "out_of_office" in form:
        periods = [p for p in re.split(r"[,;\s]+", form["out_of_office"].strip()) if p]
        pairs = []
        for period in periods:  # "first..last", or one day
            first, _, last = period.partition("..")
            pairs.append([first, last or first])
        data["out_of_office"] = pairs
    if "comment" in form:
        data["comment"] = form["comment"].strip() or None
    return data


def _days(text: str) -> list[int]:
    """ "Mon-Fri" or "Mon,Wed" as day numbers."""
    names = {day.lower(): number for number, day in enumerate(DAYS)}
    found = _RANGE.match(text)
    if found and found[1][:3].lower() in names and found[2][:3].lower() in names:
        first, last = names[found[1][:3].lower()], names[found[2][:3].lower()]
        return list(range(first, last + 1))
    days = []
    for part in re.split(r"[,\s]+", text.strip()):
        if part:
            if part[:3].lower() not in names:
                raise MeetingError(f"working days: {part!r} is not a day (Mon … Sun)")
            days.append(names[part[:3].lower()])
    return days


def _session_of(store: ServiceStore, request: Request) -> tuple[Account, str] | None:
    """The browser session's account and CSRF token, if the cookie opens one."""
    cookie = request.cookies.get(SESSION_COOKIE)
    return store.session(cookie) if cookie else None


def _signed_in(store: ServiceStore, request: Request, form: Any) -> Account:
    """The session's account, when the form carries its CSRF token (else 401/403)."""
    found = _session_of(store, request)
    if found is None:
        raise ApiError(401, "sign in first")
    if form.get("csrf") != found[1]:
        raise ApiError(403, "the form's CSRF token is missing or wrong; reload the page")
    return found[0]


def _review_page(
    request: Request,
    store: ServiceStore,
    rules: PersonRules,
    session: tuple[Account, str],
    show: str = "all",
    error: str | None = None,
    calendar_error: str | None = None,
    new_token: str | None = None,
) -> Response:
    """The review page of the session's person (400 when it shows a form's error; a new
    personal token shown once)."""
    who, csrf = session
    pending_only = show == "pending"
    rows = [page_row(r, rules.zone) for r in store.requests(who.user)]
    waiting = [r for r in rows if r["decision"] == "ask" and r["answer"] is None]
    context = {
        "who": who,
        "csrf": csrf,
        "rows": waiting if pending_only else rows,
        "show": "pending" if pending_only else "all",
        "n_pending": len(waiting),
        "rules": rules,
        "days": days_in_words(rules.working_days),
        "away": ", ".join(f"{a}..{b}" for a, b in rules.out_of_office),
        "settings_error": error,
        "calendar_error": calendar_error,
        "account": store.calendar_account(who.user),
        "passes": store.pass_statuses(who.user),
        "activity": [activity_row(entry, rules.zone) for entry in store.activity(who.user, 20)],
        "tokens": store.tokens(who.user),
        "new_token": new_token,
    }
    return TEMPLATES.TemplateResponse(
        request, "review.html", context, status_code=400 if error or calendar_error else 200
    )


def set_session_cookie(response: Response, session: str) -> None:
    """The browser session's cookie: HttpOnly, SameSite=Strict, as long as the session."""
    response.set_cookie(
        SESSION_COOKIE, session, httponly=True, samesite="strict", max_age=SESSION_HOURS * 3600
    )


def _login_page(request: Request, error: str | None = None, status: int = 200) -> Response:
    """The sign-in page: the organisation's provider when one is configured, else the token."""
    context = {"error": error, "organisation": request.app.state.sign_in is not None}
    return TEMPLATES.TemplateResponse(request, "login.html", context, status_code=status)


@router.get("/login", response_class=HTMLResponse)
def login_form(request: Request) -> Response:
    return _login_page(request)


@router.post("/login", response_class=HTMLResponse)
async def login(request: Request, store: Store) -> Response:
    if request.app.state.sign_in is not None:
        return _login_page(request, "Sign in with your organisation.", 403)
    form = await request.form()
    found = store.authenticate(str(form.get("token", "")).strip())
    if found is None:
        return _login_page(request, "That token is not valid (or was revoked).")
    session, _ = store.open_session(found.user)
    response = RedirectResponse("/", status_code=303)
    set_session_cookie(response, session)
    return response


@router.post("/logout")
async def logout(request: Request, store: Store) -> Response:
    """End the session on the server (a replayed cookie opens nothing), and the provider's
    too when the person signed in there and it offers RP-initiated logout."""
    found = _session_of(store, request)
    form = await request.form()
    via = None
    if found is not None and form.get("csrf") == found[1]:
        via = store.close_session(request.cookies[SESSION_COOKIE])
    response = None
    if via == "oidc" and request.app.state.sign_in is not None:
        response = await request.app.state.sign_in.logout_redirect(request)
    response = response or RedirectResponse("/login", status_code=303)
    response.delete_cookie(SESSION_COOKIE)
    return response


@router.get("/", response_class=HTMLResponse)
def review(request: Request, store: Store, directory: Organisation, show: str = "all") -> Response:
    found = _session_of(store, request)
    if found is None:
        return RedirectResponse("/login", status_code=303)
    return _review_page(request, store, rules_of(store, directory, found[0].user), found, show)


@router.post("/requests/{request_id}/answer")
async def answer(request_id: int, request: Request, store: Store, learner: Model) -> Response:
    form = await request.form()
    who = _signed_in(store, request, form)
    if form.get("accepted") not in ("yes", "no"):
        raise ApiError(400, "accepted must be yes or no")
    if not 1 <= request_id < 2**63 or store.request(who.user, request_id) is None:
        raise ApiError(404, f"no request {request_id}")
    store.answer(who.user, request_id, form["accepted"] == "yes")
    learner.request_refit()
    return RedirectResponse(f"/?show={form.get('show', 'all')}", status_code=303)


@router.post("/settings")
async def settings(request: Request, store: Store, directory: Organisation) -> Response:
    form = await request.form()
    who = _signed_in(store, request, form)
    fields = {name: str(value) for name, value in form.items() if name != "csrf"}
    rules = rules_of(store, directory, who.user)
    try:
        store.set_rules(who.user, PersonRules.from_dict(rules.to_dict() | rules_from_form(fields)))
    except MeetingError as error:
        session = _session_of(store, request)
        return _review_page(request, store, rules, session, error=str(error))
    return RedirectResponse("/#settings", status_code=303)


async def _calendar_problem(url: str, username: str, password: str) -> str | None:
    """What is wrong with the calendar form's account, or None (the login is tried)."""
    if not url.startswith(("https://", "http://")) or len(url) > 2000:
        return "the CalDAV server must be an http(s) address"
    if not username or not password:
        return "give the user name and the password"
    try:
        await run_in_threadpool(check_caldav_login, url, username, password)
    except MeetingError as error:
        return str(error)
    return None


@router.post("/calendar-account")
async def calendar_account(request: Request, store: Store, directory: Organisation) -> Response:
    form = await request.form()
    who = _signed_in(store, request, form)
    if form.get("remove") == "yes":
        store.remove_calendar_account(who.user)
        return RedirectResponse("/#calendar-account", status_code=303)
    url, username = str(form.get("url", "")).strip(), str(form.get("username", "")).strip()
    password = str(form.get("password", ""))
    known = store.calendar_account(who.user)
    if not password and known is not None and (url, username) == (known.url, known.username):
        password = known.password  # unchanged: keep the stored one
    problem = await _calendar_problem(url, username, password)
    if problem:
        rules = rules_of(store, directory, who.user)
        session = _session_of(store, request)
        return _review_page(request, store, rules, session, calendar_error=problem)
    store.set_calendar_account(CalendarAccount(who.user, url, username, password))
    return RedirectResponse("/#calendar-account", status_code=303)


@router.post("/tokens")
async def add_token(request: Request, store: Store, directory: Organisation) -> Response:
    form = await request.form()
    who = _signed_in(store, request, form)
    session = _session_of(store, request)
    rules = rules_of(store, directory, who.user)
    try:
        token = store.add_token(who.user, str(form.get("name", "")))
    except MeetingError as error:
        return _review_page(request, store, rules, session, error=str(error))
    return _review_page(request, store, rules, session, new_token=token)


@router.post("/tokens/{token_id}/revoke")
async def revoke_token(token_id: int, request: Request, store: Store) -> Response:
    form = await request.form()
    who = _signed_in(store, request, form)
    if not 1 <= token_id < 2**63 or not store.revoke_token(who.user, token_id):
        raise ApiError(404, f"no token {token_id} of yours")
    return RedirectResponse("/#tokens", status_code=303)


# ---------------------------------------------------------------------- the administrator's
def _admin_session(store: ServiceStore, request: Request) -> tuple[Account, str]:
    """The signed-in administrator's account and CSRF token (401 signed out, 403 not one)."""
    found = _session_of(store, request)
    if found is None:
        raise ApiError(401, "sign in first")
    if not found[0].admin:
        raise ApiError(403, "the administrator's page is for administrators")
    return found


def _admin_page(
    request: Request,
    store: ServiceStore,
    learner: Learner,
    session: tuple[Account, str],
    new_token: tuple[str, str] | None = None,
    error: str | None = None,
) -> Response:
    """Every person's assistant: registration, last passes, what waits, what was learnt."""
    calendars = {account.user: account.url for account in store.calendar_accounts()}
    mailboxes = {user: f"{box.host}:{box.port}" for user, box in store.mail_accounts()}
    passes: dict[str, list[dict[str, Any]]] = {}
    for status in store.pass_statuses():
        passes.setdefault(status["user"], []).append(status)
    people = [
        {
            "account": account,
            "calendar": calendars.get(account.user),
            "mailbox": mailboxes.get(account.user),
            "passes": passes.get(account.user, []),
            "overview": store.overview(account.user),
        }
        for account in store.users()
    ]
    model = learner.status()
    age = model.get("model_age_seconds")
    context = {
        "who": session[0],
        "csrf": session[1],
        "people": people,
        "model": model,
        "model_age": "" if age is None else f"{age / 60:.0f} minutes",
        "new_token": new_token,
        "error": error,
    }
    return TEMPLATES.TemplateResponse(
        request, "admin.html", context, status_code=400 if error else 200
    )


@router.get("/admin", response_class=HTMLResponse)
def admin(request: Request, store: Store, learner: Model) -> Response:
    if _session_of(store, request) is None:
        return RedirectResponse("/login", status_code=303)
    return _admin_page(request, store, learner, _admin_session(store, request))


async def _admin_form(store: ServiceStore, request: Request) -> tuple[Any, tuple[Account, str]]:
    """The posted form and the administrator's session (its CSRF token checked)."""
    form = await request.form()
    session = _admin_session(store, request)
    if form.get("csrf") != session[1]:
        raise ApiError(403, "the form's CSRF token is missing or wrong; reload the page")
    return form, session


@router.post("/admin/users")
async def admin_add_user(request: Request, store: Store, learner: Model) -> Response:
    form, session = await _admin_form(store, request)
    user, email = str(form.get("user", "")).strip(), str(form.get("email", "")).strip()
    try:
        token = store.add_user(user, email)
    except MeetingError as error:
        return _admin_page(request, store, learner, session, error=str(error))
    return _admin_page(request, store, learner, session, new_token=(user, token))


def _known(store: ServiceStore, user: str) -> None:
    if not store.has_user(user):
        raise ApiError(404, f"no person {user!r}")


@router.post("/admin/users/{user}/remove")
async def admin_remove_user(user: str, request: Request, store: Store) -> Response:
    await _admin_form(store, request)
    _known(store, user)
    store.revoke(user)
    store.remove_calendar_account(user)
    store.remove_mail_account(user)
    return RedirectResponse(f"/admin#person-{user}", status_code=303)


@router.post("/admin/users/{user}/pass")
async def admin_run_pass(user: str, request: Request, store: Store) -> Response:
    await _admin_form(store, request)
    _known(store, user)
    await run_in_threadpool(request.app.state.passes.run_round, user)
    return RedirectResponse(f"/admin#person-{user}", status_code=303)


@router.get("/admin/activity/{user}", response_class=HTMLResponse)
def admin_activity(user: str, request: Request, store: Store) -> Response:
    who, _ = _admin_session(store, request)
    _known(store, user)
    utc = ZoneInfo("UTC")
    context = {
        "who": who,
        "person": user,
        "activity": [activity_row(entry, utc) for entry in store.activity(user, 500)],
    }
    return TEMPLATES.TemplateResponse(request, "admin_activity.html", context)

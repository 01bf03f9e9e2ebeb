"""What each ``cnb meeting`` command does (imported only when one runs)."""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd

from clusterednb.cli.options import read_password
from clusterednb.cli.output import emit_json, say, to_stdout, write_bytes
from clusterednb.exceptions import warn_at_caller
from clusterednb.loading import load
from clusterednb.meeting.answer_store import FeedbackStore
from clusterednb.meeting.assistant import add_answer_to_file, decide, fit_from_frames, learn
from clusterednb.meeting.directory import Directory
from clusterednb.meeting.errors import MeetingError, MeetingWarning
from clusterednb.meeting.simulation.calendars import write_world
from clusterednb.meeting.simulation.organisation import simulate_organisation
from clusterednb.naive_bayes.calibration import MIN_ROWS_PER_CLASS


def simulate(args: argparse.Namespace) -> None:
    """``cnb meeting simulate``: an organisation's answered requests, its directory, calendars
    and pending invitations, written to ``-o``.

    Examples
    --------
    >>> from clusterednb.examples import models as toy
    >>> from clusterednb.cli.parser import build_parser
    >>> out = toy.scratch_file("world")
    >>> simulate(build_parser().parse_args(["meeting", "simulate", "-o", str(out)]))
    ... # doctest: +ELLIPSIS
    simulated 21 users, ... requests: .../requests.csv, truth.csv, directory.json, ...
    """
    rng = np.random.default_rng(args.seed)
    organisation = simulate_organisation(rng)
    organisation.write(args.output, args.format)
    write_world(
        rng,
        args.output,
        list(organisation.truth["user"]),
        list(organisation.truth["role"]),
        n_pending=args.pending,
    )
    print(
        f"simulated {len(organisation.truth)} users, {len(organisation.requests)} requests: "
        f"{args.output / ('requests.' + args.format)}, truth.{args.format}, directory.json, "
        "calendars/, pending/"
    )


def decide_request(args: argparse.Namespace) -> None:
    """``cnb meeting decide``: accept or decline one invitation and write the iTIP reply.

    Examples
    --------
    >>> import contextlib, io, json
    >>> from clusterednb.cli.parser import build_parser
    >>> from clusterednb.examples import meeting as toy
    >>> folder, _ = toy.world()
    >>> toy.fitted_model().save(folder / "model.cnb")
    >>> request = folder / "pending" / "user00" / "request-0.ics"
    >>> args = build_parser().parse_args([
    ...     "meeting", "decide", str(request), "--user", "user00", "--calendar",
    ...     str(folder / "calendars" / "user00.ics"), "--directory",
    ...     str(folder / "directory.json"), "--model", str(folder / "model.cnb"), "--json"])
    >>> printed = io.StringIO()
    >>> with contextlib.redirect_stdout(printed):
    ...     decide_request(args)
    >>> answer = json.loads(printed.getvalue())
    >>> answer["decision"] in ("accept", "decline"), answer["reply"].endswith("request-0-reply.ics")
    (True, True)
    """
    if args.json and to_stdout(args.output):
        raise MeetingError("--json and -o - both write to standard output: choose one")
    model = load(args.model)
    decision = decide(
        model,
        args.request,
        args.user,
        args.calendar,
        Directory.from_json(args.directory),
        args.cost_false_accept,
        args.cost_false_decline,
    )
    reply = args.output or args.request.with_name(args.request.stem + "-reply.ics")
    write_bytes(reply, decision.reply)
    if args.json:
        emit_json(
            {
                "decision": decision.decision,
                "p_accept": decision.p_accept,
                "threshold": decision.threshold,
                "expected_loss": decision.expected_loss,
                "reasons": [reason.to_dict() for reason in decision.reasons],
                "reply": str(reply),
            }
        )
        return
    say(decision.summary(), args)
    if not to_stdout(reply):
        say(f"reply written to {reply}", args)


def learn_answer(args: argparse.Namespace) -> None:
    """``cnb meeting learn``: record the person's real answer to an invitation.

    Examples
    --------
    >>> from clusterednb.cli.parser import build_parser
    >>> from clusterednb.examples import meeting as toy
    >>> folder, _ = toy.world()
    >>> args = build_parser().parse_args([
    ...     "meeting", "learn", str(folder / "pending" / "user01" / "request-2.ics"),
    ...     "--user", "user01", "--calendar", str(folder / "calendars" / "user01.ics"),
    ...     "--directory", str(folder / "directory.json"), "--accepted", "yes",
    ...     "--store", str(folder / "answers.db")])
    >>> learn_answer(args)  # doctest: +ELLIPSIS
    recorded user01's answer (yes) in .../answers.db
    """
    accepted = args.accepted == "yes"
    with FeedbackStore(args.store) as store:
        features = learn(
            store,
            args.request,
            args.user,
            accepted,
            args.calendar,
            Directory.from_json(args.directory),
        )
    if args.model is not None:
        add_answer_to_file(args.model, features, args.user, accepted)
    print(
        f"recorded {args.user}'s answer ({args.accepted}) in {args.store}"
        + (f"; updated {args.model}" if args.model is not None else "")
    )


def fit(args: argparse.Namespace) -> None:
    """``cnb meeting fit``: the assistant's model from the recorded answers and a requests
    file.

    Examples
    --------
    >>> from clusterednb.cli.parser import build_parser
    >>> from clusterednb.examples import meeting as toy
    >>> folder, _ = toy.world()
    >>> toy.organisation().write(folder)
    >>> fit(build_parser().parse_args([
    ...     "meeting", "fit", "--requests", str(folder / "requests.csv"), "--store",
    ...     str(folder / "answers.db"), "-o", str(folder / "model.cnb"), "--kind", "cnb-bhc"]))
    fitted Clustered NB (bhc) on ... decisions of 4 users: 2 clusters; ...; saved to .../model.cnb
    >>> fit(build_parser().parse_args([
    ...     "meeting", "fit", "--requests", str(folder / "requests.csv"), "--store",
    ...     str(folder / "answers.db"), "-o", str(folder / "logistic.cnb")]))
    fitted the clustered logistic regression on ... decisions of 4 users: ...
    """
    frames = []
    if args.requests:
        frames.append(pd.read_csv(args.requests, dtype=str, keep_default_na=False))
    if args.store.exists():
        with FeedbackStore(args.store) as store:
            frames.append(store.frame())
    elif not args.requests:
        raise MeetingError(f"no store at {args.store} and no --requests file")
    kind = f"cnb-{args.inference}" if args.inference else args.kind
    model = fit_from_frames(frames, None, args.seed, args.calibration, kind=kind)
    model.save(args.model)
    if kind == "cnb-logistic":
        n_answers = int((model.rows_.y >= 0).sum())
        words = "probabilities from the regressions"
        name = "the clustered logistic regression"
    else:
        n_answers = int(model.counts_.label_counts.sum())
        words, name = _calibration_words(model), f"Clustered NB ({kind.removeprefix('cnb-')})"
    print(
        f"fitted {name} on {n_answers} decisions of {model.task_ids_.size} users: "
        f"{int(model.partition_.max()) + 1} clusters; {words}; saved to {args.model}"
    )


def _calibration_words(model) -> str:
    """What the fit did to the probabilities, for the command's one line."""
    if not hasattr(model, "calibration_"):
        return "probabilities not calibrated"
    slope, intercept = model.calibration_
    if (slope, intercept) == (1.0, 0.0):
        fewest = MIN_ROWS_PER_CLASS
        return f"probabilities not calibrated (fewer than {fewest} answers of each kind)"
    return f"log-odds calibrated to {slope:.3g} z {intercept:+.3g}"


PASSWORD_VARIABLE = "CNB_CALDAV_PASSWORD"


def caldav_password(args: argparse.Namespace) -> str:
    """The CalDAV password: from ``--password-file`` (its first line), ``--password`` (with a
    warning: it shows in the process list), the environment variable
    :data:`PASSWORD_VARIABLE`, or a prompt on a terminal; never printed.

    Examples
    --------
    >>> from clusterednb.examples import models as toy
    >>> path = toy.scratch_file("password")
    >>> _ = path.write_text("s3cret\\n")
    >>> path.chmod(0o600)  # else a warning: others could read it
    >>> caldav_password(argparse.Namespace(password_file=path, password=None, username="ann",
    ...                                    caldav="https://dav.example.org/"))
    's3cret'
    """
    if args.password is not None and args.password_file is None:
        warn_at_caller(
            "--password shows in the process list and the shell history; use --password-file "
            f"or {PASSWORD_VARIABLE}",
            MeetingWarning,
        )
        return args.password
    return read_password(
        args.password_file, PASSWORD_VARIABLE, f"password of {args.username} at {args.caldav}: "
    )


def sync_calendars(args: argparse.Namespace) -> None:
    """``cnb meeting sync``: one pass over the user's CalDAV calendars.

    Examples
    --------
    A malformed ``--smtp`` is refused before anything is read:

    >>> from clusterednb.cli.parser import build_parser
    >>> sync_calendars(build_parser().parse_args([
    ...     "meeting", "sync", "--caldav", "http://127.0.0.1:5232/", "--username", "ann",
    ...     "--password", "secret", "--user", "ann@example.org", "--model", "model.cnb",
    ...     "--smtp", "mail.example.org"]))
    Traceback (most recent call last):
    ...
    clusterednb.meeting.errors.MeetingError: --smtp takes HOST:PORT, got 'mail.example.org'
    """
    from clusterednb.cli.options import smtp_address
    from clusterednb.meeting.deciding import meeting_loss
    from clusterednb.service.passes.calendar_pass import sync
    from clusterednb.service.passes.settings import CaldavLogin, SyncSettings

    meeting_loss(args.cost_false_accept, args.cost_false_decline)  # checks the costs
    smtp = smtp_address(args.smtp) if args.smtp else None
    login = CaldavLogin(args.caldav, args.username, caldav_password(args), args.ca_bundle)
    settings = SyncSettings(
        account=login,
        email=args.user,
        model=load(args.model),
        state=args.state,
        directory=Directory.from_json(args.directory) if args.directory else None,
        smtp=smtp,
        sender=args.sender,
        ask_band=args.ask_band,
        costs=(args.cost_false_accept, args.cost_false_decline),
        dry_run=args.dry_run,
        on_ask=args.on_ask,
        comment=args.comment,
    )
    results = sync(settings)
    if args.json:
        emit_json(
            [
                {
                    "uid": o.uid,
                    "recurrence_id": o.recurrence_id or None,
                    "sequence": o.sequence,
                    "summary": o.summary,
                    "decision": o.decision,
                    "p_accept": o.p_accept,
                    "action": o.action,
                    "reasons": o.reasons[:3],
                }
                for o in results
            ]
        )
        return
    for result in results:
        print(result.line())
    if not results:
        print("no invitation waits for an answer")

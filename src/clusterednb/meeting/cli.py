"""``cnb meeting simulate | decide | learn | fit``."""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd

from clusterednb.meeting.assistant import add_answer_to_file, decide, fit_from_frames, learn
from clusterednb.meeting.directory import Directory
from clusterednb.meeting.errors import MeetingError
from clusterednb.meeting.ics_world import write_world
from clusterednb.meeting.simulate import simulate_organisation
from clusterednb.meeting.store import FeedbackStore
from clusterednb.persistence import load


def _simulate(args: argparse.Namespace) -> None:
    rng = np.random.default_rng(args.seed)
    organisation = simulate_organisation(rng)
    organisation.write(args.out, args.format)
    write_world(
        rng,
        args.out,
        list(organisation.truth["user"]),
        list(organisation.truth["role"]),
        n_pending=args.pending,
    )
    print(
        f"simulated {len(organisation.truth)} users, {len(organisation.requests)} requests: "
        f"{args.out / ('requests.' + args.format)}, truth.{args.format}, directory.json, "
        "calendars/, pending/"
    )


def _decide(args: argparse.Namespace) -> None:
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
    print(decision.summary())
    reply = args.reply or args.request.with_name(args.request.stem + "-reply.ics")
    reply.write_bytes(decision.reply)
    print(f"reply written to {reply}")


def _learn(args: argparse.Namespace) -> None:
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


def _fit(args: argparse.Namespace) -> None:
    frames = []
    if args.requests:
        frames.append(pd.read_csv(args.requests, dtype=str, keep_default_na=False))
    if args.store.exists():
        with FeedbackStore(args.store) as store:
            frames.append(store.frame())
    elif not args.requests:
        raise MeetingError(f"no store at {args.store} and no --requests file")
    model = fit_from_frames(frames, args.inference, args.seed)
    model.save(args.model)
    print(
        f"fitted Clustered NB ({args.inference}) on {int(model.counts_.label_counts.sum())} "
        f"decisions of {model.task_ids_.size} users: {int(model.partition_.max()) + 1} "
        f"clusters; saved to {args.model}"
    )


def add_meeting_commands(commands: argparse._SubParsersAction) -> None:
    """Register ``cnb meeting ...``."""
    meeting = commands.add_parser("meeting", help="the meeting assistant")
    sub = meeting.add_subparsers(dest="meeting_command", required=True)

    simulate = sub.add_parser("simulate", help="simulate an organisation and its calendars")
    simulate.add_argument("--out", type=Path, required=True, help="output folder")
    simulate.add_argument("--seed", type=int, default=0)
    simulate.add_argument("--pending", type=int, default=3, help="pending requests per user")
    simulate.add_argument("--format", choices=["csv", "parquet"], default="csv")
    simulate.set_defaults(run=_simulate)

    def add_request_arguments(parser: argparse.ArgumentParser) -> None:
        parser.add_argument("request", type=Path, help="the METHOD:REQUEST .ics file")
        parser.add_argument("--user", required=True, help="user id (as in the directory)")
        parser.add_argument("--calendar", type=Path, required=True, help="the user's .ics")
        parser.add_argument("--directory", type=Path, required=True, help="directory.json")

    decide_parser = sub.add_parser("decide", help="accept or decline a request")
    add_request_arguments(decide_parser)
    decide_parser.add_argument("--model", type=Path, required=True)
    decide_parser.add_argument("--cost-false-accept", type=float, default=1.0)
    decide_parser.add_argument("--cost-false-decline", type=float, default=1.0)
    decide_parser.add_argument("--reply", type=Path, help="reply .ics (default REQUEST-reply.ics)")
    decide_parser.set_defaults(run=_decide)

    learn_parser = sub.add_parser("learn", help="record the user's real answer")
    add_request_arguments(learn_parser)
    learn_parser.add_argument("--accepted", choices=["yes", "no"], required=True)
    learn_parser.add_argument("--store", type=Path, default=Path("feedback.sqlite"))
    learn_parser.add_argument("--model", type=Path, help="also update this model file")
    learn_parser.set_defaults(run=_learn)

    fit = sub.add_parser("fit", help="train Clustered NB from the store (and a requests CSV)")
    fit.add_argument("--store", type=Path, default=Path("feedback.sqlite"))
    fit.add_argument("--requests", type=Path, help="requests.csv to train on as well")
    fit.add_argument("--model", type=Path, required=True, help="output model file")
    fit.add_argument("--inference", choices=["bhc", "gibbs"], default="bhc")
    fit.add_argument("--seed", type=int, default=0)
    fit.set_defaults(run=_fit)

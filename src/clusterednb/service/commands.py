"""What ``cnb serve`` and ``cnb users ...`` do (imported only when one runs)."""

from __future__ import annotations

import argparse
import logging

from clusterednb.meeting.assistant import meeting_loss
from clusterednb.service.store import ServiceStore


def serve(args: argparse.Namespace) -> None:
    """``cnb serve``: uvicorn over the app; one log line per request; SIGTERM/SIGINT stop it."""
    import uvicorn

    from clusterednb.service.app import create_app

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s")
    app = create_app(args.store, args.directory, args.model, args.ask_band)
    uvicorn.run(app, host=args.host, port=args.port, log_level="info", access_log=True)


def add_user(args: argparse.Namespace) -> None:
    """``cnb users add``: print the new account's API token."""
    meeting_loss(args.cost_false_accept, args.cost_false_decline)  # checks the costs
    with ServiceStore(args.store) as store:
        token = store.add_user(
            args.user,
            args.email,
            cost_false_accept=args.cost_false_accept,
            cost_false_decline=args.cost_false_decline,
        )
    print(token)


def list_users(args: argparse.Namespace) -> None:
    """``cnb users list``."""
    with ServiceStore(args.store) as store:
        for account in store.users():
            state = "revoked" if account.revoked else "active"
            print(
                f"{account.user}\t{account.email}\t{state}\tfalse accept "
                f"{account.cost_false_accept:g}, false decline {account.cost_false_decline:g}"
            )


def revoke_user(args: argparse.Namespace) -> None:
    """``cnb users revoke``."""
    with ServiceStore(args.store) as store:
        store.revoke(args.user)
    print(f"revoked {args.user}")

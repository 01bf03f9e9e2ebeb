"""What ``/healthz`` and ``/metrics`` say: whether every person's passes work, and the
assistant's counts in Prometheus' text format (read from the store at each request, so a
second process's passes and a restart are counted too)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from fastapi.responses import Response
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

from clusterednb.service.api_schema import Health
from clusterednb.service.dependencies import Store

METRICS_TYPE = "text/plain; version=0.0.4; charset=utf-8"
"""The content type of Prometheus' text exposition format."""

router = APIRouter()


def health(store: Any) -> dict[str, Any]:
    """``{"status": "ok"}``, or ``"degraded"`` with each failing pass: the person, the kind
    of pass, the server, since when and why (one line, never a secret).

    Examples
    --------
    >>> from clusterednb.examples import service as toy
    >>> store, _ = toy.service_store()
    >>> health(store)
    {'status': 'ok'}
    >>> store.record_pass("ann", "mailbox", "imap.example.org:993", "", "connection refused")
    >>> report = health(store)
    >>> report["status"], report["failing"][0]["user"], report["failing"][0]["error"]
    ('degraded', 'ann', 'connection refused')
    """
    failing = store.failing_passes()
    if not failing:
        return {"status": "ok"}
    return {
        "status": "degraded",
        "failing": [
            {
                "user": row["user"],
                "kind": row["kind"],
                "server": row["server"],
                "since": row["failing_since"],
                "error": row["last_error"],
            }
            for row in failing
        ],
    }


class _StoreCollector:
    """The store's counts as Prometheus metrics, collected at each scrape."""

    def __init__(self, store: Any) -> None:
        self.store = store

    def collect(self):
        statuses = self.store.pass_statuses()
        passes = CounterMetricFamily(
            "cnb_passes", "Calendar and mailbox passes finished", labels=["kind", "outcome"]
        )
        failing = GaugeMetricFamily(
            "cnb_passes_failing", "People whose last pass failed", labels=["kind"]
        )
        for kind in ("calendar", "mailbox"):
            rows = [row for row in statuses if row["kind"] == kind]
            failures = sum(row["failures"] for row in rows)
            passes.add_metric([kind, "ok"], sum(row["passes"] for row in rows) - failures)
            passes.add_metric([kind, "failed"], failures)
            failing.add_metric([kind], sum(1 for row in rows if not row["ok"]))
        yield passes
        yield failing
        counts = self.store.delivery_counts()
        outbox = GaugeMetricFamily("cnb_outbox", "Replies in the outbox", labels=["state"])
        for state in ("owed", "failed"):
            outbox.add_metric([state], counts[state])
        yield outbox
        yield CounterMetricFamily(
            "cnb_replies_sent", "Replies the SMTP server took", counts["sent"]
        )
        yield GaugeMetricFamily(
            "cnb_answers_unwritten",
            "Answers decided but not yet written on a calendar server",
            counts["unwritten"],
        )


def metrics_text(store: Any) -> bytes:
    """The metrics in Prometheus' text format.

    Examples
    --------
    >>> from clusterednb.examples import service as toy
    >>> store, _ = toy.service_store()
    >>> _ = store.add_request("ann", toy.request_record(), toy.outgoing_reply())
    >>> print(metrics_text(store).decode())  # doctest: +ELLIPSIS
    # HELP cnb_passes_total Calendar and mailbox passes finished
    ...
    cnb_outbox{state="owed"} 1.0
    ...
    """
    registry = CollectorRegistry()
    registry.register(_StoreCollector(store))
    return generate_latest(registry)


@router.get(
    "/healthz", operation_id="health", response_model=None, responses={200: {"model": Health}}
)
def healthz(store: Store) -> dict[str, Any]:
    return health(store)


@router.get(
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
def metrics(store: Store) -> Response:
    return Response(metrics_text(store), media_type=METRICS_TYPE)

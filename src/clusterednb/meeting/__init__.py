"""The meeting assistant: the thesis' meeting-acceptance task (schema, simulated organisation).

Names are imported on first use, so that the command line's option parsing stays light.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

_EXPORTS = {
    "FEATURE_NAMES": "clusterednb.meeting.features",
    "LABELS": "clusterednb.meeting.features",
    "MEETING_FEATURES": "clusterednb.meeting.features",
    "meeting_schema": "clusterednb.meeting.features",
    "Organisation": "clusterednb.meeting.simulation.organisation",
    "simulate_organisation": "clusterednb.meeting.simulation.organisation",
}

__all__ = [
    "FEATURE_NAMES",
    "LABELS",
    "MEETING_FEATURES",
    "Organisation",
    "meeting_schema",
    "simulate_organisation",
]

if TYPE_CHECKING:
    from clusterednb.meeting.features import (
        FEATURE_NAMES,
        LABELS,
        MEETING_FEATURES,
        meeting_schema,
    )
    from clusterednb.meeting.simulation.organisation import Organisation, simulate_organisation


def __getattr__(name: str) -> Any:
    """Import a public name on first use."""
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(_EXPORTS[name]), name)
    globals()[name] = value
    return value

"""The meeting assistant: the thesis' meeting-acceptance task (schema, simulated organisation)."""

from clusterednb.meeting.features import FEATURE_NAMES, LABELS, MEETING_FEATURES, meeting_schema
from clusterednb.meeting.simulate import Organisation, simulate_organisation

__all__ = [
    "FEATURE_NAMES",
    "LABELS",
    "MEETING_FEATURES",
    "Organisation",
    "meeting_schema",
    "simulate_organisation",
]

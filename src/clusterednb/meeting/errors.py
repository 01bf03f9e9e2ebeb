"""Errors and warnings of the meeting assistant."""

from __future__ import annotations

from clusterednb.exceptions import CNBError


class MeetingError(CNBError):
    """A meeting request, calendar or directory that cannot be used; names the problem."""


class MeetingWarning(UserWarning):
    """Something in a request or calendar was skipped or read by a documented fallback."""

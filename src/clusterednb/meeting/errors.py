"""Errors and warnings of the meeting assistant."""

from __future__ import annotations

from clusterednb.exceptions import CNBError, CNBWarning


class MeetingError(CNBError):
    """A meeting request, calendar or directory that cannot be used; names the problem.

    Examples
    --------
    >>> from clusterednb.exceptions import CNBError
    >>> issubclass(MeetingError, CNBError)  # the command line prints it as one line, status 1
    True
    """


class MeetingWarning(CNBWarning):
    """Something in a request or calendar was skipped or read by a documented fallback.

    Examples
    --------
    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     warnings.warn("unknown time zone 'Mars/Olympus': read as UTC", MeetingWarning)
    >>> caught[0].category.__name__
    'MeetingWarning'
    """

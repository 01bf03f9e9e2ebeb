"""A tiny simulated organisation for the meeting assistant's examples.

Four users in two groups (``user00``, ``user01`` and ``user02``, ``user03``), 30–40 answered
requests each, and a world written to a fresh temporary folder: ``directory.json``, a calendar
per user and three pending invitations per user. Everything is drawn from seed 0, so an
example that starts here always sees the same requests.

Examples
--------
>>> from clusterednb.examples import meeting as toy
>>> toy.organisation().truth["group"].tolist()
[0, 0, 1, 1]
"""

from __future__ import annotations

from pathlib import Path

import icalendar
import numpy as np

from clusterednb.examples.models import scratch_file
from clusterednb.meeting.assistant import fit_from_frames
from clusterednb.meeting.directory import Directory
from clusterednb.meeting.invitation import read_calendar
from clusterednb.meeting.simulation.calendars import write_world
from clusterednb.meeting.simulation.organisation import Organisation, simulate_organisation
from clusterednb.naive_bayes.clustered import ClusteredNB


def organisation() -> Organisation:
    """The four users' answered requests and their groups (seed 0).

    Examples
    --------
    >>> organisation().requests.groupby("user").size().between(30, 40).all()
    np.True_
    """
    return simulate_organisation(
        np.random.default_rng(0), group_sizes=(2, 2), requests_per_user=(30, 40)
    )


def world() -> tuple[Path, Directory]:
    """A new folder holding the four users' directory, calendars and pending requests.

    Returns
    -------
    folder : Path
        Holds ``directory.json``, ``calendars/USER.ics`` and ``pending/USER/request-I.ics``
        for ``I`` in 0, 1, 2.
    directory : Directory

    Examples
    --------
    >>> folder, directory = world()
    >>> sorted(p.name for p in (folder / "pending" / "user00").iterdir())
    ['request-0.ics', 'request-1.ics', 'request-2.ics']
    """
    truth = organisation().truth
    folder = scratch_file("world")
    directory = write_world(
        np.random.default_rng(0), folder, truth["user"].tolist(), truth["role"].tolist()
    )
    return folder, directory


def fitted_model() -> ClusteredNB:
    """Clustered NB (BHC) fitted on the four users' answers.

    Examples
    --------
    >>> fitted_model().partition_.tolist()  # the two planted groups
    [0, 0, 1, 1]
    """
    return fit_from_frames([organisation().requests], kind="cnb-bhc")


def pending() -> tuple[icalendar.Calendar, icalendar.Calendar, Directory]:
    """``user00``'s first pending invitation, ``user00``'s calendar and the directory, from a
    new :func:`world`.

    Examples
    --------
    >>> request, calendar, directory = pending()
    >>> str(request["METHOD"]), directory.user("user00").email
    ('REQUEST', 'user00@org.example')
    """
    folder, directory = world()
    request = read_calendar((folder / "pending" / "user00" / "request-0.ics").read_bytes())
    calendar = read_calendar((folder / "calendars" / "user00.ics").read_bytes())
    return request, calendar, directory

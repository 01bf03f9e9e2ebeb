"""The whole suite (tests and doctests) runs on the simulated organisation's clock.

Invitations written in tests and examples are dated in the week of 2 November 2026; the
assistant never answers a meeting that has ended (:mod:`clusterednb.meeting.rules`), so the
suite fixes "now" just before that week (``CNB_NOW``, inherited by the servers and commands
the tests start). A test of the clock itself sets its own (:func:`~clusterednb.meeting.rules.
clock_at`).
"""

import os

os.environ.setdefault("CNB_NOW", "2026-11-01T00:00:00+00:00")

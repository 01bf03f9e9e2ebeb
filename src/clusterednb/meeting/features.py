"""The meeting-acceptance task's 15 features (thesis Appendix B), with precise definitions.

Each feature's values are listed in the thesis' order. Where the thesis leaves a value's
meaning open ("XXX", "early / mid / late", "light-free", ...), the definition used here is
written next to it. Times are the user's local wall-clock times; the working day is
08:00–18:00 and its halves are 08:00–13:00 and 13:00–18:00.
"""

from __future__ import annotations

from clusterednb.data.schema import FeatureSchema

IMPORTANCE = (
    "other",
    "unimportant",
    "possibly important",
    "important",
    "very important",
    "critical",
)
"""Importance levels, lowest first ("other": not known)."""

DAY_LOAD = (
    "light-free",
    "light-busy",
    "busy-free",
    "busy-busy",
    "booked-free",
    "booked-busy",
)
"""First word: share of the working day (or half-day) already booked — light < 1/3,
busy 1/3 to 2/3, booked > 2/3. Second word: whether the 30 minutes just before or just
after the requested slot hold an event ("busy": back to back) or not ("free")."""

MEETING_FEATURES: dict[str, tuple[str, ...]] = {
    # early: starts before 09:00; morning: 09:00–11:59; mid: 12:00–13:59 (midday);
    # afternoon: 14:00–16:59; late: 17:00 or later.
    "start_time": ("morning", "afternoon", "early", "mid", "late"),
    # Requested length, rounded up to the next listed value; "longer" (the thesis' XXX):
    # more than 60 minutes.
    "duration": ("15", "30", "60", "longer"),
    # The request's own priority (RFC 5545 PRIORITY 1 → critical, 2–3 very important,
    # 4 important, 5 possibly important, 6–9 unimportant; absent → other).
    "message_importance": IMPORTANCE,
    # The importance of the meeting's topic to the user (from the directory's keywords).
    "topic_importance": IMPORTANCE,
    # The requester's job, from the directory ("other": not listed).
    "invitee_job": (
        "other",
        "officer",
        "planner",
        "student",
        "faculty",
        "administrator",
        "funding",
    ),
    # The requester's relation to the user, from the directory.
    "invitee_relation": ("other", "subordinate", "peer", "supervisor", "family"),
    # Whole days since the last meeting with the requester: 0 (same day), 1, 3 (2–3 days),
    # 7 (4–7 days), "more" (the thesis' XXX: more than 7 days, or never).
    "invitee_recent": ("0", "1", "3", "7", "more"),
    # Whole days until the next meeting with the requester, binned as invitee_recent.
    "invitee_soon": ("0", "1", "3", "7", "more"),
    # Load of the request's whole working day, see DAY_LOAD.
    "busy_fday": DAY_LOAD,
    # Load of the half-day containing the request's start, see DAY_LOAD.
    "busy_hday": DAY_LOAD,
    # Contiguous free minutes around the slot within the working day (free time just
    # before plus just after), rounded up to 0, 15, 30, 60, 90, 135; "more" (XXX): > 135.
    "free_slot_time": ("0", "15", "30", "60", "90", "135", "more"),
    # Whether the slot overlaps an event of the calendar.
    "conflict": ("no", "yes"),
    # The most important overlapping event's importance ("other" when no conflict).
    "conflict_importance": IMPORTANCE,
    # How often the most important overlapping event recurs: "one time" (not recurring),
    # "occasionally" (recurs less often than weekly), "regularly" (weekly or more often);
    # "other" when no conflict.
    "conflict_frequency": ("other", "one time", "occasionally", "regularly"),
    # NEW-OLD: where the requested meeting is (local: at the user's site, else away), then
    # where the user is just before it — the location of the user's latest event ending
    # before the slot on that day (none: no such event).
    "location": (
        "local-none",
        "away-none",
        "local-local",
        "away-local",
        "local-away",
        "away-away",
    ),
}

FEATURE_NAMES: tuple[str, ...] = tuple(MEETING_FEATURES)
LABELS = ("decline", "accept")


def meeting_schema() -> FeatureSchema:
    """The fixed schema of the task: the 15 features' values and the labels decline/accept.

    Examples
    --------
    >>> schema = meeting_schema()
    >>> schema.n_features, schema.classes, schema.categories[schema.feature_names.index("conflict")]
    (15, ('decline', 'accept'), ('no', 'yes'))
    """
    return FeatureSchema(
        FEATURE_NAMES, tuple(MEETING_FEATURES[name] for name in FEATURE_NAMES), LABELS
    )


FEATURE_GROUPS: dict[str, tuple[str, ...]] = {
    "conflict": ("conflict", "conflict_importance", "conflict_frequency"),
    "busy day": ("busy_fday", "busy_hday"),
}
"""Features that restate one fact, shown as one reason in an explanation.

Naive Bayes treats the features as independent given the label, but a conflict sets all three
conflict features at once ("no" forces "other", "other"), and the whole-day and half-day loads
are measured from the same bookings and share the back-to-back flag. The model therefore
counts such a fact more than once (its log-odds add up two or three times), which makes its
probabilities overconfident; an explanation that listed the parts as separate reasons would
repeat the same evidence. Each group is one reason with the sum of its members' log-odds."""


_IMPORTANCE_WORDS = {
    "unimportant": "unimportant",
    "possibly important": "possibly important",
    "important": "important",
    "very important": "very important",
    "critical": "critical",
}
_LOAD = {"light": "a light", "busy": "a busy", "booked": "a fully booked"}
_AROUND = {"free": "free just before and after", "busy": "back to back with other events"}
_PLACE = {"local": "at your site", "away": "away from your site"}
_BEFORE = {
    "none": "nothing before it that day",
    "local": "coming from your site",
    "away": "coming from elsewhere",
}


def _day_load(part: str) -> dict[str, str]:
    return {
        load: f"{_LOAD[load.split('-')[0]]} {part}, the slot {_AROUND[load.split('-')[1]]}"
        for load in DAY_LOAD
    }


GLOSSARY: dict[str, dict[str, str]] = {
    "start_time": {
        "early": "starts before 9:00",
        "morning": "starts in the morning (9:00–12:00)",
        "mid": "starts at midday (12:00–14:00)",
        "afternoon": "starts in the afternoon (14:00–17:00)",
        "late": "starts at 17:00 or later",
    },
    "duration": {
        "15": "lasts 15 minutes or less",
        "30": "lasts up to half an hour",
        "60": "lasts up to an hour",
        "longer": "lasts more than an hour",
    },
    "message_importance": {
        "other": "the invitation has no priority",
        **{k: f"the invitation is marked {v}" for k, v in _IMPORTANCE_WORDS.items()},
    },
    "topic_importance": {
        "other": "its topic is none of yours",
        **{k: f"its topic is {v} to you" for k, v in _IMPORTANCE_WORDS.items()},
    },
    "invitee_job": {
        "other": "the organiser's job is not in the directory",
        "officer": "the organiser is an officer",
        "planner": "the organiser is a planner",
        "student": "the organiser is a student",
        "faculty": "the organiser is on the faculty",
        "administrator": "the organiser is an administrator",
        "funding": "the organiser works in funding",
    },
    "invitee_relation": {
        "other": "the organiser is no relation of yours in the directory",
        "subordinate": "the organiser reports to you",
        "peer": "the organiser is a peer",
        "supervisor": "the organiser is your supervisor",
        "family": "the organiser is family",
    },
    "invitee_recent": {
        "0": "you met the organiser earlier today",
        "1": "you met the organiser yesterday",
        "3": "you met the organiser 2–3 days ago",
        "7": "you met the organiser 4–7 days ago",
        "more": "you have not met the organiser for more than a week",
    },
    "invitee_soon": {
        "0": "you meet the organiser again later the same day",
        "1": "you meet the organiser again the next day",
        "3": "you meet the organiser again in 2–3 days",
        "7": "you meet the organiser again within a week",
        "more": "no other meeting with the organiser in the coming week",
    },
    "busy_fday": _day_load("day"),
    "busy_hday": _day_load("half-day"),
    "free_slot_time": {
        "0": "no free time around the slot",
        "15": "up to 15 free minutes around the slot",
        "30": "up to half an hour free around the slot",
        "60": "up to an hour free around the slot",
        "90": "up to an hour and a half free around the slot",
        "135": "up to 2¼ hours free around the slot",
        "more": "more than 2¼ hours free around the slot",
    },
    "conflict": {"no": "no clash with your calendar", "yes": "it clashes with your calendar"},
    "conflict_importance": {
        "other": "",
        **{k: f"the clashing event is {v}" for k, v in _IMPORTANCE_WORDS.items()},
    },
    "conflict_frequency": {
        "other": "",
        "one time": "the clashing event happens once",
        "occasionally": "the clashing event recurs less than weekly",
        "regularly": "the clashing event recurs every week or more often",
    },
    "location": {
        loc: f"{_PLACE[loc.split('-')[0]]}, {_BEFORE[loc.split('-')[1]]}"
        for loc in MEETING_FEATURES["location"]
    },
}
"""Every value of every feature in plain words, for the reasons of a decision ("" where a
value says nothing by itself: the importance of a clash that is not there)."""


USUAL_DIRECTION: dict[tuple[str, str], int] = {
    **{("message_importance", v): 1 for v in ("critical", "very important")},
    **{("topic_importance", v): 1 for v in ("critical", "very important")},
    ("topic_importance", "unimportant"): -1,
    ("invitee_relation", "supervisor"): 1,
    **{
        (f, f"booked-{around}"): -1
        for f in ("busy_fday", "busy_hday")
        for around in ("busy", "free")
    },
    ("free_slot_time", "0"): -1,
    ("start_time", "late"): -1,
}
"""The direction one would expect of a feature value (+1 towards accepting, -1 towards
declining), where there is one: a reason that pushes the other way says it is surprising."""


def in_words(feature: str, value: str | None) -> str:
    """The plain words for one feature's value (the value itself if it is not in the
    glossary).

    Examples
    --------
    >>> in_words("invitee_soon", "more"), in_words("free_slot_time", "0")
    ('no other meeting with the organiser in the coming week', 'no free time around the slot')
    """
    if value is None:
        return ""
    return GLOSSARY.get(feature, {}).get(str(value), f"{feature.replace('_', ' ')}: {value}")

"""The organisation's directory: people's jobs and, per user, relations, topics, site, zone."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from clusterednb.meeting.errors import MeetingError
from clusterednb.meeting.features import IMPORTANCE, MEETING_FEATURES


@dataclass(frozen=True)
class UserEntry:
    """One user's part of the directory.

    Attributes
    ----------
    email : str
    timezone : str
        IANA name, e.g. ``"America/New_York"``.
    site : str
        The user's own site; a location containing it (case-insensitive) is "local".
    relations : dict of str to str
        Email → relation to this user (``MEETING_FEATURES["invitee_relation"]`` values).
    topics : dict of str to str
        Keyword → importance to this user (``IMPORTANCE`` values).

    Examples
    --------
    >>> ann = UserEntry("ann@org.example", "Europe/London", "Campus",
    ...                 relations={"bob@org.example": "supervisor"}, topics={"budget": "critical"})
    >>> ann.relations["bob@org.example"]
    'supervisor'
    """

    email: str
    timezone: str
    site: str
    relations: dict[str, str] = field(default_factory=dict)
    topics: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Directory:
    """People's jobs and, per user, relations, topic importances, site and time zone.

    The JSON form is ``{"people": {email: {"job": ...}}, "users": {user_id: {"email",
    "timezone", "site", "relations": {email: relation}, "topics": {keyword: importance}}}}``.

    Examples
    --------
    >>> ann = UserEntry("ann@org.example", "Europe/London", "Campus")
    >>> directory = Directory({"bob@org.example": "faculty"}, {"ann": ann})
    >>> directory.jobs["bob@org.example"], directory.user("ann").site
    ('faculty', 'Campus')
    """

    jobs: dict[str, str]
    users: dict[str, UserEntry]

    @classmethod
    def from_json(cls, path: str | Path) -> Directory:
        """Read and validate a directory file (a :class:`MeetingError` names any bad entry).

        Emails are compared case-insensitively (stored in lower case).

        Examples
        --------
        >>> import json
        >>> from clusterednb.examples import models as toy
        >>> path = toy.scratch_file("directory.json")
        >>> _ = path.write_text(json.dumps({"people": {"Bob@Org.Example": {"job": "faculty"}},
        ...     "users": {"ann": {"email": "ann@org.example", "timezone": "Mars/Olympus",
        ...                       "site": "Campus"}}}))
        >>> Directory.from_json(path)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        clusterednb.meeting.errors.MeetingError: directory: user ann has unknown time zone ...
        """
        try:
            raw = json.loads(Path(path).read_text())
        except (OSError, json.JSONDecodeError) as error:
            raise MeetingError(f"cannot read directory {path}: {error}") from error
        try:
            jobs = {email.lower(): entry["job"] for email, entry in raw.get("people", {}).items()}
            users = {
                str(user): UserEntry(
                    email=entry["email"].lower(),
                    timezone=entry["timezone"],
                    site=entry["site"],
                    relations={k.lower(): v for k, v in entry.get("relations", {}).items()},
                    topics=dict(entry.get("topics", {})),
                )
                for user, entry in raw["users"].items()
            }
        except (KeyError, AttributeError, TypeError) as error:
            raise MeetingError(f"directory {path}: missing or malformed entry {error}") from error
        directory = cls(jobs, users)
        directory.validate()
        return directory

    def to_json(self, path: str | Path) -> None:
        """Write the directory as JSON (read back by :meth:`from_json`).

        Examples
        --------
        >>> from clusterednb.examples import models as toy
        >>> path = toy.scratch_file("directory.json")
        >>> directory = Directory({}, {"ann": UserEntry("ann@org.example", "UTC", "Campus")})
        >>> directory.to_json(path)
        >>> Directory.from_json(path) == directory
        True
        """
        users = {
            user: {
                "email": entry.email,
                "timezone": entry.timezone,
                "site": entry.site,
                "relations": entry.relations,
                "topics": entry.topics,
            }
            for user, entry in self.users.items()
        }
        people = {email: {"job": job} for email, job in self.jobs.items()}
        Path(path).write_text(json.dumps({"people": people, "users": users}, indent=1))

    def validate(self) -> None:
        """Raise :class:`MeetingError` naming any value outside the features' value sets.

        Examples
        --------
        >>> Directory({"bob@org.example": "wizard"}, {}).validate()  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        clusterednb.meeting.errors.MeetingError: directory: job 'wizard' of bob@org.example ...
        """
        jobs = MEETING_FEATURES["invitee_job"]
        for email, job in self.jobs.items():
            if job not in jobs:
                raise MeetingError(f"directory: job {job!r} of {email} is not one of {jobs}")
        relations = MEETING_FEATURES["invitee_relation"]
        for user, entry in self.users.items():
            try:
                ZoneInfo(entry.timezone)
            except (ZoneInfoNotFoundError, ValueError) as error:
                raise MeetingError(
                    f"directory: user {user} has unknown time zone {entry.timezone!r}"
                ) from error
            for email, relation in entry.relations.items():
                if relation not in relations:
                    raise MeetingError(
                        f"directory: relation {relation!r} of {email} to {user} is not one of "
                        f"{relations}"
                    )
            for keyword, level in entry.topics.items():
                if level not in IMPORTANCE:
                    raise MeetingError(
                        f"directory: topic {keyword!r} of {user} has importance {level!r}, not "
                        f"one of {IMPORTANCE}"
                    )

    def user(self, user: str) -> UserEntry:
        """The entry of ``user``; :class:`MeetingError` if absent.

        Examples
        --------
        >>> Directory({}, {}).user("ann")
        Traceback (most recent call last):
        ...
        clusterednb.meeting.errors.MeetingError: user 'ann' is not in the directory
        """
        if user not in self.users:
            raise MeetingError(f"user {user!r} is not in the directory")
        return self.users[user]

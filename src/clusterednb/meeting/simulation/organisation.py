"""A seeded simulated organisation for the meeting-acceptance task.

Users belong to latent groups (defaults mirror the thesis' Table 4.1: 21 users in groups of
6, 2, 2, 4, 3, 1, 1, 1, 1 with military, academic and research-lab roles). The generative
story, chosen so that naive Bayes is misspecified as it is on real data:

1. Each role has base feature distributions; each group's are drawn around its role's
   (``Dir(role_strength · V · base + 0.1)``) and each user's around the group's
   (``Dir(user_concentration · V · group + 0.1)``).
2. A request's features are drawn from the user's distributions, with the calendar's
   consistency enforced: no conflict ⇒ conflict importance and frequency are "other";
   a conflict ⇒ they are drawn from the user's distributions over the other values.
3. The user accepts with probability ``sigmoid(score)``: group main effects (perturbed per
   user by ``user_rule_noise``) plus interactions naive Bayes cannot represent — a
   conflict is overridden only when the request is more important than the conflicting
   event; long meetings on a crowded day are declined; a supervisor's request counts
   more when it is urgent — then the label is flipped with probability ``label_noise``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.special import expit

from clusterednb.data.dataset import TaskDataset
from clusterednb.exceptions import CNBError, require_extra
from clusterednb.meeting.features import FEATURE_NAMES, LABELS, MEETING_FEATURES, meeting_schema

DEFAULT_GROUP_SIZES = (6, 2, 2, 4, 3, 1, 1, 1, 1)
DEFAULT_ROLES = (
    "military",
    "military",
    "academic",
    "research lab",
    "academic",
    "research lab",
    "academic",
    "research lab",
    "academic",
)
_CONFLICT_DETAILS = ("conflict_importance", "conflict_frequency")


@dataclass(frozen=True)
class Organisation:
    """A simulated organisation's requests and its ground truth.

    Attributes
    ----------
    requests : DataFrame
        One row per request: ``user``, the 15 feature columns, ``accepted``
        ("accept"/"decline").
    truth : DataFrame
        One row per user: ``user``, ``group`` (0-based), ``role``.

    Examples
    --------
    >>> from clusterednb.examples import meeting as toy
    >>> organisation = toy.organisation()
    >>> organisation.truth.columns.tolist(), sorted(organisation.requests["accepted"].unique())
    (['user', 'group', 'role'], ['accept', 'decline'])
    """

    requests: pd.DataFrame
    truth: pd.DataFrame

    @property
    def true_partition(self) -> np.ndarray:
        """Group of each user, in the order of ``truth``; shape (n_users,).

        Examples
        --------
        >>> from clusterednb.examples import meeting as toy
        >>> toy.organisation().true_partition.tolist()
        [0, 0, 1, 1]
        """
        return self.truth["group"].to_numpy()

    def dataset(self) -> TaskDataset:
        """The requests as a :class:`TaskDataset` over the fixed meeting schema.

        Examples
        --------
        >>> from clusterednb.examples import meeting as toy
        >>> dataset = toy.organisation().dataset()
        >>> dataset.schema.n_features, dataset.schema.classes
        (15, ('decline', 'accept'))
        """
        return TaskDataset.from_frame(
            self.requests, task="user", label="accepted", schema=meeting_schema()
        )

    def write(self, folder: str | Path, file_format: str = "csv") -> None:
        """Write ``requests`` and ``truth`` (``.csv`` or ``.parquet``) into ``folder``.

        Examples
        --------
        >>> from clusterednb.examples import models as data_toy
        >>> from clusterednb.examples import meeting as toy
        >>> folder = data_toy.scratch_file("organisation")
        >>> toy.organisation().write(folder, "parquet")
        >>> sorted(p.name for p in folder.iterdir())
        ['requests.parquet', 'truth.parquet']
        """
        if file_format not in ("csv", "parquet"):
            raise CNBError(f"file_format must be 'csv' or 'parquet', got {file_format!r}")
        if file_format == "parquet":
            require_extra("parquet", "writing Parquet files")
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        for name, frame in (("requests", self.requests), ("truth", self.truth)):
            path = folder / f"{name}.{file_format}"
            if file_format == "csv":
                frame.to_csv(path, index=False)
            else:
                frame.to_parquet(path, index=False)


def _around(rng: np.random.Generator, mean: np.ndarray, strength: float) -> np.ndarray:
    """A distribution drawn around ``mean``: ``Dir(strength · V · mean + 0.1)``.

    The 0.1 per value keeps every concentration positive when ``mean`` has (near-)zeros.
    """
    return rng.dirichlet(strength * mean.size * mean + 0.1)


def _rank(values: np.ndarray, feature: str) -> np.ndarray:
    """Position of each value code in the feature's (ordered) value list, scaled to [0, 1]."""
    return values / (len(MEETING_FEATURES[feature]) - 1)


def simulate_organisation(
    rng: np.random.Generator,
    group_sizes: tuple[int, ...] = DEFAULT_GROUP_SIZES,
    roles: tuple[str, ...] | None = None,
    requests_per_user: tuple[int, int] = (100, 400),
    role_strength: float = 3.0,
    user_concentration: float = 60.0,
    rule_scale: float = 1.0,
    user_rule_noise: float = 0.3,
    label_noise: float = 0.05,
) -> Organisation:
    """Simulate an organisation of users in latent groups and their meeting decisions.

    Parameters
    ----------
    rng : numpy.random.Generator
    group_sizes : tuple of int
        Users per group.
    roles : tuple of str, optional
        Role of each group (groups with the same role share base distributions); default
        the thesis' roles for the default sizes, else "role 0", "role 1", ... per group.
    requests_per_user : (low, high)
        Each user's number of requests is uniform on ``low..high``.
    role_strength, user_concentration : float
        Dirichlet concentrations of a group around its role and a user around the group
        (larger: more alike).
    rule_scale : float
        Standard deviation of the groups' main effects on the log-odds of accepting.
    user_rule_noise : float
        Standard deviation of each user's perturbation of the group's effects.
    label_noise : float
        Probability that a decision is flipped.

    Returns
    -------
    Organisation

    Examples
    --------
    >>> organisation = simulate_organisation(np.random.default_rng(1), group_sizes=(1, 2),
    ...                                      requests_per_user=(20, 20))
    >>> organisation.truth["group"].tolist(), len(organisation.requests)
    ([0, 1, 1], 60)
    """
    if not group_sizes or min(group_sizes) < 1:
        raise CNBError(f"every group needs at least one user, got {group_sizes}")
    low, high = requests_per_user
    if not 1 <= low <= high:
        raise CNBError(
            f"requests_per_user must be (low, high) with 1 <= low <= high, got {requests_per_user}"
        )
    if not 0 <= label_noise <= 0.5:
        raise CNBError(f"label_noise must be in [0, 0.5], got {label_noise}")
    if roles is None:
        roles = (
            DEFAULT_ROLES
            if tuple(group_sizes) == DEFAULT_GROUP_SIZES
            else tuple(f"role {g}" for g in range(len(group_sizes)))
        )
    if len(roles) != len(group_sizes):
        raise CNBError(f"{len(roles)} roles for {len(group_sizes)} groups")
    base = {
        role: {f: rng.dirichlet(np.full(len(v), 0.8)) for f, v in MEETING_FEATURES.items()}
        for role in dict.fromkeys(roles)
    }
    frames, truth = [], []
    user = 0
    for group, (size, role) in enumerate(zip(group_sizes, roles, strict=True)):
        group_dist = {f: _around(rng, p, role_strength) for f, p in base[role].items()}
        effects = {f: rng.normal(0.0, rule_scale, len(v)) for f, v in MEETING_FEATURES.items()}
        interactions = rng.uniform(1.0, 3.0, size=3)
        bias = rng.normal(0.0, 0.5)
        for _ in range(size):
            name = f"user{user:02d}"
            n_rows = int(rng.integers(low, high + 1))
            codes = _draw_features(rng, group_dist, user_concentration, n_rows)
            user_effects = {
                f: e + rng.normal(0.0, user_rule_noise, e.size) for f, e in effects.items()
            }
            score = bias + rng.normal(0.0, user_rule_noise)
            for f in FEATURE_NAMES:
                score = score + user_effects[f][codes[f]]
            score = score + _interactions(codes, interactions)
            accept = rng.random(n_rows) < expit(score)
            accept ^= rng.random(n_rows) < label_noise
            frame = pd.DataFrame(
                {f: np.asarray(MEETING_FEATURES[f], dtype=object)[codes[f]] for f in FEATURE_NAMES}
            )
            frame.insert(0, "user", name)
            frame["accepted"] = np.where(accept, LABELS[1], LABELS[0])
            frames.append(frame)
            truth.append({"user": name, "group": group, "role": role})
            user += 1
    return Organisation(pd.concat(frames, ignore_index=True), pd.DataFrame(truth))


def _draw_features(
    rng: np.random.Generator,
    group_dist: dict[str, np.ndarray],
    user_concentration: float,
    n_rows: int,
) -> dict[str, np.ndarray]:
    """Value codes of each feature for one user's requests, calendar-consistent."""
    codes = {}
    for f, p in group_dist.items():
        q = _around(rng, p, user_concentration)
        if f in _CONFLICT_DETAILS:  # draw among the values other than "other" (code 0)
            codes[f] = 1 + rng.choice(len(q) - 1, size=n_rows, p=q[1:] / q[1:].sum())
        else:
            codes[f] = rng.choice(len(q), size=n_rows, p=q)
    no_conflict = codes["conflict"] == 0
    for f in _CONFLICT_DETAILS:
        codes[f][no_conflict] = 0
    return codes


def _interactions(codes: dict[str, np.ndarray], strength: np.ndarray) -> np.ndarray:
    """Log-odds terms that are not a sum of per-feature effects."""
    conflict = codes["conflict"] == 1
    urgency = _rank(codes["message_importance"], "message_importance")
    clash = urgency - _rank(codes["conflict_importance"], "conflict_importance")
    crowded = codes["busy_fday"] >= 4  # booked-free, booked-busy
    long = codes["duration"] >= 2  # 60 minutes or longer
    supervisor = codes["invitee_relation"] == 3
    return (
        strength[0] * np.where(conflict, 2.0 * clash - 0.5, 0.0)
        - strength[1] * (crowded & long)
        + strength[2] * supervisor * urgency
    )

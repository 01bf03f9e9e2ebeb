"""``ClusteredLogisticRegression(relevance=True)`` (issue 49): columns drawn alike in every
task no longer merge the tasks in the joint clustering; their judged relevance is reported,
saved and refused where it means nothing."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from clusterednb import ClusteredLogisticRegression
from clusterednb.exceptions import CNBError
from model_helpers import assert_relevance_survives_a_model_file


def _opposite_groups(seed: int, n_noise: int, n_tasks: int = 24, n_rows: int = 30):
    """Two groups whose labels follow ``a`` and ``b`` in opposite ways; every column drawn
    alike in every task (only the labels tell the groups apart)."""
    rng = np.random.default_rng(seed)
    frames = []
    for task in range(n_tasks):
        a, b = rng.integers(3, size=n_rows), rng.integers(2, size=n_rows)
        sign = 1.0 if task % 2 else -1.0
        logit = sign * (2.5 * (a == 0) - 2.5 * (b == 1) + 0.5)
        frame = pd.DataFrame({"a": a, "b": b})
        for j in range(n_noise):
            frame[f"noise{j}"] = rng.choice(list("pqrst"), size=n_rows)
        frame["task"] = task
        frame["y"] = (rng.random(n_rows) < 1 / (1 + np.exp(-logit))).astype(int)
        frames.append(frame)
    frame = pd.concat(frames, ignore_index=True)
    return frame.drop(columns=["task", "y"]), frame.y.to_numpy(), frame.task.to_numpy()


def _separation(model) -> float:
    group = np.arange(model.task_ids_.size) % 2
    same = group[:, None] == group[None, :]
    return model.coclustering_[same].mean() - model.coclustering_[~same].mean()


def test_noise_columns_no_longer_merge_the_groups(tmp_path):
    X, y, tasks = _opposite_groups(seed=0, n_noise=8)
    plain = ClusteredLogisticRegression(relevance=False, random_state=0).fit(X, y, tasks)
    judged = ClusteredLogisticRegression(random_state=0, relevance=True).fit(X, y, tasks)
    assert _separation(judged) > 0.5, judged.partition_
    assert _separation(judged) > _separation(plain) + 0.3
    relevance = dict(zip(judged.feature_names_in_, judged.feature_relevance_, strict=True))
    assert list(relevance) == list(X.columns)
    assert max(relevance.values()) < 0.5, relevance  # no column's values differ by group
    assert not hasattr(plain, "feature_relevance_")
    assert judged.fit_summary()["feature_relevance"] == pytest.approx(relevance)

    assert_relevance_survives_a_model_file(judged, X, tasks, tmp_path / "model.cnb", 30)


def test_a_column_whose_values_differ_by_group_stays_relevant():
    X, y, tasks = _opposite_groups(seed=1, n_noise=3)
    rng = np.random.default_rng(5)
    X = X.assign(site=np.where(tasks % 2, rng.choice(["north", "east"], len(X)), "south"))
    model = ClusteredLogisticRegression(random_state=0, relevance=True).fit(X, y, tasks)
    relevance = dict(zip(model.feature_names_in_, model.feature_relevance_, strict=True))
    assert relevance["site"] > 0.9, relevance
    assert _separation(model) > 0.5


def test_relevance_is_refused_where_it_means_nothing():
    X, y, tasks = _opposite_groups(seed=2, n_noise=0, n_tasks=4, n_rows=6)
    with pytest.raises(CNBError, match="relevance must be one of"):
        ClusteredLogisticRegression(relevance="yes").fit(X, y, tasks)
    words = pd.DataFrame({"budget": [1, 0, 2, 0] * 6, "lunch": [0, 3, 0, 1] * 6})
    with pytest.raises(CNBError, match="documents have none"):
        ClusteredLogisticRegression(relevance=True, observation="multinomial").fit(words, y, tasks)

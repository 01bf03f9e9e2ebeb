"""``ClusteredNB(relevance=True)`` (issue 49): columns that do not separate tasks are found
shared, reported per column, kept in the model file, and refused where no engine samples
them."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from clusterednb import ClusteredNB
from clusterednb.exceptions import CNBError
from model_helpers import assert_relevance_survives_a_model_file


def _population(seed: int = 0, n_tasks: int = 24, n_rows: int = 12) -> tuple:
    """Two groups of tasks in which ``a`` and ``b`` follow the label in opposite ways; three
    noise columns with the same distribution everywhere."""
    rng = np.random.default_rng(seed)
    frames = []
    for task in range(n_tasks):
        y = rng.integers(2, size=n_rows)
        follows = y if task % 2 else 1 - y
        a = np.where(rng.random(n_rows) < 0.8, 2 * follows, rng.integers(3, size=n_rows))
        b = np.where(rng.random(n_rows) < 0.8, follows, rng.integers(2, size=n_rows))
        frames.append(
            pd.DataFrame(
                {
                    "a": a,
                    "b": b,
                    "noise_colour": rng.choice(list("rgbyk"), size=n_rows),
                    "noise_number": rng.normal(size=n_rows),
                    "noise_flag": rng.integers(2, size=n_rows),
                    "task": task,
                    "y": y,
                }
            )
        )
    frame = pd.concat(frames, ignore_index=True)
    return frame.drop(columns=["task", "y"]), frame.y.to_numpy(), frame.task.to_numpy()


def test_the_noise_columns_are_found_shared_and_reported_per_column(tmp_path):
    X, y, tasks = _population()
    model = ClusteredNB(relevance=True, random_state=0, progress=False, n_sweeps=200).fit(
        X, y, tasks
    )
    relevance = dict(zip(model.feature_names_in_, model.feature_relevance_, strict=True))
    assert list(relevance) == list(X.columns)
    assert relevance["a"] > 0.5 and relevance["b"] > 0.5, relevance
    # a binary column pays the smallest Occam factor: noise_flag's posterior is 0.09-0.11
    # under every seed, the others' below 0.001
    assert relevance["noise_colour"] < 0.01 and relevance["noise_number"] < 0.01, relevance
    assert relevance["noise_flag"] < 0.2, relevance
    again = ClusteredNB(relevance=True, random_state=0, progress=False, n_sweeps=200).fit(
        X, y, tasks
    )
    np.testing.assert_array_equal(again.feature_relevance_, model.feature_relevance_)

    assert_relevance_survives_a_model_file(model, X, tasks, tmp_path / "model.cnb", 20)


def test_the_noise_does_not_merge_the_two_groups():
    X, y, tasks = _population(seed=1)
    plain = ClusteredNB(random_state=0, progress=False, n_sweeps=200).fit(X, y, tasks)
    relevant = ClusteredNB(relevance=True, random_state=0, progress=False, n_sweeps=200).fit(
        X, y, tasks
    )
    group = np.arange(24) % 2
    together = relevant.coclustering_[group[:, None] == group[None, :]].mean()
    apart = relevant.coclustering_[group[:, None] != group[None, :]].mean()
    assert together > apart + 0.3, (together, apart)
    assert relevant.log_evidence_ > plain.log_evidence_


@pytest.mark.parametrize(
    ("settings", "says"),
    [
        ({"inference": "bhc"}, "sampled by the local Gibbs engine"),
        ({"inference": "gibbs", "backend": "dask"}, "sampled by the local Gibbs engine"),
        ({"relevance_prior": (0, 1)}, "relevance_prior must be two positive numbers"),
        ({"relevance": "yes"}, "relevance must be one of"),
        ({"semi_supervised": True}, "needs inference='gibbs' without relevance"),
    ],
)
def test_what_no_engine_samples_is_refused_by_name(settings, says):
    X, y, tasks = _population(n_tasks=6, n_rows=4)
    y = y.astype(float)
    y[:2] = np.nan  # unlabelled rows, for semi_supervised
    model = ClusteredNB(progress=False, **{"relevance": True, **settings})
    with pytest.raises(CNBError, match=says):
        model.fit(X, y, tasks)


def test_partial_fit_keeps_reporting_relevance():
    X, y, tasks = _population(n_tasks=8)
    model = ClusteredNB(relevance=True, random_state=0, progress=False, n_sweeps=60)
    model.fit(X.iloc[:60], y[:60], tasks[:60]).partial_fit(X.iloc[60:], y[60:], tasks[60:])
    assert model.feature_relevance_.shape == (X.shape[1],)
    assert model.task_ids_.size == 8

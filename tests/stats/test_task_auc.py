"""The mean AUC within tasks from one sort equals scikit-learn's, task by task."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import roc_auc_score

from clusterednb.stats.task_auc import mean_task_auc


@pytest.mark.parametrize("seed", range(5))
def test_mean_task_auc_equals_scikit_learn_task_by_task(seed):
    rng = np.random.default_rng(seed)
    for _ in range(40):
        n = int(rng.integers(1, 80))
        task = rng.integers(0, 6, n)
        y = rng.integers(0, 2, n)
        scores = np.round(rng.random(n), 1)  # many ties
        by_task = [
            roc_auc_score(y[task == t], scores[task == t])
            for t in np.unique(task)
            if np.unique(y[task == t]).size == 2
        ]
        found = mean_task_auc(y, scores, task)
        if by_task:
            assert found == pytest.approx(np.mean(by_task), abs=1e-12)
        else:
            assert np.isnan(found)


def test_mean_task_auc_of_nothing_is_nan():
    assert np.isnan(mean_task_auc(np.zeros(0), np.zeros(0), np.zeros(0)))
    assert np.isnan(mean_task_auc(np.array([1, 1]), np.array([0.2, 0.4]), np.array([0, 0])))

"""Rows shared by the ClusteredLearner tests."""

from __future__ import annotations

import numpy as np
import pytest

from clusterednb.data.synthetic import make_logistic_population


@pytest.fixture(scope="module")
def population():
    """Eight tasks of 30 rows in two planted groups: ``(X, y, tasks)``."""
    planted = make_logistic_population(
        np.random.default_rng(4), group_sizes=(4, 4), rows_per_task=30, n_features=3
    )
    frame = planted.frame
    return frame[planted.feature_names], frame["label"].to_numpy(), frame["task"].to_numpy()

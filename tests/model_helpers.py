"""Checks that any fitted estimator of the package owes a model file."""

from __future__ import annotations

import numpy as np

import clusterednb


def assert_relevance_survives_a_model_file(model, X, tasks, path, n_rows: int) -> None:
    """Save ``model`` to ``path`` and load it: the same ``feature_relevance_``, the same
    probabilities for the first ``n_rows`` rows, and a new task's rows still sum to one."""
    model.save(path)
    loaded = clusterednb.load(path)
    np.testing.assert_array_equal(loaded.feature_relevance_, model.feature_relevance_)
    rows, own = X.head(n_rows), tasks[:n_rows]
    np.testing.assert_allclose(loaded.predict_proba(rows, own), model.predict_proba(rows, own))
    new = model.predict_proba(rows, ["someone new"] * n_rows)
    np.testing.assert_allclose(new.sum(axis=1), 1.0)

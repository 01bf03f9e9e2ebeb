"""Tiny ready-made data sets and splits for the protocols' examples.

A docstring imports the fixture module that defines what it uses (:mod:`clusterednb.examples`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from clusterednb.data.synthetic import make_planted_population
from clusterednb.evaluation.datasets import EvalDataset, from_frame
from clusterednb.examples.naive_bayes import colour_rows


def transfer_split() -> tuple[pd.DataFrame, pd.DataFrame]:
    """A protocol-T split of :func:`colour_rows` with target ``ann`` and ``k = 1``.

    Columns ``task``, ``label`` (1 for ``yes``) and ``colour``. The training frame holds
    every row of ``bob`` and ``cy`` and ann's first row (red, liked); the test frame holds
    ann's other two rows: red (liked) and blue (not liked).

    Examples
    --------
    >>> train, test = transfer_split()
    >>> len(train), test[["colour", "label"]].values.tolist()
    (7, [['red', 1], ['blue', 0]])
    """
    X, y, tasks = colour_rows()
    frame = X.assign(task=tasks, label=(y == "yes").astype(int))[["task", "label", "colour"]]
    test = frame.index.isin([1, 2])
    return frame[~test].reset_index(drop=True), frame[test].reset_index(drop=True)


def auc_rows() -> pd.DataFrame:
    """Protocol-T rows of two models on three targets at ``k = 1``: ``lr-pooled`` and ``cnb``.

    Examples
    --------
    >>> auc_rows().groupby("model")["auc"].mean().round(3).to_dict()
    {'cnb': 0.79, 'lr-pooled': 0.75}
    """
    aucs = {"lr-pooled": (0.70, 0.80, 0.75), "cnb": (0.74, 0.83, 0.80)}
    return pd.DataFrame(
        [
            {"model": model, "k": 1, "target": target, "auc": auc, "skipped": False}
            for model, values in aucs.items()
            for target, auc in enumerate(values)
        ]
    )


def eval_dataset() -> EvalDataset:
    """A planted population as an evaluation data set: two groups of three tasks (``u0`` …
    ``u5``), 20 labelled rows each, three features of three values (seed 0).

    Examples
    --------
    >>> dataset = eval_dataset()
    >>> dataset.features, dataset.frame["task"].nunique(), len(dataset.frame)
    (['f0', 'f1', 'f2'], 6, 120)
    """
    population = make_planted_population(
        np.random.default_rng(0), group_sizes=(3, 3), rows_per_task=20, n_features=3, n_values=3
    )
    return from_frame(population.frame, "task", "label", name="planted")

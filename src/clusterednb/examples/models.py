"""Tiny ready-made schemas, observation models and counts: what the docstrings' examples of the
lower layers start from.

A docstring imports the fixture module that defines what it uses (:mod:`clusterednb.examples`).
"""

from __future__ import annotations

import atexit
import shutil
import tempfile
from pathlib import Path

import numpy as np

from clusterednb.data.schema import FeatureSchema
from clusterednb.models.document_events import MultinomialDirichletNB
from clusterednb.models.observation import DirichletNB
from clusterednb.stats.counts import Counts


def colour_schema() -> FeatureSchema:
    """One feature, ``colour``, of values ``red`` (code 0) and ``blue`` (code 1); classes 0, 1.

    Examples
    --------
    >>> colour_schema().offsets.tolist()  # the value columns of each feature
    [0, 2]
    """
    return FeatureSchema(("colour",), (("red", "blue"),), (0, 1))


def colour_model() -> DirichletNB:
    """The Dirichlet–naive-Bayes model of :func:`colour_schema` with ``α = β = 1``.

    Examples
    --------
    >>> colour_model().log_marginal(one_row_counts()).round(4).tolist()  # log(1/2 · 1/2)
    [-1.3863]
    """
    return DirichletNB(colour_schema())


def one_row_counts() -> Counts:
    """The counts of one task with one row: ``red``, labelled 0.

    Examples
    --------
    >>> counts = one_row_counts()
    >>> counts.label_counts.tolist(), counts.value_counts.tolist()
    ([[1, 0]], [[[1, 0], [0, 0]]])
    """
    return Counts(np.array([[1, 0]]), np.array([[[1, 0], [0, 0]]]))


def three_task_counts() -> Counts:
    """Three tasks of two rows each: tasks 0 and 1 saw ``red`` → 0 twice, task 2 ``blue`` → 1.

    Examples
    --------
    >>> three_task_counts().label_counts.tolist()
    [[2, 0], [2, 0], [0, 2]]
    """
    return Counts(
        np.array([[2, 0], [2, 0], [0, 2]]),
        np.array([[[2, 0], [0, 0]], [[2, 0], [0, 0]], [[0, 0], [0, 2]]]),
    )


def tokens_model() -> MultinomialDirichletNB:
    """A multinomial document model over the words ``cake`` and ``tea``; classes 0, 1.

    Examples
    --------
    >>> tokens_model().schema.n_values_total
    2
    """
    return MultinomialDirichletNB(FeatureSchema(("tokens",), (("cake", "tea"),), (0, 1)))


def scratch_file(name: str) -> Path:
    """A path called ``name`` in a new, empty temporary folder, for examples that write files;
    the folder and what the example wrote there are removed when the interpreter exits (the
    doctests of every run would otherwise leave one folder each in the temporary directory).

    Examples
    --------
    >>> path = scratch_file("model.cnb")
    >>> (path.name, path.exists(), path.parent.is_dir())
    ('model.cnb', False, True)
    """
    folder = tempfile.mkdtemp(prefix="clusterednb-")
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    return Path(folder) / name

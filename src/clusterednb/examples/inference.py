"""Tiny ready-made posteriors and engine inputs for the inference engines' examples.

A docstring imports the fixture module that defines what it uses (:mod:`clusterednb.examples`).
"""

from __future__ import annotations

import numpy as np
from scipy import sparse

from clusterednb.examples.models import colour_model, three_task_counts
from clusterednb.inference.gibbs.data import GibbsData, LogGammaTables
from clusterednb.inference.gibbs.state import GibbsState, initial_state, prepare
from clusterednb.inference.posterior import Posterior
from clusterednb.inference.variational.problem import VariationalProblem


def three_task_posterior() -> Posterior:
    """The posterior of :func:`three_task_counts` given the partition ``{0, 1}, {2}``, ``γ = 1``.

    Examples
    --------
    >>> posterior = three_task_posterior()
    >>> posterior.components.tolist(), np.exp(posterior.cold_log_weights).round(4).tolist()
    ([0, 0, 1], [0.5, 0.25, 0.25])
    """
    return Posterior.of_partition(three_task_counts(), np.array([0, 0, 1]), gamma=1.0)


def variational_problem() -> VariationalProblem:
    """The three tasks of :func:`three_task_counts` as the variational engine's problem.

    Examples
    --------
    >>> problem = variational_problem()
    >>> problem.shape  # (classes, values)
    (2, 2)
    """
    counts = three_task_counts()
    n_tasks = counts.value_counts.shape[0]
    flat = sparse.csr_matrix(counts.value_counts.reshape(n_tasks, -1))
    return VariationalProblem(colour_model(), flat, counts.label_counts)


def gibbs_start() -> tuple[GibbsData, GibbsState]:
    """The sampler's data for :func:`three_task_counts` and a state with tasks 0 and 1 in one
    cluster (slot 0) and task 2 in another (slot 1), ``γ = 1``.

    Examples
    --------
    >>> data, state = gibbs_start()
    >>> data.n_tasks, state.n_clusters
    (3, 2)
    """
    no_rows = np.zeros((0, 1), dtype=np.int64)
    data = prepare(colour_model(), three_task_counts(), no_rows, np.zeros(0, dtype=np.int64))
    start = np.array([0, 0, 1])
    return data, initial_state(np.random.default_rng(0), data, 1.0, start)


def dense_statistics() -> tuple[np.ndarray, np.ndarray, tuple[np.ndarray, ...]]:
    """:func:`three_task_counts` as the compiled kernels' dense cells (3, 4) and totals (3, 2)
    per task, with the packed lgamma tables of ``β = 1``.

    Examples
    --------
    >>> cells, totals, tables = dense_statistics()
    >>> cells.tolist(), totals.tolist()
    ([[2, 0, 0, 0], [2, 0, 0, 0], [0, 0, 0, 2]], [[2, 0], [2, 0], [0, 2]])
    """
    cells = np.array([[2, 0, 0, 0], [2, 0, 0, 0], [0, 0, 0, 2]])
    totals = np.array([[2, 0], [2, 0], [0, 2]])
    return cells, totals, LogGammaTables.build(np.ones(4), np.full(2, 2.0), 10).packed()

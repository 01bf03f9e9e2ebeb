"""The posterior predictive of rows: known tasks' mixtures and the new-task (CRP) predictive.

:class:`~clusterednb.inference.posterior.Posterior` holds the mixture (components, weights,
label counts); these functions compute ``log P(y | x, D)`` from it with an observation
model, in chunks of rows so that memory stays bounded.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np

from clusterednb.models.observation import ConjugateModel
from clusterednb.stats.kernels import log_normalize_rows, log_normalize_rows_inplace


class PosteriorTables(Protocol):
    """What the predictive reads of a :class:`clusterednb.inference.posterior.Posterior`.

    Examples
    --------
    >>> from clusterednb.examples import inference as toy
    >>> posterior = toy.three_task_posterior()  # a clusterednb.inference.posterior.Posterior
    >>> all(hasattr(posterior, name) for name in PosteriorTables.__annotations__)
    True
    """

    component_counts: np.ndarray
    cold_label_counts: np.ndarray
    cold_components: np.ndarray
    cold_log_weights: np.ndarray


ROW_CHUNK = 65_536  # rows (times mixture entries) evaluated at once
ENTRY_VALUES = 2**24
"""Most numbers a chunk of known tasks' rows holds at once: each (row, mixture entry) pair
holds its row's codes and joint (an exact posterior of 8 tasks mixes thousands of entries a
task). The components' tables, when not computed once, are those the chunk uses: at most
the posterior's own size."""


def mixture_log_proba(
    posterior: PosteriorTables,
    model: ConjugateModel,
    X: np.ndarray,
    task: np.ndarray,
    indptr: np.ndarray,
    components: np.ndarray,
    log_weights: np.ndarray,
    log_prior_of_entry: np.ndarray,
    mix_joint: bool,
    tables: np.ndarray | None,
) -> np.ndarray:
    """Mixture predictive of rows whose task's entries are ``indptr[t]:indptr[t + 1]``.

    Examples
    --------
    Task 0 of :func:`clusterednb.examples.inference.three_task_posterior` (its cluster saw red four
    times under
    "no"; the task's labels 2 : 0): ``P(no | red) ∝ 3/4 · 5/6`` against ``1/4 · 1/2``:

    >>> from clusterednb.examples import models as toy
    >>> from clusterednb.examples import inference as engine_toy
    >>> model, posterior = toy.colour_model(), engine_toy.three_task_posterior()
    >>> log_prior = model.log_label_prior(posterior.task_label_counts)
    >>> prior_of_entry = np.repeat(np.arange(3), np.diff(posterior.indptr))
    >>> out = mixture_log_proba(posterior, model, np.array([[0]]), np.array([0]),
    ...                         posterior.indptr, posterior.components, posterior.log_weights,
    ...                         log_prior[prior_of_entry], posterior.mix_joint, None)
    >>> np.exp(out).round(4).tolist()
    [[0.8333, 0.1667]]
    """
    out = np.empty((X.shape[0], model.schema.n_classes))
    per_entry = X.shape[1] + model.schema.n_classes
    chunk = max(1, min(ROW_CHUNK, ENTRY_VALUES // (int(np.diff(indptr).max()) * per_entry)))
    for start in range(0, X.shape[0], chunk):
        rows = slice(start, start + chunk)
        first = indptr[task[rows]]
        lengths = indptr[task[rows] + 1] - first
        if np.all(lengths == 1):  # one component a task (no sharing, complete sharing)
            row_start, entry, X_of_entry = None, first, X[rows]
        else:
            row_of_entry = np.repeat(np.arange(lengths.size), lengths)
            row_start = np.concatenate([[0], np.cumsum(lengths)[:-1]])
            entry = first[row_of_entry] + np.arange(row_of_entry.size) - row_start[row_of_entry]
            X_of_entry = X[rows][row_of_entry]
        log_joint = _log_joint(
            posterior, model, X_of_entry, log_prior_of_entry[entry], components[entry], tables
        )
        log_joint = np.ascontiguousarray(log_joint, dtype=np.float64)  # fresh: changed in place
        if row_start is None and not log_weights.any():  # every row's one weight is 1
            log_normalize_rows_inplace(log_joint)
            out[rows] = log_joint
            continue
        if not mix_joint:
            log_normalize_rows_inplace(log_joint)
        weighted = log_joint + log_weights[entry][:, None]
        if row_start is not None:
            weighted = np.logaddexp.reduceat(weighted, row_start, axis=0)
        out[rows] = log_normalize_rows(weighted) if mix_joint else weighted
    return out


def _log_joint(
    posterior: PosteriorTables,
    model: ConjugateModel,
    X: np.ndarray,
    log_prior: np.ndarray,
    component: np.ndarray,
    tables: np.ndarray | None,
) -> np.ndarray:
    if tables is not None:
        return model.log_joint(X, log_prior, tables, component)
    used, table_of_row = np.unique(component, return_inverse=True)
    return model.log_joint(
        X, log_prior, model.log_feature_table(posterior.component_counts[used]), table_of_row
    )


def cold_start_log_proba(
    posterior: PosteriorTables,
    model: ConjugateModel,
    X: np.ndarray,
    group: np.ndarray,
    tables: np.ndarray | None,
) -> np.ndarray:
    """CRP predictive of new tasks, each weight times the likelihood of the task's rows.

    ``w'_k ∝ w_k Π_i P_k(x_i)`` with ``P_k(x) = Σ_y P(y) P_k(x | y)`` (labels summed out
    row by row); each row's predictive is then ``Σ_k w'_k P_k(y | x)``. For one row this
    is exactly the mixture of the components' joints.

    Examples
    --------
    A new task's red row: what the posterior predicts for a task never seen (index -1):

    >>> from clusterednb.examples import models as toy
    >>> from clusterednb.examples import inference as engine_toy
    >>> model, posterior = toy.colour_model(), engine_toy.three_task_posterior()
    >>> red = np.array([[0]])
    >>> out = cold_start_log_proba(posterior, model, red, np.array([0]), None)
    >>> bool(np.allclose(out, posterior.predict_log_proba(model, red, np.array([-1]))))
    True
    >>> bool(np.isclose(np.exp(out).sum(), 1.0))
    True
    """
    n_rows, n_components = X.shape[0], posterior.cold_components.size
    log_prior = model.log_label_prior(posterior.cold_label_counts)
    log_joint = np.empty((n_rows, n_components, model.schema.n_classes))
    chunk = max(ROW_CHUNK // n_components, 1)
    for start in range(0, n_rows, chunk):
        rows = X[start : start + chunk]
        log_joint[start : start + chunk] = _log_joint(
            posterior,
            model,
            rows[np.repeat(np.arange(rows.shape[0]), n_components)],
            np.broadcast_to(log_prior, (rows.shape[0] * n_components, log_prior.size)),
            np.tile(posterior.cold_components, rows.shape[0]),
            tables,
        ).reshape(rows.shape[0], n_components, -1)
    log_marginal = np.logaddexp.reduce(log_joint, axis=2)  # (rows, K)
    _, group_index = np.unique(group, return_inverse=True)
    log_evidence = np.zeros((group_index.max() + 1, n_components))
    np.add.at(log_evidence, group_index, log_marginal)
    log_w = posterior.cold_log_weights + log_evidence
    log_w -= np.logaddexp.reduce(log_w, axis=1, keepdims=True)
    log_cond = log_joint - log_marginal[:, :, None]
    return np.logaddexp.reduce(log_w[group_index][:, :, None] + log_cond, axis=1)

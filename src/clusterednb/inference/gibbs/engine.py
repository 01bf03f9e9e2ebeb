"""Collapsed Gibbs sampling for Clustered Naive Bayes: the driver.

:func:`fit_gibbs` loops over :func:`~clusterednb.inference.gibbs.moves.gibbs_step`, records
the retained samples and builds the Rao-Blackwellised posterior predictive: for each retained
partition, each task's predictive uses its cluster's counts and its own label counts, and the
samples' joints ``P(x, y | sample)`` are averaged before normalising over ``y`` (the ratio
estimate of ``P(x, y | D) / P(x | D)``: the row's own ``x`` weighs the samples, as in the
exact engine; an average of each sample's ``P(y | x)`` stays up to 0.1 away from the exact
predictive however long the chain, BENCHMARKS.md). The
sampler's data and state are in :mod:`~clusterednb.inference.gibbs.state`, its moves in
:mod:`~clusterednb.inference.gibbs.moves`.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from dataclasses import dataclass, field

import numpy as np
from scipy import sparse

from clusterednb.exceptions import DataError
from clusterednb.inference.gibbs.data import GibbsData
from clusterednb.inference.gibbs.moves import AssignmentSweep, gibbs_step, sequential_sweep
from clusterednb.inference.gibbs.sharded import ShardedSweep
from clusterednb.inference.gibbs.state import (
    GibbsSettings,
    GibbsState,
    feature_log_ml,
    initial_state,
    prepare,
    prepare_sparse,
)
from clusterednb.inference.posterior import Posterior
from clusterednb.inference.result import ClusteringResult, require_conjugate
from clusterednb.models.observation import ConjugateModel
from clusterednb.models.partition_prior import canonical_partition, crp_log_prior
from clusterednb.progress import progress
from clusterednb.stats.counts import Counts
from clusterednb.stats.sparse_counts import SparseCounts


@dataclass
class _Recorder:
    """Retained samples of the sampler."""

    partitions: list[np.ndarray] = field(default_factory=list)
    components: list[np.ndarray] = field(default_factory=list)
    task_component: list[np.ndarray] = field(default_factory=list)
    label_counts: list[np.ndarray] = field(default_factory=list)
    sizes: list[np.ndarray] = field(default_factory=list)
    gammas: list[float] = field(default_factory=list)
    log_joint: list[float] = field(default_factory=list)

    def record(self, state: GibbsState, data: GibbsData) -> None:
        slots = state.active_slots()
        schema = data.model.schema
        shape = (slots.size, schema.n_classes, schema.n_values_total)
        self.components.append(state.cluster_cells[slots].reshape(shape).copy())
        self.task_component.append(state.position[state.assignment].copy())
        self.partitions.append(canonical_partition(state.assignment))
        self.label_counts.append(state.task_label_counts.copy())
        self.sizes.append(state.sizes[slots].copy())
        self.gammas.append(state.gamma)
        self.log_joint.append(_labelled_log_joint(state, data))


def _labelled_log_joint(state: GibbsState, data: GibbsData) -> float:
    """``log P(D_labelled | z) + log P(z)`` (feature part) for the current partition.

    Without unlabelled rows the clusters' statistics are the labelled rows' own; otherwise
    the labelled counts are summed per cluster (a sparse product, nothing dense per task).
    """
    cluster = state.position[state.assignment]
    if state.labels.size == 0:
        log_features = feature_log_ml(state, data)
    else:
        n_tasks, n_clusters = data.n_tasks, state.n_clusters
        member = sparse.csr_matrix(
            (np.ones(n_tasks, dtype=np.int64), (cluster, np.arange(n_tasks))),
            shape=(n_clusters, n_tasks),
        )
        schema = data.model.schema
        shape = (n_clusters, schema.n_classes, schema.n_values_total)
        cells = (member @ data.labelled_cells).toarray().reshape(shape)
        log_features = float(data.model.log_marginal_features(cells).sum())
    return log_features + crp_log_prior(cluster, state.gamma)


def fit_gibbs(
    model: ConjugateModel,
    counts: Counts | SparseCounts,
    unlabelled_X: np.ndarray,
    unlabelled_task: np.ndarray,
    gamma: float,
    settings: GibbsSettings,
    rng: np.random.Generator,
    initial_assignment: np.ndarray | None = None,
    sweep: AssignmentSweep | None = None,
) -> ClusteringResult:
    """Run the sampler and summarise its retained samples.

    Parameters
    ----------
    model : ConjugateModel
    counts : Counts or SparseCounts with one group per task (labelled rows)
    unlabelled_X : ndarray of shape (n_unlabelled, n_features)
    unlabelled_task : ndarray of shape (n_unlabelled,)
    gamma : float
        Initial (or fixed) DP concentration.
    settings : GibbsSettings
    rng : numpy.random.Generator
    initial_assignment : ndarray of shape (n_tasks,), optional
        Warm start (-1 for tasks to be placed by the first sweep).
    sweep : callable, optional
        The assignment move (e.g. a :class:`~.sharded.ShardedSweep` on Dask workers).
        Default: the sequential sweep, or with ``settings.n_jobs > 1`` a sharded sweep whose
        ``n_jobs`` shards run in a thread pool.

    Returns
    -------
    ClusteringResult
        ``evidence_kind`` is ``"lower_bound"``: ``log P(D | z*) + log P(z*)`` for the best
        retained partition ``z*``, plus the label terms (thesis §4.3).
        ``extras`` holds ``assignment`` (final state), ``gamma_samples``,
        ``unlabelled_proba`` (Rao-Blackwellised label marginals of the unlabelled rows) and
        ``split_merge_accepted``.

    Examples
    --------
    The sampler's co-clustering against the exact posterior (every partition enumerated):

    >>> from clusterednb.examples import models as toy
    >>> from clusterednb.examples import naive_bayes as nb_toy
    >>> from clusterednb.inference.gibbs.state import GibbsSettings
    >>> counts = toy.three_task_counts()
    >>> result = fit_gibbs(toy.colour_model(), counts, np.zeros((0, 1), int), np.zeros(0, int),
    ...                    1.0, GibbsSettings(n_sweeps=2000, burn_in=100), np.random.default_rng(0))
    >>> exact = nb_toy.exact_clustering()
    >>> bool(np.abs(result.coclustering() - exact.coclustering_).max() < 0.05)
    True
    """
    data = prepare(model, counts, unlabelled_X, unlabelled_task)
    return _run(data, gamma, settings, rng, initial_assignment, sweep)


def fit_gibbs_sparse(
    model: ConjugateModel,
    task_counts: sparse.csr_matrix,
    label_counts: np.ndarray,
    gamma: float,
    settings: GibbsSettings,
    rng: np.random.Generator,
    initial_assignment: np.ndarray | None = None,
) -> ClusteringResult:
    """:func:`fit_gibbs` from sparse counts of labelled rows: nothing dense per task but the
    label counts (cluster statistics are sized by the number of clusters).

    Parameters
    ----------
    model : ConjugateModel
    task_counts : scipy.sparse matrix of shape (n_tasks, n_classes * n_values_total)
        Task ``u``'s value counts, flattened class-major (``counts.value_counts[u].ravel()``;
        :func:`clusterednb.stats.counts.sparse_value_counts` counts rows into it).
    label_counts : ndarray of shape (n_tasks, n_classes)
    gamma, settings, rng, initial_assignment
        As for :func:`fit_gibbs` (``settings.n_jobs > 1`` shards the sweep over threads).

    Examples
    --------
    >>> from scipy import sparse
    >>> from clusterednb import DirichletNB, FeatureSchema
    >>> model = DirichletNB(FeatureSchema(("a", "b"), ((0, 1), (0, 1)), ("no", "yes")))
    >>> zeros, ones = [10, 0, 10, 0, 10, 0, 10, 0], [0, 10, 0, 10, 0, 10, 0, 10]
    >>> cells = sparse.csr_matrix([zeros, zeros, ones, ones])
    >>> result = fit_gibbs_sparse(model, cells, np.full((4, 2), 10), 1.0,
    ...                           GibbsSettings(n_sweeps=50, burn_in=10), np.random.default_rng(0))
    >>> result.partition.tolist()
    [0, 0, 1, 1]
    """
    width = model.schema.n_classes * model.schema.n_values_total
    if task_counts.shape[1] != width or np.shape(label_counts) != (
        task_counts.shape[0],
        model.schema.n_classes,
    ):
        raise DataError(
            f"task counts of shape {task_counts.shape} and label counts of shape "
            f"{np.shape(label_counts)} do not fit the model: expected (n_tasks, {width}) and "
            f"(n_tasks, {model.schema.n_classes})"
        )
    if task_counts.shape[0] == 0:
        raise DataError("no task to fit")
    no_rows = np.zeros((0, model.schema.n_features), dtype=np.int64)
    data = prepare_sparse(model, task_counts, label_counts, no_rows, np.zeros(0, np.int64))
    return _run(data, gamma, settings, rng, initial_assignment, None)


def _run(
    data: GibbsData,
    gamma: float,
    settings: GibbsSettings,
    rng: np.random.Generator,
    initial_assignment: np.ndarray | None,
    sweep: AssignmentSweep | None,
) -> ClusteringResult:
    require_conjugate(data.model, "gibbs")
    with ExitStack() as stack:
        if sweep is None and settings.n_jobs > 1:
            pool = stack.enter_context(ThreadPoolExecutor(settings.n_jobs))
            sweep = ShardedSweep(settings.n_jobs, pool.map)
        return _sample(data, gamma, settings, rng, initial_assignment, sweep or sequential_sweep)


def _sample(
    data: GibbsData,
    gamma: float,
    settings: GibbsSettings,
    rng: np.random.Generator,
    initial_assignment: np.ndarray | None,
    sweep: AssignmentSweep,
) -> ClusteringResult:
    """The chain of :func:`fit_gibbs` on prepared data, with ``sweep`` as the assignment move."""
    model = data.model
    state = initial_state(rng, data, gamma, initial_assignment)
    n_classes = model.schema.n_classes
    step_probability = np.zeros((state.labels.size, n_classes))
    probability_sums = np.zeros_like(step_probability)
    recorder = _Recorder()
    accepted = 0
    reporter = progress(settings.n_sweeps, "Gibbs sweeps", enabled=settings.progress)
    for step in range(settings.n_sweeps):
        info = gibbs_step(rng, state, data, settings, step_probability, sweep)
        accepted += int(info["accepted"])
        if step >= settings.burn_in:
            probability_sums += step_probability
            if (step - settings.burn_in) % settings.thin == 0:
                recorder.record(state, data)
        reporter.update(1)
    reporter.close()
    if not recorder.partitions:
        recorder.record(state, data)
    n_post = max(settings.n_sweeps - settings.burn_in, 1)
    result = _summarise(model, data.labelled_label_counts, recorder)
    result.extras.update(
        assignment=canonical_partition(state.assignment),
        gamma_samples=np.array(recorder.gammas),
        unlabelled_proba=probability_sums / n_post,
        split_merge_accepted=np.array(accepted),
    )
    return result


def _summarise(
    model: ConjugateModel, label_counts: np.ndarray, recorder: _Recorder
) -> ClusteringResult:
    n_samples = len(recorder.partitions)
    n_tasks = label_counts.shape[0]
    starts = np.concatenate([[0], np.cumsum([c.shape[0] for c in recorder.components])])
    empty = np.zeros((1, *recorder.components[0].shape[1:]), dtype=np.int64)
    component_counts = np.concatenate([*recorder.components, empty])
    task_component = np.stack(recorder.task_component) + starts[:-1, None]  # (S, U)
    log_w = -np.log(n_samples)
    # Cold start: CRP over each sample's clusters, plus a new cluster (the empty component).
    gammas = np.array(recorder.gammas)
    sizes = np.concatenate(recorder.sizes)
    sample_of = np.repeat(np.arange(n_samples), [s.size for s in recorder.sizes])
    cold_existing = log_w + np.log(sizes) - np.log(n_tasks + gammas[sample_of])
    cold_new = log_w + np.logaddexp.reduce(np.log(gammas) - np.log(n_tasks + gammas))
    posterior = Posterior(
        component_counts=component_counts,
        task_label_counts=recorder.label_counts[-1],
        indptr=np.arange(n_tasks + 1, dtype=np.int64) * n_samples,
        components=task_component.T.ravel(),
        log_weights=np.full(n_tasks * n_samples, log_w),
        cold_label_counts=np.zeros(label_counts.shape[1], dtype=np.int64),
        cold_components=np.append(np.arange(starts[-1]), starts[-1]),
        cold_log_weights=np.append(cold_existing, cold_new),
        entry_label_counts=np.stack(recorder.label_counts, axis=1).reshape(n_tasks * n_samples, -1),
        mix_joint=True,  # P(y | x, D): the samples' joints, as the exact engine mixes them
    )
    unique, inverse, frequency = _distinct(recorder.partitions)
    log_joint = np.array(recorder.log_joint)
    best_per_unique = np.full(unique.shape[0], -np.inf)
    np.maximum.at(best_per_unique, inverse, log_joint)
    map_index = np.lexsort((best_per_unique, frequency))[-1]
    n_clusters = np.array([p.max() + 1 for p in recorder.partitions])
    log_labels = float(model.log_marginal_labels(label_counts).sum())
    return ClusteringResult(
        posterior=posterior,
        log_evidence=float(log_joint.max()) + log_labels,
        evidence_kind="lower_bound",
        partition=unique[map_index],
        n_clusters_probability=np.bincount(n_clusters, minlength=n_tasks + 1) / n_samples,
        partitions=unique,
        partition_weights=frequency / n_samples,
    )


def _distinct(partitions: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """What ``np.unique(np.stack(partitions), axis=0, return_inverse=True, return_counts=True)``
    returns (the distinct partitions in lexicographic order, each sample's index among them,
    their frequencies), found by hashing each partition's bytes: no sort of the samples."""
    index: dict[bytes, int] = {}
    seen = np.array([index.setdefault(p.tobytes(), len(index)) for p in partitions])
    firsts = np.unique(seen, return_index=True)[1]
    distinct = np.stack([partitions[i] for i in firsts])
    order = np.lexsort(distinct.T[::-1])  # rows in lexicographic order
    rank = np.empty_like(order)
    rank[order] = np.arange(order.size)
    inverse = rank[seen]
    return distinct[order], inverse, np.bincount(inverse, minlength=order.size)

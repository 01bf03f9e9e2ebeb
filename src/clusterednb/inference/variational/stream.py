"""The variational engine over batches of tasks streamed from storage (memoized VI).

For populations too large to hold: the same truncated stick-breaking mean-field model as
:mod:`.variational`, fitted by memoized coordinate ascent (Hughes & Sudderth 2013, as in
bnpy). Each batch of tasks keeps its *summary* — the expected counts (K, CV) and sizes (K,)
of its responsibilities and their entropy — and the global statistics are the sums of the
summaries. Visiting a batch computes its responsibilities from the global statistics,
replaces its summary and updates the global statistics at once, so every batch step is an
exact coordinate-ascent step on the full evidence lower bound, which therefore never
decreases from pass to pass. Memory is the summaries (K × CV per batch), one batch of data,
and two numbers per task for the result (its most probable cluster and that responsibility);
the tasks' counts are read again at every pass.

Merge moves (as in :mod:`.variational`) work across batches: at the start of a pass the
closest pairs of components are chosen, each batch adds what merging a pair would change in
its entropy, and at the end of the pass a pair is merged where the bound rises. Empty
components are dropped but for a few spares.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

import numpy as np
from scipy import sparse

from clusterednb.exceptions import DataError
from clusterednb.inference.posterior import Posterior
from clusterednb.inference.result import require_conjugate
from clusterednb.inference.variational.engine import (
    WEIGHT_FLOOR,
    VariationalSettings,
    _elbo_of,
    _kept,
    _stick_expectations,
)
from clusterednb.inference.variational.kernels import assign_chunk
from clusterednb.inference.variational.merges import (
    closest_pairs,
    merge_entropy,
    merged_components,
)
from clusterednb.inference.variational.problem import VariationalProblem
from clusterednb.inference.variational.seeds import spread_seeds
from clusterednb.models.observation import ConjugateModel

TaskBatches = Callable[[], Iterable[tuple[sparse.csr_matrix, np.ndarray]]]
"""``batches()`` yields, in the same order at every call, ``(task_counts, label_counts)``:
CSR value counts (n_b, C·V) and label counts (n_b, C) of consecutive groups of tasks."""


@dataclass(frozen=True)
class StreamFit:
    """What a streamed fit returns.

    Attributes
    ----------
    partition : int32 ndarray of shape (n_tasks,)
        Most probable component of each task (a row of ``cluster_counts``), in the order the
        batches give the tasks.
    top_weight : float32 ndarray of shape (n_tasks,)
        Its responsibility.
    cluster_counts : ndarray of shape (K, C·V)
        Expected value counts of the components.
    sizes : ndarray of shape (K,)
        Expected number of tasks per component.
    elbo : float
        The evidence lower bound at the end (``evidence_kind = "lower_bound"``).
    trace : ndarray of shape (n_passes,)
        The bound after each pass (non-decreasing).
    label_counts : int32 ndarray of shape (n_tasks, n_classes)
        Each task's label counts (its label prior in the predictive).

    Examples
    --------
    >>> fit = StreamFit(np.array([0, 0, 1], np.int32), np.ones(3, np.float32),
    ...                 np.array([[4.0, 0, 0, 0], [0, 0, 0, 2.0]]), np.array([2.0, 1.0]), -7.0,
    ...                 np.array([-9.0, -7.0]), np.array([[2, 0], [2, 0], [0, 2]], np.int32))
    >>> fit.partition.tolist(), bool(np.all(np.diff(fit.trace) >= 0))
    ([0, 0, 1], True)
    """

    partition: np.ndarray
    top_weight: np.ndarray
    cluster_counts: np.ndarray
    sizes: np.ndarray
    elbo: float
    trace: np.ndarray
    label_counts: np.ndarray

    def posterior(self, gamma: float) -> Posterior:
        """The posterior predictive with each task in its most probable component (its
        responsibilities are not kept) and, for a task never seen, the CRP mixture over the
        components' expected sizes and a new, empty component; ``gamma`` as in the fit.

        Shapes: ``cluster_counts`` (K, C·V) is read as (K, C, V); the result serves
        :meth:`~clusterednb.inference.posterior.Posterior.predict_log_proba` for the tasks
        in batch order.

        Examples
        --------
        The clusters of :func:`clusterednb.examples.models.three_task_counts` as a streamed fit
        would give them;
        task 2's red row is predicted from the blue cluster, a new task's from the CRP mixture:

        >>> from clusterednb.examples import models as toy
        >>> fit = StreamFit(np.array([0, 0, 1], np.int32), np.ones(3, np.float32),
        ...                 np.array([[4.0, 0, 0, 0], [0, 0, 0, 2.0]]), np.array([2.0, 1.0]), -7.0,
        ...                 np.array([-7.0]), np.array([[2, 0], [2, 0], [0, 2]], np.int32))
        >>> posterior = fit.posterior(1.0)
        >>> proba = np.exp(posterior.predict_log_proba(toy.colour_model(), np.array([[0], [0]]),
        ...                                            np.array([2, -1])))
        >>> bool(proba[0, 1] > 0.5), bool(np.allclose(proba.sum(axis=1), 1.0))
        (True, True)
        """
        n_tasks, n_classes = self.label_counts.shape
        occupied = np.flatnonzero(self.sizes > 0)
        counts = self.cluster_counts.reshape(self.sizes.size, n_classes, -1)
        cold_weights = np.append(self.sizes[occupied], gamma)
        return Posterior(
            component_counts=np.concatenate([counts, np.zeros((1, *counts.shape[1:]))]),
            task_label_counts=self.label_counts,
            indptr=np.arange(n_tasks + 1, dtype=np.int64),
            components=self.partition.astype(np.int64),
            log_weights=np.zeros(n_tasks),
            cold_label_counts=np.zeros(n_classes),
            cold_components=np.append(occupied, self.sizes.size),
            cold_log_weights=np.log(cold_weights) - np.log(cold_weights.sum()),
        )


@dataclass
class _Summary:
    counts: np.ndarray  # (K, CV)
    sizes: np.ndarray  # (K,)
    entropy: float
    merge_entropy: np.ndarray  # (n_pairs,) entropy change if each candidate pair merged


def fit_variational_stream(
    model: ConjugateModel,
    batches: TaskBatches,
    gamma: float,
    rng: np.random.Generator,
    settings: VariationalSettings | None = None,
    max_passes: int = 50,
) -> StreamFit:
    """Memoized variational inference over streamed batches of tasks (see the module).

    Parameters
    ----------
    model : ConjugateModel
    batches : callable
        Called once per pass (:data:`TaskBatches`); every task in exactly one batch.
    gamma : float
    rng : numpy.random.Generator
        Chooses the seed tasks (among the first batch).
    settings : VariationalSettings, optional
        ``n_components``, ``tol``, ``spare_components`` and ``merge_pairs`` (``None``: 20)
        are used; one restart, seeded (no sequential start: it is for small populations).
    max_passes : int
        Passes over all batches at most.

    Examples
    --------
    Two batches of two tasks; the second batch shows a group the first does not:

    >>> from clusterednb import DirichletNB, FeatureSchema
    >>> model = DirichletNB(FeatureSchema(("a", "b"), ((0, 1), (0, 1)), ("no", "yes")))
    >>> zeros, ones = [10, 0, 10, 0, 10, 0, 10, 0], [0, 10, 0, 10, 0, 10, 0, 10]
    >>> cells, labels = sparse.csr_matrix([zeros, zeros, ones, ones]), np.full((4, 2), 10)
    >>> batches = lambda: iter([(cells[:2], labels[:2]), (cells[2:], labels[2:])])
    >>> fit = fit_variational_stream(model, batches, 1.0, np.random.default_rng(0))
    >>> fit.partition.tolist(), bool(np.all(np.diff(fit.trace) >= 0))
    ([0, 0, 2, 2], True)
    """
    require_conjugate(model, "variational")
    settings = settings or VariationalSettings()
    n_classes = model.schema.n_classes
    width = n_classes * model.schema.n_values_total
    problem = VariationalProblem(model, sparse.csr_matrix((0, width)), np.zeros((0, n_classes)))
    merge_pairs = 20 if settings.merge_pairs is None else settings.merge_pairs
    summaries: list[_Summary] = []
    tops: list[tuple[np.ndarray, np.ndarray]] = []
    label_parts: list[np.ndarray] = []
    log_labels = 0.0
    global_counts, global_sizes = np.zeros((0, width)), np.zeros(0)
    pairs = np.zeros((0, 2), dtype=np.int64)
    trace: list[float] = []
    for pass_index in range(max_passes):
        for b, (cells, labels) in enumerate(batches()):
            cells = _checked(b, cells, labels, width)
            if pass_index == 0:
                log_labels += float(model.log_marginal_labels(labels).sum())
                label_parts.append(np.asarray(labels, dtype=np.int32))
            if b == 0 and pass_index == 0:
                log_theta, log_pi = _seeded(problem, cells, settings.n_components, rng)
            else:
                log_theta = problem.expected_log_theta(global_counts)
                log_pi = _stick_expectations(global_sizes, gamma)[0]
            summary, r = _visit(cells, log_theta, log_pi, pairs)
            top = (np.argmax(r, axis=1).astype(np.int32), r.max(axis=1).astype(np.float32))
            if pass_index == 0:  # the batch's first visit: its summary joins the sums
                if b == 0:  # the seeded start's shape
                    global_counts = np.zeros_like(summary.counts)
                    global_sizes = np.zeros_like(summary.sizes)
                global_counts += summary.counts
                global_sizes += summary.sizes
                summaries.append(summary)
                tops.append(top)
            else:  # the batch's summary is replaced in the sums
                global_counts += summary.counts - summaries[b].counts
                global_sizes += summary.sizes - summaries[b].sizes
                summaries[b], tops[b] = summary, top
        if not summaries:
            raise DataError("the batches hold no task: there is nothing to fit")
        entropy = sum(s.entropy for s in summaries)
        elbo = _elbo_of(problem, global_counts, global_sizes, entropy, gamma)[0] + log_labels
        if pairs.size:
            elbo = _merge(problem, summaries, tops, pairs, gamma, log_labels, elbo)
            global_counts = sum(s.counts for s in summaries)
            global_sizes = sum(s.sizes for s in summaries)
        keep = _kept(global_sizes, settings.spare_components)
        remap = np.cumsum(keep) - 1
        global_counts, global_sizes = global_counts[keep], global_sizes[keep]
        for s in summaries:
            s.counts, s.sizes = s.counts[keep], s.sizes[keep]
        tops = [(remap[top].astype(np.int32), weight) for top, weight in tops]
        converged = bool(trace) and elbo - trace[-1] < settings.tol * abs(elbo)
        trace.append(elbo)
        if converged:
            break
        pairs = closest_pairs(global_counts, global_sizes, merge_pairs)
    return StreamFit(
        partition=np.concatenate([top for top, _ in tops]),
        top_weight=np.concatenate([weight for _, weight in tops]),
        cluster_counts=global_counts,
        sizes=global_sizes,
        elbo=trace[-1],
        trace=np.array(trace),
        label_counts=np.concatenate(label_parts),
    )


def _checked(b: int, cells: sparse.csr_matrix, labels: np.ndarray, width: int) -> sparse.csr_matrix:
    """Batch ``b``'s value counts as float CSR, after checking its shape against the model's
    cells and its label counts."""
    cells = sparse.csr_matrix(cells, dtype=np.float64)
    if cells.shape[1] != width:
        raise DataError(f"batch {b}: value counts have {cells.shape[1]} columns, the model {width}")
    if np.shape(labels)[0] != cells.shape[0]:
        raise DataError(
            f"batch {b}: {cells.shape[0]} tasks of value counts but {np.shape(labels)[0]} "
            "rows of label counts"
        )
    if cells.nnz and cells.data.min() < 0:
        raise DataError(f"batch {b}: negative counts")
    return cells


def _seeded(
    problem: VariationalProblem,
    cells: sparse.csr_matrix,
    n_components: int,
    rng: np.random.Generator,
) -> tuple[np.ndarray, np.ndarray]:
    """``E[log θ]`` (K, CV) and ``E[log π]`` (K,) of the start: up to ``n_components`` seed
    tasks of the first batch (spread k-means++ style), and empty components for the rest
    (closed for this first step, open afterwards: clusters the first batch does not show
    can be born in later batches)."""
    n_seeds = max(1, min(n_components, cells.shape[0]))
    seeds = spread_seeds(cells, problem.expected_log_theta, n_seeds, rng)
    counts = np.zeros((max(n_components, n_seeds), cells.shape[1]))
    counts[:n_seeds] = cells[seeds].toarray()
    log_pi = np.full(counts.shape[0], -np.inf)
    log_pi[:n_seeds] = 0.0
    return problem.expected_log_theta(counts), log_pi


def _visit(
    cells: sparse.csr_matrix, log_theta: np.ndarray, log_pi: np.ndarray, pairs: np.ndarray
) -> tuple[_Summary, np.ndarray]:
    """One batch's responsibilities (n_b, K) from the global statistics, and its summary."""
    n_components = log_pi.size
    r = np.empty((cells.shape[0], n_components))
    counts = np.zeros((n_components, cells.shape[1]))
    sizes = np.zeros(n_components)
    entropy = assign_chunk(
        cells.indptr,
        cells.indices,
        cells.data,
        0,
        cells.shape[0],
        np.ascontiguousarray(log_theta.T),
        log_pi,
        WEIGHT_FLOOR,
        r,
        counts,
        sizes,
    )
    entropy_changes = np.array([merge_entropy(r[:, a], r[:, b]) for a, b in pairs])
    return _Summary(counts, sizes, float(entropy), entropy_changes), r


def _merge(
    problem: VariationalProblem,
    summaries: list[_Summary],
    tops: list[tuple[np.ndarray, np.ndarray]],
    pairs: np.ndarray,
    gamma: float,
    log_labels: float,
    elbo: float,
) -> float:
    """Merge the candidate pairs that raise the bound (each component at most once), in
    every batch's summary and most-probable-cluster array; return the bound after."""
    counts = sum(s.counts for s in summaries)
    sizes = sum(s.sizes for s in summaries)
    entropy = sum(s.entropy for s in summaries)
    touched: set[int] = set()
    for i, (a, b) in enumerate(pairs):
        if a in touched or b in touched:
            continue
        new_counts, new_sizes = merged_components(counts, sizes, a, b)
        new_entropy = entropy + sum(s.merge_entropy[i] for s in summaries)
        new_elbo = _elbo_of(problem, new_counts, new_sizes, new_entropy, gamma)[0] + log_labels
        if new_elbo <= elbo:
            continue
        for s in summaries:
            s.counts[a] += s.counts[b]
            s.counts[b] = 0.0
            s.sizes[a] += s.sizes[b]
            s.sizes[b] = 0.0
            s.entropy += s.merge_entropy[i]
        for top, _ in tops:
            # The merged responsibility r_a + r_b is not kept per task; the reported weight
            # of a task that had a or b as its top is a lower bound of it.
            top[top == b] = a
        counts, sizes, entropy, elbo = new_counts, new_sizes, new_entropy, new_elbo
        touched.update((int(a), int(b)))
    return elbo

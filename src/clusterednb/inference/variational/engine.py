"""Engine ``"variational"``: truncated stick-breaking mean-field variational inference.

For the Dirichlet-process mixture of Dirichlet–multinomial naive Bayes models over tasks
(Blei & Jordan 2006), with truncation level ``K``:

    q(V, θ, z) = Π_{k<K} Beta(V_k; a_k, b_k) · Π_{k,y,f} Dir(θ_kyf; β_yf + N_kyf)
                 · Π_u Cat(z_u; r_u),

``N_k = Σ_u r_uk n_u`` the expected counts of cluster ``k`` (``n_u`` task ``u``'s labelled
value counts), ``a_k = 1 + Σ_u r_uk``, ``b_k = γ + Σ_u Σ_{j>k} r_uj``, and

    log r_uk = E[log π_k] + Σ_{y,v} n_uyv E[log θ_kyv] + const.

Coordinate ascent alternates the three factors; each update cannot decrease the evidence lower
bound (ELBO), which is computed right after the cluster factors are refreshed, where the data
and ``θ`` terms collapse to ``Σ_k Σ_{y,f} [log B(β + N_kyf) − log B(β)]``. The task label
terms ``Σ_u log DM(m_u; α)`` do not depend on the clustering and are added exactly. The result
is the best of ``n_init`` restarts. Restart ``i`` seeds ``⌈K / 4^i⌉`` clusters with the counts
of as many distinct random tasks and leaves the others empty (they can still take tasks, so
clusters are born where the data want them); mean-field updates cannot merge clusters, so a
start with every cluster seeded over-splits a small population and one with few seeds
under-splits a large one. Up to ``sequential_start_tasks`` tasks one more restart starts from a
greedy sequential pass of the collapsed model, which finds modes no seeded start reaches when
a few tasks hold many rows each. The winner's ELBO is a lower bound on the log evidence of the
truncated model (``evidence_kind = "lower_bound"``; tested below the exact Dirichlet-process
evidence on small problems).

Each iteration is one compiled pass over every task's non-zero cells (its scores, softmax
and the expected counts of the components it keeps: responsibilities below ``1e-10`` of a
row's total are set to zero and the row renormalised, a valid ``q``), so a fit is linear in
the number of tasks; chunks of tasks run in threads with ``n_jobs``. Mean-field updates
cannot join two components that split one group, so after each pass **merge moves** try
the closest pairs of components (by per-task count profile) and merge a pair when the ELBO
rises; components left with no mass are dropped but for a few spares, in which new clusters
can still be born.

Up to ``sequential_start_tasks`` tasks (2 000) the answer is finished in the collapsed model:
the winner's mode is polished by iterated conditional modes
(:func:`~clusterednb.inference.variational.collapsed.collapsed_polish`), and the predictive
is then averaged over ``refine_sweeps`` collapsed Gibbs sweeps started at that mode
(:func:`~clusterednb.inference.variational.collapsed.gibbs_refinement`): one mode cannot
stand for a posterior spread over many partitions. Above that size (where the engine is
meant to be used) the answer is the mean-field one; the evidence is the ELBO either way.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Executor, ThreadPoolExecutor
from contextlib import ExitStack
from dataclasses import dataclass

import numpy as np
from scipy import sparse
from scipy.special import digamma, gammaln

from clusterednb.inference.posterior import Posterior
from clusterednb.inference.result import ClusteringResult, require_conjugate
from clusterednb.inference.variational.collapsed import (
    collapsed_polish,
    gibbs_refinement,
    sequential_partition,
)
from clusterednb.inference.variational.kernels import assign_chunk
from clusterednb.inference.variational.merges import (
    closest_pairs,
    merge_entropy,
    merged_components,
)
from clusterednb.inference.variational.problem import VariationalProblem, VariationalSettings
from clusterednb.inference.variational.seeds import spread_seeds
from clusterednb.models.observation import ConjugateModel
from clusterednb.models.partition_prior import canonical_partition
from clusterednb.stats.counts import Counts
from clusterednb.stats.sparse_counts import SparseCounts

COCLUSTERING_LIMIT = 2000
WEIGHT_FLOOR = 1e-10
DEFAULT_SETTINGS = VariationalSettings()
"""The settings a fit uses when none are given."""


@dataclass(frozen=True)
class _Fit:
    responsibilities: np.ndarray  # (U, K)
    elbo: float
    trace: np.ndarray  # ELBO after each iteration


def _stick_expectations(sizes: np.ndarray, gamma: float) -> tuple[np.ndarray, np.ndarray, float]:
    """``E[log π_k]`` and the ``V`` part of the ELBO, for expected cluster sizes (K,)."""
    n_components = sizes.size
    after = np.concatenate([np.cumsum(sizes[::-1])[::-1][1:], [0.0]])  # Σ_{j>k} sizes_j
    a, b = 1.0 + sizes[:-1], gamma + after[:-1]
    log_v = digamma(a) - digamma(a + b)
    log_rest = digamma(b) - digamma(a + b)
    log_pi = np.zeros(n_components)
    log_pi[:-1] = log_v
    log_pi[1:] += np.cumsum(log_rest)
    log_prior = np.log(gamma) + (gamma - 1.0) * log_rest  # E[log Beta(V; 1, γ)]
    log_q = gammaln(a + b) - gammaln(a) - gammaln(b) + (a - 1) * log_v + (b - 1) * log_rest
    return log_pi, a, float((log_prior - log_q).sum())


def _elbo_of(
    problem: VariationalProblem,
    cluster_counts: np.ndarray,
    sizes: np.ndarray,
    entropy: float,
    gamma: float,
) -> tuple[float, np.ndarray]:
    """ELBO from the expected counts (K, CV) and sizes (K,) of the responsibilities; also
    ``E[log π]``."""
    log_pi, _, stick_terms = _stick_expectations(sizes, gamma)
    elbo = (
        problem.log_features(cluster_counts)
        + float(sizes @ log_pi)
        + stick_terms
        + entropy
        + problem.log_labels
    )
    return elbo, log_pi


def _assign(
    problem: VariationalProblem,
    log_theta: np.ndarray,
    log_pi: np.ndarray,
    n_chunks: int,
    pool: Executor | None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """The responsibilities' update and what the ELBO needs of it, by the compiled fused
    step over ``n_chunks`` chunks of tasks (in ``pool`` when given).

    Returns ``r`` (U, K), expected counts (K, CV), sizes (K,) and the summed entropy.
    """
    counts = problem.task_counts
    n_components = log_pi.size
    log_theta_t = np.ascontiguousarray(log_theta.T)
    r = np.empty((problem.n_tasks, n_components))
    bounds = np.linspace(0, problem.n_tasks, n_chunks + 1).astype(np.int64)
    partial_counts = np.zeros((n_chunks, n_components, log_theta.shape[1]))
    partial_sizes = np.zeros((n_chunks, n_components))

    def chunk(i: int) -> float:
        return assign_chunk(
            counts.indptr,
            counts.indices,
            counts.data,
            bounds[i],
            bounds[i + 1],
            log_theta_t,
            log_pi,
            WEIGHT_FLOOR,
            r,
            partial_counts[i],
            partial_sizes[i],
        )

    entropies = list(pool.map(chunk, range(n_chunks)) if pool else map(chunk, range(n_chunks)))
    return r, partial_counts.sum(axis=0), partial_sizes.sum(axis=0), float(sum(entropies))


def _merge_pass(
    problem: VariationalProblem,
    r: np.ndarray,
    state: tuple[np.ndarray, np.ndarray, float, float],
    gamma: float,
    max_pairs: int,
) -> tuple[np.ndarray, np.ndarray, float, float]:
    """Merge moves: try the ``max_pairs`` pairs of components whose per-task count profiles
    are closest; merge a pair (its responsibilities added, in place in ``r``) when that
    raises the ELBO, each component at most once per pass. Mean-field updates cannot merge
    two components that split one group; this move can, and it never lowers the bound.

    ``state = (cluster_counts (K, CV), sizes (K,), entropy, elbo)``; returns the new state
    (merged-away components stay, empty, for :func:`_drop_empty`).
    """
    cluster_counts, sizes, entropy, elbo = state
    touched: set[int] = set()
    for a, b in closest_pairs(cluster_counts, sizes, max_pairs):
        if a in touched or b in touched:
            continue
        rows = np.flatnonzero((r[:, a] > 0) | (r[:, b] > 0))
        r_a, r_b = r[rows, a], r[rows, b]
        new_entropy = entropy + merge_entropy(r_a, r_b)
        new_counts, new_sizes = merged_components(cluster_counts, sizes, a, b)
        new_elbo, _ = _elbo_of(problem, new_counts, new_sizes, new_entropy, gamma)
        if new_elbo > elbo:
            r[rows, a], r[rows, b] = r_a + r_b, 0.0
            cluster_counts, sizes, entropy, elbo = new_counts, new_sizes, new_entropy, new_elbo
            touched.update((int(a), int(b)))
    return cluster_counts, sizes, entropy, elbo


def _kept(sizes: np.ndarray, spare: int) -> np.ndarray:
    """Mask of the components to keep: every one holding mass, and the first ``spare`` of
    those holding none (so clusters can still be born)."""
    empty = sizes == 0.0
    return ~empty | (np.cumsum(empty) <= spare)


def _one_restart(
    problem: VariationalProblem,
    gamma: float,
    n_components: int,
    settings: VariationalSettings,
    rng: np.random.Generator,
    n_seeds: int,
    pool: Executor | None = None,
) -> _Fit:
    seeds = spread_seeds(problem.task_counts, problem.expected_log_theta, n_seeds, rng)
    # The first step scores tasks against the seeds alone (the others start empty).
    cluster_counts = np.zeros((n_components, problem.task_counts.shape[1]))
    cluster_counts[:n_seeds] = problem.task_counts[seeds].toarray()
    log_pi = np.full(n_components, -np.inf)
    log_pi[:n_seeds] = 0.0
    return _coordinate_ascent(problem, gamma, cluster_counts, log_pi, settings, pool)


def _sequential_restart(
    problem: VariationalProblem,
    gamma: float,
    n_components: int,
    settings: VariationalSettings,
    pool: Executor | None = None,
) -> _Fit:
    """The restart that starts from :func:`sequential_partition` (its clusters' counts and
    sizes, and empty components up to the truncation)."""
    partition = sequential_partition(problem, gamma)
    n_start = int(partition.max()) + 1
    n_components = max(n_components, n_start + settings.spare_components)
    indicator = sparse.csr_matrix(
        (np.ones(partition.size), (partition, np.arange(partition.size))),
        shape=(n_components, partition.size),
    )
    cluster_counts = (indicator @ problem.task_counts).toarray()
    sizes = np.asarray(indicator.sum(axis=1)).ravel()
    _, log_pi = _elbo_of(problem, cluster_counts, sizes, 0.0, gamma)
    log_pi[n_start:] = -np.inf
    return _coordinate_ascent(problem, gamma, cluster_counts, log_pi, settings, pool)


def _coordinate_ascent(
    problem: VariationalProblem,
    gamma: float,
    cluster_counts: np.ndarray,
    log_pi: np.ndarray,
    settings: VariationalSettings,
    pool: Executor | None,
) -> _Fit:
    """Iterate the updates from the clusters' expected counts (K, CV) and ``E[log π]`` (K,)
    until the ELBO settles (see the module)."""
    n_chunks = settings.n_jobs if pool else 1
    merge_pairs = settings.merge_pairs
    if merge_pairs is None:
        merge_pairs = 20 if problem.n_tasks > settings.max_restart_tasks else 0
    trace: list[float] = []
    for _ in range(settings.max_iter + 1):
        log_theta = problem.expected_log_theta(cluster_counts)
        r, cluster_counts, sizes, entropy = _assign(problem, log_theta, log_pi, n_chunks, pool)
        if merge_pairs:
            new_elbo, _ = _elbo_of(problem, cluster_counts, sizes, entropy, gamma)
            cluster_counts, sizes, entropy, _ = _merge_pass(
                problem, r, (cluster_counts, sizes, entropy, new_elbo), gamma, merge_pairs
            )
        keep = _kept(sizes, settings.spare_components)
        cluster_counts, sizes = cluster_counts[keep], sizes[keep]
        new_elbo, log_pi = _elbo_of(problem, cluster_counts, sizes, entropy, gamma)
        converged = bool(trace) and new_elbo - trace[-1] < settings.tol * abs(new_elbo)
        trace.append(new_elbo)
        if converged:
            break
    return _Fit(r[:, keep], trace[-1], np.array(trace))


def _elbo_of_responsibilities(problem: VariationalProblem, r: np.ndarray, gamma: float) -> float:
    """The ELBO of responsibilities (U, K) with ``q(θ)`` and ``q(V)`` at their optimum, the
    truncation cut to the components that hold mass."""
    r = r[:, r.max(axis=0) > 0]
    counts = np.asarray((problem.task_counts.T @ r).T)
    positive = r[r > 0]
    entropy = -float(positive @ np.log(positive))
    return _elbo_of(problem, counts, r.sum(axis=0), entropy, gamma)[0]


def _n_clusters_probability(r: np.ndarray, n_tasks: int) -> np.ndarray:
    """``P(K = k)`` under ``q(z)``: the occupied clusters' count, each cluster occupied
    independently with probability ``1 − Π_u (1 − r_uk)`` (a Poisson-binomial law)."""
    occupied = -np.expm1(np.log1p(-np.minimum(r, 1 - 1e-16)).sum(axis=0))
    law = np.zeros(n_tasks + 1)
    law[0] = 1.0
    for p in occupied:
        law[1:] = law[1:] * (1 - p) + law[:-1] * p
        law[0] *= 1 - p
    return law


def fit_variational(
    model: ConjugateModel,
    counts: Counts | SparseCounts,
    gamma: float,
    rng: np.random.Generator,
    settings: VariationalSettings = DEFAULT_SETTINGS,
) -> ClusteringResult:
    """Engine ``"variational"``: see the module. Arguments as in
    :mod:`clusterednb.inference.result`.

    Above ``settings.sequential_start_tasks`` tasks (below: see the module on the collapsed
    finish), the posterior predictive of task ``u`` is the mixture over clusters with
    weights ``r_uk`` of the naive-Bayes predictives of the expected counts ``N_k``; a new task
    gets the CRP mixture over the expected cluster sizes and a new, empty cluster.
    ``partition`` is the most probable cluster of each task; ``extras`` hold
    ``responsibilities`` and the ``elbo_trace`` of the winning restart.

    Examples
    --------
    The bound is below the exact evidence (every partition enumerated):

    >>> from clusterednb.examples import models as toy
    >>> from clusterednb.examples import naive_bayes as nb_toy
    >>> result = fit_variational(toy.colour_model(), toy.three_task_counts(), 1.0,
    ...                          np.random.default_rng(0))
    >>> result.evidence_kind, bool(result.log_evidence <= nb_toy.exact_clustering().log_evidence_)
    ('lower_bound', True)
    """
    task_counts = counts.flat_cells()  # dense Counts or SparseCounts alike
    return fit_variational_sparse(model, task_counts, counts.label_counts, gamma, rng, settings)


def fit_variational_sparse(
    model: ConjugateModel,
    task_counts: sparse.csr_matrix,
    label_counts: np.ndarray,
    gamma: float,
    rng: np.random.Generator,
    settings: VariationalSettings = DEFAULT_SETTINGS,
) -> ClusteringResult:
    """:func:`fit_variational` from sparse counts: nothing dense per task but the labels.

    Parameters
    ----------
    model : ConjugateModel
    task_counts : scipy.sparse matrix of shape (n_tasks, n_classes * n_values_total)
        Task ``u``'s value counts, flattened class-major (``counts.value_counts[u].ravel()``).
    label_counts : ndarray of shape (n_tasks, n_classes)
    gamma : float
    rng : numpy.random.Generator
    settings : VariationalSettings

    Examples
    --------
    The same fit as from dense counts:

    >>> from clusterednb.examples import models as toy
    >>> model, counts = toy.colour_model(), toy.three_task_counts()
    >>> cells = sparse.csr_matrix(counts.value_counts.reshape(3, -1))
    >>> a = fit_variational_sparse(model, cells, counts.label_counts, 1.0, np.random.default_rng(0))
    >>> b = fit_variational(model, counts, 1.0, np.random.default_rng(0))
    >>> bool(np.isclose(a.log_evidence, b.log_evidence)), a.partition.tolist()
    (True, [0, 0, 0])
    """
    require_conjugate(model, "variational")
    problem = VariationalProblem(model, task_counts, label_counts)
    n_tasks = problem.n_tasks
    n_components = max(1, min(settings.n_components, n_tasks))
    with ExitStack() as stack:
        pool = (
            stack.enter_context(ThreadPoolExecutor(settings.n_jobs))
            if settings.n_jobs > 1
            else None
        )
        restarts = [
            _one_restart(
                problem, gamma, n_components, settings, rng, -(-n_components // 4**i), pool
            )
            for i in range(settings.n_init if n_tasks <= settings.max_restart_tasks else 1)
        ]
        if n_tasks <= settings.sequential_start_tasks:
            restarts.append(_sequential_restart(problem, gamma, n_components, settings, pool))
    best = max(restarts, key=lambda fit: fit.elbo)
    r, elbo = best.responsibilities, best.elbo  # rows sum to 1; entries 0 or above the floor
    if settings.collapsed_passes and n_tasks <= settings.sequential_start_tasks:
        r = collapsed_polish(problem, r, gamma, settings.collapsed_passes, floor=WEIGHT_FLOOR)
        elbo = _elbo_of_responsibilities(problem, r, gamma)
    if settings.refine_sweeps and n_tasks <= settings.sequential_start_tasks:
        refined = gibbs_refinement(
            model, task_counts, label_counts, r, gamma, settings.refine_sweeps, rng, elbo
        )
        if refined is not None:
            refined.extras.update(responsibilities=r, elbo_trace=best.trace)
            return refined
    return mean_field_result(problem, r, label_counts, gamma, elbo, {"elbo_trace": best.trace})


def mean_field_result(
    problem: VariationalProblem,
    r: np.ndarray,
    label_counts: np.ndarray,
    gamma: float,
    elbo: float,
    extras: dict,
    predictive: Callable[[np.ndarray], np.ndarray] | None = None,
) -> ClusteringResult:
    """The mean-field answer of responsibilities ``r`` (U, K) (see :func:`fit_variational`);
    ``predictive`` maps the clusters' expected counts, an empty cluster last, (K + 1, C·V),
    to the counts they predict with, (K + 1, C, V) (default: themselves). ``extras`` gain
    ``responsibilities`` and, up to :data:`COCLUSTERING_LIMIT` tasks, ``coclustering``."""
    n_tasks = r.shape[0]
    used = np.flatnonzero(r.max(axis=0) > 0)
    r = np.ascontiguousarray(r[:, used])
    rows, columns = np.nonzero(r)
    weights = r[rows, columns]
    n_classes, n_values = problem.shape
    sparse_r = sparse.csr_matrix((weights, (rows, columns)), shape=r.shape)
    cluster_counts = np.asarray((problem.task_counts.T @ sparse_r).T.todense())
    with_empty = np.vstack([cluster_counts, np.zeros((1, cluster_counts.shape[1]))])
    if predictive is None:
        component_counts = with_empty.reshape(-1, n_classes, n_values)
    else:
        component_counts = predictive(with_empty)
    sizes = r.sum(axis=0)
    row_total = np.bincount(rows, weights=weights, minlength=n_tasks)
    posterior = Posterior(
        component_counts=component_counts,
        task_label_counts=label_counts,
        indptr=np.concatenate([[0], np.cumsum(np.bincount(rows, minlength=n_tasks))]),
        components=columns.astype(np.int64),
        log_weights=np.log(weights) - np.log(row_total)[rows],
        cold_label_counts=np.zeros(label_counts.shape[1]),
        cold_components=np.arange(used.size + 1, dtype=np.int64),
        cold_log_weights=np.log(np.append(sizes, gamma)) - np.log(n_tasks + gamma),
    )
    partition = canonical_partition(np.argmax(r, axis=1))
    extras = {"responsibilities": r, **extras}
    if n_tasks <= COCLUSTERING_LIMIT:
        together = r @ r.T
        np.fill_diagonal(together, 1.0)
        extras["coclustering"] = together
    return ClusteringResult(
        posterior=posterior,
        log_evidence=elbo,
        evidence_kind="lower_bound",
        partition=partition,
        n_clusters_probability=_n_clusters_probability(r, n_tasks),
        partitions=partition[None, :],
        partition_weights=np.ones(1),
        extras=extras,
    )

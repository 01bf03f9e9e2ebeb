"""Annealed importance sampling (Neal 2001) for evidence that sums over latent variables.

Targets along a geometric path from a base ``f_0`` with ``Z_0 = 1`` to ``f_1``:

- ``P(X)`` (labels summed out): ``f_τ(Y, z) = C^{−N(1−τ)} P(z) P(X, Y | z)^τ``. At ``τ = 0``
  labels are uniform and ``z`` follows the CRP prior; at ``τ = 1`` ``Z_1 = P(X)``.
- ``P(X, Y)`` of Clustered NB (labels fixed, partitions summed out):
  ``f_τ(z) = P(z) P(X, Y | z)^τ``.

Parameters are integrated out exactly (collapsed), so the chain moves over labels and
partitions only: Gibbs sweeps with the likelihood raised to ``τ`` (the compiled kernels of
the sampler with a temperature). No-Sharing and Complete-Sharing are the same chain with the
partition fixed (singletons; one block with pooled labels). Each run's log weight is
``Σ_t (τ_t − τ_{t−1}) [log P(X, Y | z) + N log C]`` at the state before the move at ``τ_t``;
runs are averaged in log space.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

import numpy as np
from scipy.special import logsumexp

from clusterednb.inference.gibbs.data import GibbsData
from clusterednb.inference.gibbs.moves import resample_unlabelled
from clusterednb.inference.gibbs.state import GibbsState, feature_log_ml, initial_state, prepare
from clusterednb.inference.labels import LabelSampler
from clusterednb.inference.prototype_pairs import (
    Pair,
    pair_log_likelihood,
    pairs_of,
    update_pair,
)
from clusterednb.models.observation import ConjugateModel
from clusterednb.stats.counts import Counts

Structure = Literal["ns", "cs", "cnb"]


@dataclass(frozen=True)
class AISResult:
    """``log Ẑ`` with its standard error and the runs' log weights (shape (n_runs,)).

    Examples
    --------
    >>> summarise_weights(np.log([1.0, 3.0])).log_weights.round(4).tolist()
    [0.0, 1.0986]
    """

    log_z: float
    stderr: float
    log_weights: np.ndarray


def annealing_schedule(n_temperatures: int) -> np.ndarray:
    """``τ_t = (t / T)^4`` for ``t = 0..T``: dense near 0, where the target changes fastest.

    Examples
    --------
    >>> (annealing_schedule(4) * 256).tolist()  # t^4 / 4^4
    [0.0, 1.0, 16.0, 81.0, 256.0]
    """
    return (np.arange(n_temperatures + 1) / n_temperatures) ** 4


def summarise_weights(log_weights: np.ndarray) -> AISResult:
    """``log mean(w)`` and its delta-method standard error ``sd(w) / (mean(w) √S)``.

    Examples
    --------
    Weights 1 and 3: mean 2 and sample standard deviation ``√2``, two runs, so the standard
    error is ``√2 / (2 √2) = 0.5``:

    >>> result = summarise_weights(np.log([1.0, 3.0]))
    >>> bool(np.isclose(result.log_z, np.log(2.0))), round(result.stderr, 6)
    (True, 0.5)
    """
    n_runs = log_weights.size
    log_z = float(logsumexp(log_weights) - np.log(n_runs))
    scaled = np.exp(log_weights - log_weights.max())
    stderr = float(scaled.std(ddof=1) / (scaled.mean() * np.sqrt(n_runs))) if n_runs > 1 else np.inf
    return AISResult(log_z, stderr, log_weights)


def crp_draw(rng: np.random.Generator, n_tasks: int, gamma: float) -> np.ndarray:
    """One partition from the Chinese restaurant process prior (sequential seating).

    Examples
    --------
    Two tasks share a table with probability ``1 / (1 + γ)``:

    >>> rng = np.random.default_rng(0)
    >>> together = np.mean([crp_draw(rng, 2, 1.0)[1] == 0 for _ in range(4000)])
    >>> bool(abs(together - 0.5) < 0.03)
    True
    """
    assignment = np.zeros(n_tasks, dtype=np.int64)
    sizes: list[int] = []
    for task in range(n_tasks):
        weights = np.array([*sizes, gamma], dtype=float)
        table = int(rng.choice(weights.size, p=weights / weights.sum()))
        if table == len(sizes):
            sizes.append(0)
        sizes[table] += 1
        assignment[task] = table
    return assignment


def _log_joint(state: GibbsState, data: GibbsData) -> float:
    """``log P(X, Y | z)`` of the current labels and partition."""
    labels = data.model.log_marginal_labels(state.task_label_counts).sum()
    return feature_log_ml(state, data) + float(labels)


def _run(
    rng: np.random.Generator,
    data: GibbsData,
    structure: Structure,
    gamma: float,
    schedule: np.ndarray,
    n_summed_labels: int,
) -> float:
    n_tasks = data.n_tasks
    if structure == "cnb":
        start = crp_draw(rng, n_tasks, gamma)
    else:  # NS: every task alone; CS: one task holding every row
        start = np.arange(n_tasks)
    state = initial_state(rng, data, gamma, start)
    n_classes = data.model.schema.n_classes
    scratch = np.zeros((state.labels.size, n_classes))
    base = n_summed_labels * np.log(n_classes)
    log_weight = 0.0
    for previous, tau in itertools.pairwise(schedule):
        log_weight += (tau - previous) * (_log_joint(state, data) + base)
        if structure == "cnb":
            state.sweep(
                data.all_tasks,
                data.new_score,
                np.log(gamma),
                rng.random(n_tasks),
                data.tasks.packed(),
                data.tables.packed(),
                tau,
            )
        if state.labels.size:
            resample_unlabelled(rng, state, data, scratch, tau)
    return log_weight


def ais_log_features(
    model: ConjugateModel,
    X: np.ndarray,
    task_index: np.ndarray,
    n_tasks: int,
    structure: Structure,
    gamma: float,
    n_temperatures: int,
    n_runs: int,
    rng: np.random.Generator,
) -> AISResult:
    """Estimate ``log P(X)``: the evidence of the rows' features with every label summed out.

    Parameters
    ----------
    model : ConjugateModel
    X : ndarray of shape (n_rows, n_features)
        Category codes of the rows (their labels are treated as unknown).
    task_index : ndarray of shape (n_rows,)
    n_tasks : int
    structure : {"ns", "cs", "cnb"}
        The sharing prior: singletons, one block (labels pooled too), or the CRP(γ).
    gamma : float
    n_temperatures, n_runs : int
    rng : numpy.random.Generator

    Examples
    --------
    One task, two red rows, labels unknown, ``α = β = 1``: the labels agree with probability
    2/3 (then the second red has probability 2/3) or differ (then 1/2), so ``P(X) = 1/2 ·
    (2/3 · 2/3 + 1/3 · 1/2) = 11/36``:

    >>> from clusterednb.examples import models as toy
    >>> result = ais_log_features(toy.colour_model(), np.array([[0], [0]]), np.array([0, 0]),
    ...                           1, "ns", 1.0, 50, 20, np.random.default_rng(0))
    >>> bool(abs(result.log_z - np.log(11 / 36)) < 3 * result.stderr)
    True
    """
    if structure == "cs":
        task_index, n_tasks = np.zeros_like(task_index), 1
    schema = model.schema
    empty = Counts.zeros(n_tasks, schema.n_classes, schema.n_values_total)
    schedule = annealing_schedule(n_temperatures)
    weights = [
        _run(rng, prepare(model, empty, X, task_index), structure, gamma, schedule, X.shape[0])
        for _ in range(n_runs)
    ]
    return summarise_weights(np.array(weights))


def ais_log_joint_clustered(
    model: ConjugateModel,
    counts: Counts,
    gamma: float,
    n_temperatures: int,
    n_runs: int,
    rng: np.random.Generator,
) -> AISResult:
    """Estimate ``log P(X, Y | CNB)`` for labelled rows (partitions summed out).

    Examples
    --------
    Against the exact evidence (every partition of the three tasks enumerated):

    >>> from clusterednb.examples import models as toy
    >>> from clusterednb.examples import naive_bayes as nb_toy
    >>> counts = toy.three_task_counts()
    >>> exact = nb_toy.exact_clustering().log_evidence_
    >>> result = ais_log_joint_clustered(toy.colour_model(), counts, 1.0, 50, 20,
    ...                                  np.random.default_rng(0))
    >>> bool(abs(result.log_z - exact) < 3 * result.stderr)
    True
    """
    schema = model.schema
    no_rows = np.zeros((0, schema.n_features), dtype=np.int64)
    schedule = annealing_schedule(n_temperatures)
    weights = [
        _run(
            rng,
            prepare(model, counts, no_rows, np.zeros(0, dtype=np.int64)),
            "cnb",
            gamma,
            schedule,
            0,
        )
        for _ in range(n_runs)
    ]
    return summarise_weights(np.array(weights))


def _prior_pair_draw(
    rng: np.random.Generator, prior: np.ndarray, k_shape: float, k_rate: float
) -> tuple[float, np.ndarray]:
    """``(log K, logits)`` drawn from the prior: ``θ̄ ~ Dir(β)``, ``K ~ Gamma(shape, rate)``.

    Log-gamma variates are drawn as ``log G(a + 1) + log(U) / a`` so that small ``β`` never
    underflows to ``log 0``.
    """
    log_theta = np.log(rng.gamma(prior + 1.0)) + np.log(rng.random(prior.size)) / prior
    log_k = np.log(rng.gamma(k_shape + 1.0) / k_rate) + np.log(rng.random()) / k_shape
    return float(log_k), log_theta - log_theta[-1]


def ais_log_prototype_joint(
    model: ConjugateModel,
    counts: Counts,
    k_shape: float,
    k_rate: float,
    n_temperatures: int,
    n_runs: int,
    rng: np.random.Generator,
    on_pair: Callable[[], None] | None = None,
) -> AISResult:
    """Estimate the Prototype model's ``log P(X, Y)`` of labelled rows.

    The label part ``Σ_u log DM(m_u; α)`` is exact. Given the labels, the (class, feature)
    pairs are independent, so each pair's ``∫∫ P(θ̄) P(K) Π_u DM(n_u; K θ̄)`` is estimated by
    its own annealing from the prior (slice-sampling transitions on the tempered target);
    the log estimates add and their standard errors add in quadrature. The returned
    ``log_weights`` are each run's sum over pairs.

    Examples
    --------
    Two independent estimates agree within their standard errors:

    >>> from clusterednb.examples import models as toy
    >>> model, counts = toy.colour_model(), toy.three_task_counts()
    >>> a, b = (ais_log_prototype_joint(model, counts, 1.0, 0.1, 20, 5,
    ...                                 np.random.default_rng(seed)) for seed in (0, 1))
    >>> bool(abs(a.log_z - b.log_z) < 3 * np.hypot(a.stderr, b.stderr))
    True
    """
    schedule = annealing_schedule(n_temperatures)
    log_z = float(model.log_marginal_labels(counts.label_counts).sum())
    variance, run_sums = 0.0, np.zeros(n_runs)
    for c, _f, cells in pairs_of(model.schema):
        pair_counts, prior = counts.value_counts[:, c, cells], model.beta[c, cells]
        weights = np.zeros(n_runs)
        for run in range(n_runs):
            log_k, logits = _prior_pair_draw(rng, prior, k_shape, k_rate)
            for previous, tau in itertools.pairwise(schedule):
                weights[run] += (tau - previous) * pair_log_likelihood(log_k, logits, pair_counts)
                log_k = update_pair(
                    rng, log_k, logits, Pair(pair_counts, prior, k_shape, k_rate), tau
                )
        pair = summarise_weights(weights)
        log_z += pair.log_z
        variance += pair.stderr**2
        run_sums += weights
        if on_pair is not None:
            on_pair()
    return AISResult(log_z, float(np.sqrt(variance)), run_sums)


def ais_log_prototype_features(
    model: ConjugateModel,
    X: np.ndarray,
    task_index: np.ndarray,
    n_tasks: int,
    k_shape: float,
    k_rate: float,
    n_temperatures: int,
    n_runs: int,
    rng: np.random.Generator,
) -> AISResult:
    """Estimate the Prototype model's ``log P(X)`` (every label summed out).

    The chain moves over the labels (collapsed Gibbs with ``β = K θ̄``) and every pair's
    ``(K, θ̄)`` (slice sampling), all at the current temperature; the base is uniform labels
    and the prior over the pairs.

    Examples
    --------
    One task of two red rows; two independent estimates agree within their standard errors:

    >>> from clusterednb.examples import models as toy
    >>> a, b = (ais_log_prototype_features(toy.colour_model(), np.array([[0], [0]]),
    ...                                    np.array([0, 0]), 1, 1.0, 0.1, 20, 5,
    ...                                    np.random.default_rng(seed)) for seed in (0, 1))
    >>> bool(abs(a.log_z - b.log_z) < 3 * np.hypot(a.stderr, b.stderr))
    True
    """
    schema = model.schema
    pairs = list(pairs_of(schema))
    alone = np.arange(n_tasks)
    empty = Counts.zeros(n_tasks, schema.n_classes, schema.n_values_total)
    schedule = annealing_schedule(n_temperatures)
    base = X.shape[0] * np.log(schema.n_classes)
    beta = np.empty_like(model.beta)
    beta_totals = np.empty((schema.n_classes, schema.n_features))
    weights = np.zeros(n_runs)
    for run in range(n_runs):
        sampler = LabelSampler.start(empty, schema.offsets, X, task_index, alone, alone)
        states = [
            _prior_pair_draw(rng, model.beta[c, cells], k_shape, k_rate) for c, _, cells in pairs
        ]
        log_k = np.array([state[0] for state in states])
        logits = [state[1] for state in states]
        for previous, tau in itertools.pairwise([0.0, *schedule]):
            for i, (c, f, cells) in enumerate(pairs):
                beta[c, cells] = np.exp(log_k[i] + logits[i] - logsumexp(logits[i]))
                beta_totals[c, f] = np.exp(log_k[i])
            if previous == 0.0 and tau == 0.0:  # first step: draw the base's uniform labels
                sampler.sweep(rng, model.alpha, beta, beta_totals, 0.0)
                continue
            log_likelihood = float(model.log_marginal_labels(sampler.label_counts).sum()) + sum(
                pair_log_likelihood(log_k[i], logits[i], sampler.value_counts[:, c, cells])
                for i, (c, _, cells) in enumerate(pairs)
            )
            weights[run] += (tau - previous) * (log_likelihood + base)
            sampler.sweep(rng, model.alpha, beta, beta_totals, tau)
            for i, (c, _, cells) in enumerate(pairs):
                log_k[i] = update_pair(
                    rng,
                    log_k[i],
                    logits[i],
                    Pair(sampler.value_counts[:, c, cells], model.beta[c, cells], k_shape, k_rate),
                    tau,
                )
    return summarise_weights(weights)

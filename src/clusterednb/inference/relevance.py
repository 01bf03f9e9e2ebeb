"""Feature relevance: each feature either differs between clusters or is shared by every task.

A feature ``f`` is *relevant* (``r_f = 1``) when each cluster has its own class-conditional
distribution of ``f``, and *shared* (``r_f = 0``) when one distribution, pooled over every task,
serves all of them; in the spirit of feature saliency (Law, Figueiredo & Jain, 2004) and of
variable selection in Dirichlet-process mixtures (Kim, Tadesse & Vannucci, 2006). The
switches have an exchangeable prior: ``π ~ Beta(a, b)``, ``r_f | π ~ Bernoulli(π)``. Given a
partition ``z`` with blocks ``S_1 … S_K`` the evidence of the labelled rows' features is

``P(D | z) = Σ_r P(r) Π_f [r_f Π_k ML_f(S_k) + (1 − r_f) ML_f(all tasks)]``

with ``ML_f(S) = Π_y DM(n_S[y, f]; β[y, f])`` (:meth:`DirichletNB.log_marginal_each_feature`).
A shared feature scores the same under every partition, so it cannot move one. A shared
feature may also not depend on the label at all (a noise column): with probability
``LABEL_FREE_SHARE`` a priori its values follow one distribution for every class,
``ML_f(all) = q Π_y DM(n[y, f]; β[y, f]) + (1 − q) DM(Σ_y n[y, f]; β̄_f)``
(:func:`shared_evidence`); such a feature then predicts nothing. The sum over ``r`` is exact
by a recursion over the number of relevant features (:func:`log_sum_relevance`).

- :mod:`~clusterednb.inference.relevance_exact` sums every partition of a few tasks.
- :func:`fit_relevance_gibbs` samples partitions with the switches and ``π`` summed out (a
  collapsed Gibbs sweep over tasks); ``P(r_f = 1 | z, D)`` is averaged over the samples
  (Rao-Blackwellised), and each retained partition draws switches given itself to predict
  with: its clusters' counts for the relevant features, the pooled counts for the shared.
- Before it, :mod:`~clusterednb.inference.relevance_screen` holds shared every column that
  neither differs between tasks nor depends on the label within them beyond chance.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy.special import betaln, expit, logsumexp

from clusterednb.exceptions import CNBError
from clusterednb.inference.posterior import Posterior
from clusterednb.inference.relevance_kernels import relevance_sweep, switch_probabilities
from clusterednb.inference.result import ClusteringResult
from clusterednb.models.observation import DirichletNB
from clusterednb.models.partition_prior import canonical_partition, crp_log_prior
from clusterednb.progress import progress
from clusterednb.stats.counts import Counts
from clusterednb.stats.special import log_dirichlet_norm, segment_sum


def check_relevance_prior(prior: tuple[float, float]) -> tuple[float, float]:
    """The Beta(a, b) prior of the share of relevant features, checked.

    Examples
    --------
    >>> check_relevance_prior((1, 3))
    (1.0, 3.0)
    >>> check_relevance_prior((0, 1))
    Traceback (most recent call last):
    ...
    clusterednb.exceptions.CNBError: relevance_prior must be two positive numbers (a, b), got (0, 1)
    """
    message = f"relevance_prior must be two positive numbers (a, b), got {prior!r}"
    try:
        a, b = (float(v) for v in prior)
    except (TypeError, ValueError):
        raise CNBError(message) from None
    if not (np.isfinite(a) and np.isfinite(b) and a > 0 and b > 0):
        raise CNBError(message)
    return a, b


LABEL_FREE_SHARE = 0.5
"""``1 − q``: the prior probability that a shared feature does not depend on the label."""


def shared_evidence(
    model: DirichletNB, pooled: np.ndarray, forced: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Each feature's log evidence when shared by every task, and the probability that it
    then does not depend on the label.

    Parameters
    ----------
    model : DirichletNB
    pooled : ndarray of shape (n_classes, n_values_total)
        Every task's counts summed.
    forced : ndarray of shape (n_features,), optional
        Bool: features kept relevant (shared evidence ``-inf``; the screen's designed ones).

    Returns
    -------
    log_shared : ndarray of shape (n_features,)
    label_free : ndarray of shape (n_features,)
        ``P(x_f independent of y | f shared, D)``; the label-free prior is the classes' mean
        ``β``.

    Examples
    --------
    Two classes whose colours are the same: likelier label-free than not.

    >>> from clusterednb.examples import models as toy
    >>> log_shared, label_free = shared_evidence(toy.colour_model(), np.array([[3, 1], [3, 1]]))
    >>> bool(label_free[0] > 0.5)
    True
    """
    dependent = model.log_marginal_each_feature(pooled)
    beta = model.beta.mean(axis=0)
    free = log_dirichlet_norm(beta + pooled.sum(axis=0), model.offsets) - log_dirichlet_norm(
        beta, model.offsets
    )
    free = free + np.log(LABEL_FREE_SHARE)
    log_shared = np.logaddexp(np.log1p(-LABEL_FREE_SHARE) + dependent, free)
    impossible = np.zeros(log_shared.size, dtype=bool) if forced is None else forced
    return np.where(impossible, -np.inf, log_shared), np.exp(free - log_shared)


def log_sum_relevance(
    log_relevant: np.ndarray, log_shared: np.ndarray, prior: tuple[float, float]
) -> np.ndarray:
    """``log Σ_r P(r) Π_f exp(r_f · log_relevant_f + (1 − r_f) · log_shared_f)``.

    Parameters
    ----------
    log_relevant, log_shared : ndarray of shape (..., n_features)
        Each feature's log evidence when relevant (summed over the blocks) and when shared.
    prior : (a, b)
        ``π ~ Beta(a, b)``.

    Returns
    -------
    ndarray of shape (...)

    Notes
    -----
    Under the Beta–Bernoulli prior ``P(r) = B(a + j, b + F − j) / B(a, b)`` depends on the
    number ``j`` of relevant features only, so the sum runs over ``j`` after a recursion that
    adds one feature at a time: ``c_f[j] = c_{f−1}[j] e^{shared_f} + c_{f−1}[j − 1]
    e^{relevant_f}`` (``O(F²)``, in log space).

    Examples
    --------
    One feature, a = b = 1: ``(e^{-1} + e^{-2}) / 2``.

    >>> value = log_sum_relevance(np.array([-1.0]), np.array([-2.0]), (1.0, 1.0))
    >>> bool(np.isclose(value, np.log((np.exp(-1) + np.exp(-2)) / 2)))
    True
    """
    n_features = log_relevant.shape[-1]
    by_count = np.full((*log_relevant.shape[:-1], n_features + 1), -np.inf)
    by_count[..., 0] = 0.0
    for f in range(n_features):
        moved = np.full_like(by_count, -np.inf)
        moved[..., 1:] = by_count[..., :-1] + log_relevant[..., f, None]
        by_count = np.logaddexp(by_count + log_shared[..., f, None], moved)
    return logsumexp(by_count + log_prior_count(prior, n_features), axis=-1)


def log_prior_count(prior: tuple[float, float], n_features: int) -> np.ndarray:
    """``log P(r)`` of a switch vector with ``j`` relevant features, ``j = 0 … F``: the
    Beta–Bernoulli ``log B(a + j, b + F − j) − log B(a, b)``, shape (F + 1,).

    Examples
    --------
    >>> np.exp(log_prior_count((1.0, 1.0), 2)).round(4).tolist()  # 1/3, 1/6, 1/3
    [0.3333, 0.1667, 0.3333]
    """
    a, b = prior
    j = np.arange(n_features + 1)
    return betaln(a + j, b + n_features - j) - betaln(a, b)


class _Chain:
    """The sampler's state: each task's cluster slot, the slots' counts, class totals and
    per-feature log evidence, and the switches a retained sample predicts with."""

    def __init__(
        self, model: DirichletNB, counts: Counts, gamma: float, forced: np.ndarray | None = None
    ) -> None:
        self.model, self.gamma = model, gamma
        offsets = model.offsets
        task_counts = counts.value_counts.astype(np.float64)  # (U, C, V)
        n_tasks = task_counts.shape[0]
        task, self.nz_class, self.nz_value = np.nonzero(task_counts)
        self.nz_count = task_counts[task, self.nz_class, self.nz_value]
        self.nz_ptr = np.searchsorted(task, np.arange(n_tasks + 1))
        self.task_totals = segment_sum(task_counts, offsets)  # (U, C, F)
        self.beta_totals = segment_sum(model.beta, offsets)  # (C, F)
        self.alone = model.log_marginal_each_feature(task_counts)  # (U, F)
        self.total = task_counts.sum(axis=0)
        self.log_shared, self.label_free_share = shared_evidence(model, self.total, forced)
        # every task alone at first: a feature that separates tasks starts relevant, one
        # that does not starts shared, and the sweeps merge from there
        self.assignment = np.arange(n_tasks)
        self.task_counts = task_counts
        self.slot_counts = task_counts.copy()
        self.slot_totals = self.task_totals.copy()
        self.sizes = np.ones(n_tasks, dtype=np.int64)
        self.slot_log_ml = self.alone.copy()
        self.relevant = np.ones(self.alone.shape[1], dtype=bool)
        self.label_free = np.zeros(self.alone.shape[1], dtype=bool)

    def start_at(self, partition: np.ndarray) -> None:
        """Put the tasks in the clusters of ``partition`` (n_tasks,), labels below n_tasks."""
        if np.array_equal(partition, self.assignment):
            return  # every task alone: as built
        self.assignment = np.asarray(partition, dtype=np.int64).copy()
        self.slot_counts = np.zeros_like(self.task_counts)
        np.add.at(self.slot_counts, self.assignment, self.task_counts)
        self.slot_totals = np.zeros_like(self.task_totals)
        np.add.at(self.slot_totals, self.assignment, self.task_totals)
        self.sizes = np.bincount(self.assignment, minlength=self.assignment.size)
        occupied = (self.sizes > 0)[:, None]
        self.slot_log_ml = np.where(
            occupied, self.model.log_marginal_each_feature(self.slot_counts), 0.0
        )

    def sweep(
        self, rng: np.random.Generator, prior: tuple[float, float], every_feature_relevant=False
    ) -> None:
        """Move every task once, in random order, to where the CRP and the evidence with the
        switches summed out (:func:`log_sum_relevance`) say (:func:`~clusterednb.inference.
        relevance_kernels.relevance_sweep`); ``every_feature_relevant``: as without relevance."""
        log_shared = np.full_like(self.log_shared, -np.inf)
        if not every_feature_relevant:
            log_shared = self.log_shared
        n_tasks = self.alone.shape[0]
        relevance_sweep(
            rng.permutation(n_tasks), rng.random(n_tasks), self.nz_ptr, self.nz_class,
            self.nz_value, self.nz_count, self.task_totals, self.slot_counts, self.slot_totals,
            self.sizes, self.assignment, self.slot_log_ml, self.alone, log_shared,
            self.model.beta, self.beta_totals, self.model.schema.value_feature,
            float(np.log(self.gamma)), log_prior_count(prior, self.alone.shape[1]),
        )  # fmt: skip

    def log_relevant(self) -> np.ndarray:
        """Each feature's log evidence when relevant under the current partition, (F,)."""
        return self.slot_log_ml[self.sizes > 0].sum(axis=0)

    def switch(self, rng: np.random.Generator, prior: tuple[float, float]) -> None:
        """Each ``r_f`` given the partition and the other switches (``π`` integrated out):
        the switches a sample predicts with."""
        a, b = prior
        odds_of_data = self.log_relevant() - self.log_shared
        n_features = self.relevant.size
        for f in rng.permutation(n_features):
            others = int(self.relevant.sum()) - int(self.relevant[f])
            log_odds = np.log(a + others) - np.log(b + n_features - 1 - others)
            self.relevant[f] = rng.random() < expit(log_odds + odds_of_data[f])
        self.label_free = ~self.relevant & (rng.random(n_features) < self.label_free_share)

    def log_joint(self, prior: tuple[float, float]) -> float:
        """``log P(D_features, z, r)``."""
        a, b = prior
        n_relevant, n_features = int(self.relevant.sum()), self.relevant.size
        features = np.where(self.relevant, self.log_relevant(), self.log_shared).sum()
        # log_shared sums out label-freedom: a lower bound's term, not the drawn switch's
        log_switches = betaln(a + n_relevant, b + n_features - n_relevant) - betaln(a, b)
        return float(crp_log_prior(self.assignment, self.gamma) + features + log_switches)

    def components(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The predictive counts of the occupied clusters and, last, of a new cluster (the
        pooled counts for the shared features, as in every cluster, and the same for every
        class when label-free; nothing for the relevant ones), shape (K + 1, C, V); each
        task's cluster among them; the clusters' sizes."""
        active = np.flatnonzero(self.sizes)
        value_feature = self.model.schema.value_feature
        shared_values = ~self.relevant[value_feature]
        pooled = self.total.copy()
        free_values = self.label_free[value_feature]
        pooled[:, free_values] = self.total[:, free_values].sum(axis=0)
        counts = np.concatenate([self.slot_counts[active], np.zeros_like(self.total)[None]])
        counts[:, :, shared_values] = pooled[:, shared_values]
        position = np.full(self.sizes.size, -1)
        position[active] = np.arange(active.size)
        return counts, position[self.assignment], self.sizes[active]


SWITCH_PASSES = 3
"""Passes over the switches given a retained partition, before it predicts."""
WARM_SWEEPS = 10
"""Sweeps with every feature relevant before the second chain's own."""


@dataclass(frozen=True)
class RelevanceSettings:
    """The relevance sampler's chain: length, discarded start, thinning and the Beta prior
    of the share of relevant features."""

    n_sweeps: int = 200
    burn_in: int = 50
    thin: int = 1
    prior: tuple[float, float] = (1.0, 1.0)
    progress: bool = False


def fit_relevance_gibbs(
    model: DirichletNB,
    counts: Counts,
    gamma: float,
    settings: RelevanceSettings,
    rng: np.random.Generator,
    forced: np.ndarray | None = None,
) -> ClusteringResult:
    """Engine ``"gibbs"`` with feature relevance: samples of ``(z, r)`` and their predictive.

    Two chains of half the sweeps each start from every task alone: one at once, one after
    ``WARM_SWEEPS`` sweeps that treat every feature as relevant (the model without
    relevance). Which features matter and which clusters they make depend on each other, and a
    one-task move cannot leave a mode in which a signal is judged shared because no cluster
    splits on it yet; the chain whose retained partitions score higher (``log P(z, D)`` with
    the switches summed out, averaged) is kept.

    The result's ``extras["feature_relevance"]`` is ``P(r_f = 1 | D)`` averaged over the kept
    samples, (n_features,); ``log_evidence`` the best sample's ``log P(D, z, r)`` (a lower
    bound). ``forced``: as :func:`shared_evidence` reads it.

    Examples
    --------
    >>> from clusterednb.examples import models as toy
    >>> result = fit_relevance_gibbs(toy.colour_model(), toy.three_task_counts(), 1.0,
    ...                              RelevanceSettings(n_sweeps=30, burn_in=10),
    ...                              np.random.default_rng(0))
    >>> result.extras["feature_relevance"].shape, result.evidence_kind
    ((1,), 'lower_bound')
    """
    half = RelevanceSettings(
        max(settings.n_sweeps // 2, 1),
        settings.burn_in // 2,
        settings.thin,
        check_relevance_prior(settings.prior),
        settings.progress,
    )
    alone = np.arange(counts.n_groups)
    starts = [(alone, 0), (alone, min(WARM_SWEEPS, half.n_sweeps))]
    return relevance_chains(model, counts, gamma, starts, half, rng, forced)


def relevance_chains(
    model: DirichletNB,
    counts: Counts,
    gamma: float,
    starts: list[tuple[np.ndarray, int]],
    settings: RelevanceSettings,
    rng: np.random.Generator,
    forced: np.ndarray | None = None,
) -> ClusteringResult:
    """A chain of the sampler from each ``(partition, warm_sweeps)`` of ``starts`` (a
    partition of shape (n_tasks,); sweeps with every feature relevant before its own), the one
    whose retained partitions score higher kept (:func:`fit_relevance_gibbs`; the variational
    engine's collapsed finish starts from its modes)."""
    reporter = progress(len(starts) * settings.n_sweeps, "Gibbs sweeps", settings.progress)
    chains = []
    for partition, warm_sweeps in starts:
        chain = _Chain(model, counts, gamma, forced)
        chain.start_at(partition)
        chains.append(_sample(chain, settings, rng, reporter, warm_sweeps))
    reporter.close()
    kept = max(chains, key=lambda chain: float(np.mean(chain.log_marginals)))
    return _result(kept, model, counts, gamma)


def _result(kept: _Samples, model: DirichletNB, counts: Counts, gamma: float):
    """The engine's answer from one chain's retained samples."""
    n_tasks = counts.n_groups
    partitions = kept.partitions
    log_labels = float(model.log_marginal_labels(counts.label_counts).sum())
    distinct, inverse, frequency = np.unique(
        np.stack(partitions), axis=0, return_inverse=True, return_counts=True
    )
    best = int(np.argmax(kept.log_joints))
    n_clusters = np.array([p.max() + 1 for p in partitions])
    return ClusteringResult(
        posterior=_sample_posterior(kept.samples, counts.label_counts, gamma),
        log_evidence=float(kept.log_joints[best]) + log_labels,
        evidence_kind="lower_bound",
        partition=partitions[best],
        n_clusters_probability=np.bincount(n_clusters, minlength=n_tasks + 1) / len(partitions),
        partitions=distinct,
        partition_weights=frequency / len(partitions),
        extras={
            "feature_relevance": np.mean(kept.relevance, axis=0),
            "assignment": partitions[-1],
            "sample_index": inverse.ravel(),
        },
    )


@dataclass
class _Samples:
    """What one chain retained."""

    samples: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = field(default_factory=list)
    partitions: list[np.ndarray] = field(default_factory=list)
    relevance: list[np.ndarray] = field(default_factory=list)
    log_joints: list[float] = field(default_factory=list)
    log_marginals: list[float] = field(default_factory=list)


def _sample(
    chain: _Chain, settings: RelevanceSettings, rng: np.random.Generator, reporter, warm_sweeps
) -> _Samples:
    """Run one chain (after ``warm_sweeps`` sweeps with every feature relevant)."""
    prior = settings.prior
    log_counts = log_prior_count(prior, chain.alone.shape[1])
    for _ in range(warm_sweeps):
        chain.sweep(rng, prior, every_feature_relevant=True)
    kept = _Samples()
    for step in range(settings.n_sweeps):
        chain.sweep(rng, prior)
        if step >= settings.burn_in and (step - settings.burn_in) % settings.thin == 0:
            for _ in range(SWITCH_PASSES):
                chain.switch(rng, prior)
            kept.samples.append(chain.components())
            kept.partitions.append(canonical_partition(chain.assignment))
            log_relevant = chain.log_relevant()
            kept.relevance.append(switch_probabilities(log_relevant, chain.log_shared, log_counts))
            kept.log_joints.append(chain.log_joint(prior))
            kept.log_marginals.append(
                crp_log_prior(chain.assignment, chain.gamma)
                + float(log_sum_relevance(log_relevant, chain.log_shared, prior))
            )
        reporter.update(1)
    return kept


def _sample_posterior(
    samples: list[tuple[np.ndarray, np.ndarray, np.ndarray]],
    label_counts: np.ndarray,
    gamma: float,
) -> Posterior:
    """The equal-weight mixture of the samples' joints: a known task predicts with its
    cluster in each sample; a new task joins a sample's cluster in proportion to its size, or
    that sample's new cluster in proportion to ``γ``."""
    n_samples, n_tasks = len(samples), label_counts.shape[0]
    log_w = -np.log(n_samples)
    task_component, cold_components, cold_weights = [], [], []
    start = 0
    for counts, position, sizes in samples:
        task_component.append(position + start)
        cold_components.extend(range(start, start + counts.shape[0]))
        cold_weights.extend(log_w + np.log(np.append(sizes, gamma)) - np.log(n_tasks + gamma))
        start += counts.shape[0]
    return Posterior(
        component_counts=np.concatenate([counts for counts, _, _ in samples]),
        task_label_counts=label_counts,
        indptr=np.arange(n_tasks + 1, dtype=np.int64) * n_samples,
        components=np.stack(task_component).T.ravel(),
        log_weights=np.full(n_tasks * n_samples, log_w),
        cold_label_counts=np.zeros(label_counts.shape[1], dtype=np.int64),
        cold_components=np.array(cold_components),
        cold_log_weights=np.array(cold_weights),
        mix_joint=True,  # the samples' joints, as the plain sampler and the exact engine
    )

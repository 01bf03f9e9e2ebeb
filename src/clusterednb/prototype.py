"""The prototype (noisy-Dirichlet) model of Rosenstein et al. (2005); thesis §2.4.

``θ̄[y, f] ~ Dir(β[y, f])``, ``K[y, f] ~ Gamma(shape, rate)`` and each task's
``θ[u, y, f] ~ Dir(K[y, f] θ̄[y, f])``. Given ``(θ̄, K)`` the tasks are independent and
conjugate, so ``log P(D | θ̄, K) = Σ_u [log DM(m[u]; α) + Σ_{y,f} log DM(n[u, y, f];
K θ̄)]``, and the ``(y, f)`` pairs are independent a posteriori. Each pair is sampled by
coordinate-wise slice sampling (Neal 2003, stepping out) on ``log K`` and on the additive
logits of ``θ̄`` (last logit fixed at 0), Jacobians included. The predictive averages
No-Sharing's with ``β`` replaced by ``K θ̄`` over the retained samples; a task never seen
gets the prototype itself (the shared part of the model).

Known weakness: with two very different groups of tasks, no single prototype fits, the
posterior of ``K`` collapses toward 0 and the model stops sharing.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy.optimize import minimize
from scipy.special import gammaln, logsumexp

from clusterednb.data.schema import FeatureSchema
from clusterednb.exceptions import CNBError
from clusterednb.inference.posterior import Posterior
from clusterednb.models import TaskNaiveBayes, own_counts_posterior
from clusterednb.observation import DirichletNB
from clusterednb.stats import Counts

_STEP_OUT = 1.0  # initial slice width in the unconstrained coordinates
_MAX_STEPS = 50


def _log_target(
    log_k: float,
    logits: np.ndarray,
    counts: np.ndarray,
    prior: np.ndarray,
    k_shape: float,
    k_rate: float,
) -> float:
    """Log posterior density of one (class, feature) pair in unconstrained coordinates.

    ``counts``: (n_tasks, V_f) value counts; ``prior``: β (V_f,). With ``θ̄ =
    softmax(logits)`` and ``K = exp(log_k)`` the density is
    ``Σ β log θ̄ + shape log K − rate K + Σ_u log DM(n_u; K θ̄)`` (Jacobians included).
    """
    log_theta = logits - logsumexp(logits)
    k = np.exp(log_k)
    a = k * np.exp(log_theta)
    totals = counts.sum(axis=1)
    used = totals > 0
    log_dm = (
        (gammaln(a + counts[used]) - gammaln(a)).sum(axis=1)
        - (gammaln(k + totals[used]) - gammaln(k))
    ).sum()
    value = float((prior * log_theta).sum() + k_shape * log_k - k_rate * k + log_dm)
    return value if np.isfinite(value) else -np.inf  # underflowed corner: zero density


def _slice_coordinate(rng: np.random.Generator, value: float, log_density: Any) -> float:
    """One slice-sampling update of a scalar (stepping out, then shrinking)."""
    threshold = log_density(value) + np.log(rng.random())
    left = value - _STEP_OUT * rng.random()
    right = left + _STEP_OUT
    for _ in range(_MAX_STEPS):
        if log_density(left) <= threshold:
            break
        left -= _STEP_OUT
    for _ in range(_MAX_STEPS):
        if log_density(right) <= threshold:
            break
        right += _STEP_OUT
    while True:
        proposal = left + (right - left) * rng.random()
        if log_density(proposal) > threshold:
            return proposal
        if proposal < value:
            left = proposal
        else:
            right = proposal


def mode_of_pair(
    counts: np.ndarray, prior: np.ndarray, k_shape: float, k_rate: float
) -> tuple[float, np.ndarray]:
    """The posterior mode of ``(K, θ̄)`` for one pair (L-BFGS in unconstrained coordinates).

    Returns ``(K, θ̄)`` with ``θ̄`` of shape (V_f,).
    """
    pooled = counts.sum(axis=0) + prior
    logits = np.log(pooled / pooled.sum())
    start = np.concatenate([[np.log(k_shape / k_rate)], (logits - logits[-1])[:-1]])

    def negative(point: np.ndarray) -> float:
        value = _log_target(point[0], np.append(point[1:], 0.0), counts, prior, k_shape, k_rate)
        return -value if np.isfinite(value) else 1e300

    best = minimize(negative, start, method="L-BFGS-B").x
    full = np.append(best[1:], 0.0)
    return float(np.exp(best[0])), np.exp(full - logsumexp(full))


def sample_pair(
    rng: np.random.Generator,
    counts: np.ndarray,
    prior: np.ndarray,
    k_shape: float,
    k_rate: float,
    n_samples: int,
    burn_in: int,
) -> tuple[np.ndarray, np.ndarray]:
    """Posterior samples of ``(K, θ̄)`` for one (class, feature) pair.

    Returns
    -------
    strength : ndarray of shape (n_samples,)
    prototype : ndarray of shape (n_samples, V_f)
    """
    n_values = counts.shape[1]
    pooled = counts.sum(axis=0) + prior
    logits = np.log(pooled / pooled.sum())
    logits -= logits[-1]
    log_k = np.log(k_shape / k_rate)
    strength = np.empty(n_samples)
    prototype = np.empty((n_samples, n_values))
    for step in range(burn_in + n_samples):
        log_k = _slice_coordinate(
            rng, log_k, lambda v: _log_target(v, logits, counts, prior, k_shape, k_rate)
        )
        for x in range(n_values - 1):

            def density(v: float, x: int = x, log_k: float = log_k) -> float:
                trial = logits.copy()
                trial[x] = v
                return _log_target(log_k, trial, counts, prior, k_shape, k_rate)

            logits[x] = _slice_coordinate(rng, logits[x], density)
        if step >= burn_in:
            strength[step - burn_in] = np.exp(log_k)
            prototype[step - burn_in] = np.exp(logits - logsumexp(logits))
    return strength, prototype


class PrototypeNB(TaskNaiveBayes):
    """Multi-task naive Bayes whose tasks' parameters scatter around shared prototypes.

    Parameters
    ----------
    inference : {"mcmc", "empirical-bayes"}, default="mcmc"
        ``"mcmc"``: posterior samples of every pair. ``"empirical-bayes"``: the posterior
        mode of every pair (a fast plug-in; the issue asked for type-II maximum likelihood by
        Minka's fixed point, but ML puts zero weight on values never seen, an improper
        Dirichlet; the mode under the model's own priors never does).
    k_shape, k_rate : float, default=(1.0, 0.1)
        Gamma prior (shape, rate) on every strength ``K[y, f]``.
    n_samples : int, default=200
        Retained MCMC samples (each a full sweep over every (class, feature) pair).
    burn_in : int, default=50
    random_state : int, Generator or None
    alpha, beta, schema, classes, handle_unknown, task_column
        As in :class:`~clusterednb.NoSharingNB` (``beta`` is the Dirichlet prior of the
        prototypes; a scalar or one value per feature).

    Attributes
    ----------
    strength_samples_ : ndarray of shape (n_samples, n_classes, n_features)
        Posterior samples of ``K``.
    prototype_samples_ : ndarray of shape (n_samples, n_classes, n_values_total)
        Posterior samples of ``θ̄`` on the flat value axis.
    log_evidence_ : float
        Not computed for this model (NaN; ``evidence_kind_ = "not_computed"``).
    """

    evidence_kind_ = "not_computed"

    def __init__(
        self,
        inference: str = "mcmc",
        k_shape: float = 1.0,
        k_rate: float = 0.1,
        n_samples: int = 200,
        burn_in: int = 50,
        random_state: int | np.random.Generator | None = None,
        alpha: Any = 1.0,
        beta: Any = 1.0,
        schema: FeatureSchema | None = None,
        classes: Any = None,
        handle_unknown: str = "warn",
        task_column: str | None = None,
    ) -> None:
        super().__init__(alpha, beta, schema, classes, handle_unknown, task_column)
        self.inference = inference
        self.k_shape = k_shape
        self.k_rate = k_rate
        self.n_samples = n_samples
        self.burn_in = burn_in
        self.random_state = random_state

    def _infer(self, model: DirichletNB, counts: Counts) -> tuple[Posterior, float]:
        if not (self.k_shape > 0 and self.k_rate > 0 and self.n_samples >= 1 and self.burn_in >= 0):
            raise CNBError("need k_shape > 0, k_rate > 0, n_samples >= 1 and burn_in >= 0")
        if self.inference not in ("mcmc", "empirical-bayes"):
            raise CNBError(f"inference must be 'mcmc' or 'empirical-bayes', got {self.inference!r}")
        rng = (
            self.random_state
            if isinstance(self.random_state, np.random.Generator)
            else np.random.default_rng(self.random_state)
        )
        schema = model.schema
        offsets = schema.offsets
        n_classes, n_features = schema.n_classes, schema.n_features
        n_samples = self.n_samples if self.inference == "mcmc" else 1
        strength = np.empty((n_samples, n_classes, n_features))
        prototype = np.empty((n_samples, n_classes, schema.n_values_total))
        for c in range(n_classes):
            for f in range(n_features):
                cells = slice(offsets[f], offsets[f + 1])
                pair = (
                    counts.value_counts[:, c, cells],
                    model.beta[c, cells],
                    self.k_shape,
                    self.k_rate,
                )
                if self.inference == "mcmc":
                    strength[:, c, f], prototype[:, c, cells] = sample_pair(
                        rng, *pair, self.n_samples, self.burn_in
                    )
                else:
                    strength[0, c, f], prototype[0, c, cells] = mode_of_pair(*pair)
        self.strength_samples_ = strength
        self.prototype_samples_ = prototype
        # The per-sample priors K θ̄ enter in predict_log_proba; the posterior holds the counts.
        return own_counts_posterior(counts), float("nan")

    def predict_log_proba(self, X: Any, tasks: Any = None) -> np.ndarray:
        """Average over posterior samples of No-Sharing's predictive with ``β = K θ̄``."""
        X_codes, task_index, cold_group = self._encode_for_prediction(X, tasks)
        schema = self.schema_
        terms = []
        for k, theta in zip(self.strength_samples_, self.prototype_samples_, strict=True):
            pseudo = k[:, schema.value_feature] * theta  # (C, V)
            sample_model = DirichletNB(schema, self.alpha, pseudo)
            terms.append(
                self.posterior_.predict_log_proba(sample_model, X_codes, task_index, cold_group)
            )
        return logsumexp(np.stack(terms), axis=0) - np.log(len(terms))

    def _state(self) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        meta, arrays = super()._state()
        meta["log_evidence"] = None
        arrays.update(
            strength_samples=self.strength_samples_, prototype_samples=self.prototype_samples_
        )
        return meta, arrays

    def _restore(
        self,
        schema: FeatureSchema,
        task_ids: np.ndarray,
        meta: dict[str, Any],
        arrays: dict[str, np.ndarray],
    ) -> None:
        meta = {**meta, "log_evidence": float("nan")}
        super()._restore(schema, task_ids, meta, arrays)
        self.strength_samples_ = arrays["strength_samples"]
        self.prototype_samples_ = arrays["prototype_samples"]

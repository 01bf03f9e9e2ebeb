"""The prototype (noisy-Dirichlet) model of Rosenstein et al. (2005); thesis §2.4.

``θ̄[y, f] ~ Dir(β[y, f])``, ``K[y, f] ~ Gamma(shape, rate)`` and each task's
``θ[u, y, f] ~ Dir(K[y, f] θ̄[y, f])``. Given ``(θ̄, K)`` the tasks are independent and
conjugate, so ``log P(D | θ̄, K) = Σ_u [log DM(m[u]; α) + Σ_{y,f} log DM(n[u, y, f];
K θ̄)]``, and the ``(y, f)`` pairs are independent a posteriori. Each pair is sampled by
coordinate-wise slice sampling (:mod:`clusterednb.inference.prototype_pairs`). The
predictive averages No-Sharing's with ``β`` replaced by ``K θ̄`` over the retained
samples; a task never seen gets the prototype itself (the shared part of the model).

Known weakness: with two very different groups of tasks, no single prototype fits, the
posterior of ``K`` collapses toward 0 and the model stops sharing.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np
from scipy.special import logsumexp

from clusterednb.data.schema import FeatureSchema
from clusterednb.exceptions import CNBError
from clusterednb.inference.em import expected_counts
from clusterednb.inference.labels import LabelSampler
from clusterednb.inference.posterior import Posterior
from clusterednb.inference.prototype_pairs import (
    Pair,
    mode_of_pair,
    pairs_of,
    start_pair,
    update_pair,
)
from clusterednb.models.observation import DirichletNB
from clusterednb.naive_bayes.estimator import TaskNaiveBayes
from clusterednb.naive_bayes.sharing import own_counts_posterior
from clusterednb.persistence.state import ModelRecord
from clusterednb.stats.counts import Counts


class PrototypeNB(TaskNaiveBayes):
    """Multi-task naive Bayes whose tasks' parameters scatter around shared prototypes.

    Parameters
    ----------
    inference : {"mcmc", "empirical-bayes"}, default="mcmc"
        ``"mcmc"``: posterior samples of every pair. ``"empirical-bayes"``: the posterior
        mode of every pair (a fast plug-in; the issue asked for type-II maximum likelihood by
        Minka's fixed point, but ML puts zero weight on values never seen, an improper
        Dirichlet; the mode under the model's own priors never does).
    numeric, n_bins
        Columns read as numbers, binned by training quantiles, as in
        :class:`~clusterednb.naive_bayes.estimator.TaskNaiveBayes`.
    k_shape, k_rate : float, default=(1.0, 0.1)
        Gamma prior (shape, rate) on every strength ``K[y, f]``.
    n_samples : int, default=200
        Retained MCMC samples (each a full sweep over every (class, feature) pair).
    burn_in : int, default=50
    random_state : int, Generator or None
    semi_supervised : {False, "gibbs", "em", "auto", True}, default=False
        ``"gibbs"`` (needs ``inference="mcmc"``): each MCMC sweep also resamples the
        unlabelled rows' labels given the current prototypes. ``"em"`` (needs
        ``inference="empirical-bayes"``): alternate the rows' label probabilities under the
        current fit with a refit on the expected counts, at most ``n_iter`` times, until
        the probabilities move by less than 1e-9 (a fixed-point iteration; unlike the
        other models' EM it has no monotone objective, because the plug-in mode of ``(K,
        θ̄)`` is not a maximisation of the per-task parameters too).
    n_iter : int, default=100
    alpha, beta, schema, classes, handle_unknown, task_column, observation
        As in :class:`~clusterednb.NoSharingNB` (``beta`` is the Dirichlet prior of the
        prototypes; a scalar or one value per feature). Categorical observations only.

    Attributes
    ----------
    strength_samples_ : ndarray of shape (n_samples, n_classes, n_features)
        Posterior samples of ``K``.
    prototype_samples_ : ndarray of shape (n_samples, n_classes, n_values_total)
        Posterior samples of ``θ̄`` on the flat value axis.
    label_samples_ : ndarray of shape (n_samples, n_unlabelled)
        With ``semi_supervised="gibbs"``: the unlabelled rows' labels in each sample.
    unlabelled_proba_ : ndarray of shape (n_unlabelled, n_classes)
        With ``semi_supervised``: label probabilities of the unlabelled training rows.
    log_evidence_ : float
        Not computed at fit (NaN; ``evidence_kind_ = "not_computed"``): it needs annealed
        importance sampling, see :func:`clusterednb.evidence.marginal_evidence`.

    Examples
    --------
    >>> rows = [[0, 1], [1, 0], [0, 0], [1, 1], [0, 1], [1, 0]]
    >>> model = PrototypeNB(n_samples=20, burn_in=5, random_state=0)
    >>> model = model.fit(rows, [1, 0, 1, 0, 1, 0], ["a", "a", "b", "b", "c", "c"])
    >>> model.predict_proba([[0, 1]], ["a"]).shape
    (1, 2)
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
        semi_supervised: bool | str = False,
        n_iter: int = 100,
        observation: str = "categorical",
        numeric: Any = "auto",
        n_bins: int = 10,
    ) -> None:
        self.inference = inference
        self.k_shape = k_shape
        self.k_rate = k_rate
        self.n_samples = n_samples
        self.burn_in = burn_in
        self.random_state = random_state
        self.alpha = alpha
        self.beta = beta
        self.schema = schema
        self.classes = classes
        self.handle_unknown = handle_unknown
        self.task_column = task_column
        self.semi_supervised = semi_supervised
        self.n_iter = n_iter
        self.observation = observation
        self.numeric = numeric
        self.n_bins = n_bins

    def _check_settings(self) -> None:
        super()._check_settings()
        if self.observation != "categorical":
            raise CNBError("the Prototype model supports observation='categorical' only")
        if not (self.k_shape > 0 and self.k_rate > 0 and self.n_samples >= 1 and self.burn_in >= 0):
            raise CNBError("need k_shape > 0, k_rate > 0, n_samples >= 1 and burn_in >= 0")
        if self.inference not in ("mcmc", "empirical-bayes"):
            raise CNBError(f"inference must be 'mcmc' or 'empirical-bayes', got {self.inference!r}")

    def _infer(self, model: DirichletNB, counts: Counts) -> tuple[Posterior, float]:
        self._check_settings()
        if self.inference == "mcmc":
            self._sample(model, counts, None)
        else:
            self._fit_modes(model, counts)
        # The per-sample priors K θ̄ enter in predict_log_proba; the posterior holds the counts.
        return own_counts_posterior(counts), float("nan")

    def _fit_modes(self, model: DirichletNB, counts: Counts) -> None:
        schema = model.schema
        strength = np.empty((1, schema.n_classes, schema.n_features))
        prototype = np.empty((1, schema.n_classes, schema.n_values_total))
        for c, f, cells in pairs_of(schema):
            strength[0, c, f], prototype[0, c, cells] = mode_of_pair(
                Pair(
                    counts.value_counts[:, c, cells],
                    model.beta[c, cells],
                    self.k_shape,
                    self.k_rate,
                )
            )
        self.strength_samples_, self.prototype_samples_ = strength, prototype

    def _sample(self, model: DirichletNB, counts: Counts, sampler: LabelSampler | None) -> None:
        """MCMC over every pair (and over the missing labels when ``sampler`` is given)."""
        rng = self._rng()
        schema = model.schema
        pairs = list(pairs_of(schema))
        value_counts = counts.value_counts if sampler is None else sampler.value_counts
        if sampler is not None:
            self._sweep_labels(rng, sampler, model, *self._prior_state(pairs), pairs)
        states = [
            start_pair(
                Pair(value_counts[:, c, cells], model.beta[c, cells], self.k_shape, self.k_rate)
            )
            for c, f, cells in pairs
        ]
        logits = [state[1] for state in states]
        log_k = np.array([state[0] for state in states])
        strength = np.empty((self.n_samples, schema.n_classes, schema.n_features))
        prototype = np.empty((self.n_samples, schema.n_classes, schema.n_values_total))
        labels = []
        for step in range(self.burn_in + self.n_samples):
            for i, (c, _f, cells) in enumerate(pairs):
                pair = Pair(
                    value_counts[:, c, cells], model.beta[c, cells], self.k_shape, self.k_rate
                )
                log_k[i] = update_pair(rng, log_k[i], logits[i], pair)
            if sampler is not None:
                if step == self.burn_in:
                    sampler.marginals[:] = 0.0
                self._sweep_labels(rng, sampler, model, log_k, logits, pairs)
            if step >= self.burn_in:
                kept = step - self.burn_in
                for i, (c, f, cells) in enumerate(pairs):
                    strength[kept, c, f] = np.exp(log_k[i])
                    prototype[kept, c, cells] = np.exp(logits[i] - logsumexp(logits[i]))
                if sampler is not None:
                    labels.append(sampler.labels.copy())
        self.strength_samples_, self.prototype_samples_ = strength, prototype
        if sampler is not None:
            self.label_samples_ = np.array(labels)
            self.unlabelled_proba_ = sampler.marginals / self.n_samples

    def _prior_state(self, pairs: list) -> tuple[np.ndarray, list[np.ndarray]]:
        """``K`` at its prior mean and uniform prototypes (for the first label sweep)."""
        log_k = np.full(len(pairs), np.log(self.k_shape / self.k_rate))
        return log_k, [np.zeros(cells.stop - cells.start) for _, _, cells in pairs]

    def _sweep_labels(
        self,
        rng: np.random.Generator,
        sampler: LabelSampler,
        model: DirichletNB,
        log_k: np.ndarray,
        logits: list[np.ndarray],
        pairs: list,
    ) -> None:
        beta = np.empty_like(model.beta)
        beta_totals = np.empty((model.schema.n_classes, model.schema.n_features))
        for i, (c, f, cells) in enumerate(pairs):
            beta[c, cells] = np.exp(log_k[i] + logits[i] - logsumexp(logits[i]))
            beta_totals[c, f] = np.exp(log_k[i])
        sampler.sweep(rng, model.alpha, beta, beta_totals)

    def _infer_gibbs(self, model: DirichletNB, counts: Counts) -> tuple[Posterior, float]:
        self._check_settings()
        if self.inference != "mcmc":
            raise CNBError("semi_supervised='gibbs' needs inference='mcmc'; use 'em' instead")
        label_group, feature_group = self._groups(counts)
        sampler = LabelSampler.start(
            counts,
            model.offsets,
            self.unlabelled_X_,
            self.unlabelled_task_,
            label_group,
            feature_group,
        )
        self._sample(model, counts, sampler)
        return own_counts_posterior(counts), float("nan")

    def _infer_em(self, model: DirichletNB, counts: Counts) -> tuple[Posterior, float]:
        self._check_settings()
        if self.inference != "empirical-bayes":
            raise CNBError(
                "semi_supervised='em' needs inference='empirical-bayes' (a point fit); "
                "use 'gibbs' with inference='mcmc'"
            )
        rows, task = self.unlabelled_X_, self.unlabelled_task_
        current = counts
        responsibilities = np.zeros((rows.shape[0], model.schema.n_classes))
        for _ in range(self.n_iter):
            self._fit_modes(model, current)
            self.posterior_ = own_counts_posterior(current)
            updated = np.exp(self._sample_log_proba(rows, task, np.full(task.size, -1)))
            change = np.abs(updated - responsibilities).max()
            responsibilities = updated
            current = counts + expected_counts(rows, task, responsibilities, counts, model.offsets)
            if change < 1e-9:
                break
        self._fit_modes(model, current)
        self.unlabelled_proba_ = responsibilities
        return own_counts_posterior(current), float("nan")

    def predict_log_proba(self, X: Any, tasks: Any = None, new_tasks: str = "pooled") -> np.ndarray:
        """Average over posterior samples of No-Sharing's predictive with ``β = K θ̄``
        (``new_tasks`` as for every estimator: "pooled" or "each-row").

        Examples
        --------
        >>> from clusterednb.examples import naive_bayes as toy
        >>> model = PrototypeNB(n_samples=20, burn_in=5, random_state=0).fit(*toy.colour_rows())
        >>> log_proba = model.predict_log_proba([["red"]], ["ann"])
        >>> bool(np.isclose(np.logaddexp.reduce(log_proba[0]), 0.0))
        True
        """
        X_codes, task_index, cold_group = self._encode_for_prediction(X, tasks, new_tasks)
        return self._sample_log_proba(X_codes, task_index, cold_group)

    def _sample_log_proba(
        self, X_codes: np.ndarray, task_index: np.ndarray, cold_group: np.ndarray
    ) -> np.ndarray:
        schema = self.schema_
        label_samples = getattr(self, "label_samples_", None)
        terms = []
        for s, (k, theta) in enumerate(
            zip(self.strength_samples_, self.prototype_samples_, strict=True)
        ):
            pseudo = k[:, schema.value_feature] * theta  # (C, V)
            sample_model = DirichletNB(schema, self.alpha_, pseudo)
            posterior = self.posterior_
            if label_samples is not None:
                imputed = Counts.from_codes(
                    self.unlabelled_X_,
                    label_samples[s],
                    self.unlabelled_task_,
                    n_tasks=self.task_ids_.size,
                    n_classes=schema.n_classes,
                    offsets=schema.offsets,
                )
                posterior = own_counts_posterior(self.counts_ + imputed)
            terms.append(posterior.predict_log_proba(sample_model, X_codes, task_index, cold_group))
        return logsumexp(np.stack(terms), axis=0) - np.log(len(terms))

    def _state(self) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        meta, arrays = super()._state()
        meta["log_evidence"] = None
        arrays.update(
            strength_samples=self.strength_samples_, prototype_samples=self.prototype_samples_
        )
        if hasattr(self, "label_samples_"):
            arrays["label_samples"] = self.label_samples_
        return meta, arrays

    def _restore(self, record: ModelRecord) -> None:
        super()._restore(replace(record, meta={**record.meta, "log_evidence": float("nan")}))
        arrays = record.arrays
        self.strength_samples_ = arrays["strength_samples"]
        self.prototype_samples_ = arrays["prototype_samples"]
        if "label_samples" in arrays:
            self.label_samples_ = arrays["label_samples"]

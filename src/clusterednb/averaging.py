"""Bayesian model averaging of several multi-task models (thesis eq. 3.5–3.8; slides 003)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, clone

from clusterednb.estimation.decisions import BayesDecisions, check_fitted, refuse_sample_weight
from clusterednb.evidence import conditional_evidence
from clusterednb.exceptions import CNBError, check_choice
from clusterednb.naive_bayes.estimator import TaskNaiveBayes


class ModelAveragingNB(BayesDecisions, BaseEstimator):
    """Predict with the evidence-weighted average of member models.

    ``P(y | x, D) = Σ_m P(m | D) P(y | x, D, m)`` with ``P(m | D) ∝ P(m) E_m``, where
    ``E_m`` is the marginal evidence ``P(D | m)`` or the conditional evidence
    ``P(Y | X, m)`` (which judges only how well a model predicts labels from features).

    Parameters
    ----------
    models : mapping of name to estimator
        Unfitted members (they are cloned), all with the same classes after fitting.
    weights : {"marginal", "conditional"}, default="marginal"
        Which evidence weights the members. With lower bounds (Clustered NB by Gibbs or BHC)
        the weights favour exactly computed members slightly; see ``log_weights_``.
    prior : mapping of name to float, optional
        Prior model probabilities (default uniform).
    n_temperatures, n_runs, random_state
        Annealed importance sampling settings for ``weights="conditional"``.

    Attributes
    ----------
    members_ : dict of name to fitted estimator
    log_weights_ : dict of name to float
        Log posterior model probabilities.
    classes_ : ndarray of shape (n_classes,)

    ``predict`` (Bayes decisions under a loss) and ``score`` are those of every estimator of
    the package (:class:`~clusterednb.estimation.decisions.BayesDecisions`), here from the
    averaged predictive.

    Examples
    --------
    >>> import numpy as np
    >>> from clusterednb import ClusteredNB, NoSharingNB
    >>> from clusterednb.data.synthetic import make_planted_population
    >>> population = make_planted_population(np.random.default_rng(0), group_sizes=(3, 3))
    >>> frame = population.frame
    >>> averaged = ModelAveragingNB({"ns": NoSharingNB(), "cnb": ClusteredNB(inference="exact")})
    >>> averaged = averaged.fit(frame[population.feature_names], frame["label"], frame["task"])
    >>> bool(averaged.log_weights_["cnb"] > averaged.log_weights_["ns"])  # groups exist
    True
    """

    def __init__(
        self,
        models: Mapping[str, TaskNaiveBayes],
        weights: str = "marginal",
        prior: Mapping[str, float] | None = None,
        n_temperatures: int = 100,
        n_runs: int = 5,
        random_state: int | None = None,
    ) -> None:
        self.models = models
        self.weights = weights
        self.prior = prior
        self.n_temperatures = n_temperatures
        self.n_runs = n_runs
        self.random_state = random_state

    def fit(self, X: Any, y: Any, tasks: Any, sample_weight: Any = None) -> ModelAveragingNB:
        """Fit every member and weigh it by its evidence times its prior.

        Examples
        --------
        >>> from clusterednb import CompleteSharingNB, NoSharingNB
        >>> from clusterednb.examples import naive_bayes as toy
        >>> averaged = ModelAveragingNB({"ns": NoSharingNB(), "cs": CompleteSharingNB()})
        >>> averaged = averaged.fit(*toy.colour_rows())  # cy's taste differs: pooling loses
        >>> {name: round(float(np.exp(w)), 3) for name, w in averaged.log_weights_.items()}
        {'ns': 0.802, 'cs': 0.198}
        """
        refuse_sample_weight(sample_weight)
        check_choice("weights", self.weights, ("marginal", "conditional"))
        if not self.models:
            raise CNBError("ModelAveragingNB needs at least one member model")
        self.members_ = {name: clone(m).fit(X, y, tasks) for name, m in self.models.items()}
        classes = [tuple(m.classes_) for m in self.members_.values()]
        if len(set(classes)) != 1:
            raise CNBError(f"the members disagree on the classes: {classes}")
        self.classes_ = next(iter(self.members_.values())).classes_
        log_evidence = {}
        for name, member in self.members_.items():
            if self.weights == "marginal":
                log_evidence[name] = float(member.log_evidence_)
            else:
                log_evidence[name] = conditional_evidence(
                    self.models[name],
                    X,
                    y,
                    tasks,
                    n_temperatures=self.n_temperatures,
                    n_runs=self.n_runs,
                    random_state=self.random_state,
                ).value
        names = list(self.members_)
        prior = np.array([1.0 if self.prior is None else self.prior[n] for n in names])
        log_post = np.array([log_evidence[n] for n in names]) + np.log(prior / prior.sum())
        log_post -= np.logaddexp.reduce(log_post)
        self.log_weights_ = dict(zip(names, log_post.tolist(), strict=True))
        return self

    def predict_log_proba(self, X: Any, tasks: Any, new_tasks: str = "pooled") -> np.ndarray:
        """``log Σ_m P(m | D) P(y | x, D, m)``; shape (n_rows, n_classes); ``new_tasks`` is
        passed to every member ("pooled" or "each-row").

        Examples
        --------
        >>> from clusterednb import CompleteSharingNB, NoSharingNB
        >>> from clusterednb.examples import naive_bayes as toy
        >>> averaged = ModelAveragingNB({"ns": NoSharingNB(), "cs": CompleteSharingNB()})
        >>> averaged = averaged.fit(*toy.colour_rows())
        >>> np.exp(averaged.predict_log_proba([["red"]], ["cy"])).round(3).tolist()
        [[0.578, 0.422]]
        """
        check_fitted(self, "members_")
        terms = [
            self.log_weights_[name] + member.predict_log_proba(X, tasks, new_tasks=new_tasks)
            for name, member in self.members_.items()
        ]
        return np.logaddexp.reduce(np.stack(terms), axis=0)

    def predict_proba(self, X: Any, tasks: Any, new_tasks: str = "pooled") -> np.ndarray:
        """Model-averaged ``P(y | x, D)``; rows sum to 1.

        Examples
        --------
        >>> from clusterednb import CompleteSharingNB, NoSharingNB
        >>> from clusterednb.examples import naive_bayes as toy
        >>> members = {"ns": NoSharingNB(), "cs": CompleteSharingNB()}
        >>> averaged = ModelAveragingNB(members).fit(*toy.colour_rows())
        >>> ns = averaged.members_["ns"].predict_proba([["red"]], ["cy"])
        >>> cs = averaged.members_["cs"].predict_proba([["red"]], ["cy"])
        >>> w = {name: np.exp(v) for name, v in averaged.log_weights_.items()}
        >>> mixed = w["ns"] * ns + w["cs"] * cs
        >>> bool(np.allclose(averaged.predict_proba([["red"]], ["cy"]), mixed))
        True
        """
        return np.exp(self.predict_log_proba(X, tasks, new_tasks))

"""The Clustered Naive Bayes estimator: a Dirichlet-process prior over tasks' parameters."""

from __future__ import annotations

from typing import Any

import numpy as np

from clusterednb.data.schema import FeatureSchema
from clusterednb.estimation.training_table import split_tasks
from clusterednb.exceptions import CNBError, check_choice
from clusterednb.inference.posterior import Posterior
from clusterednb.inference.result import ClusteringResult
from clusterednb.models.observation import DirichletNB
from clusterednb.models.partition_prior import canonical_partition
from clusterednb.naive_bayes.calibration import CALIBRATIONS, calibrated_log_proba, fit_sigmoid
from clusterednb.naive_bayes.engines import (
    SPARSE_ENGINES,
    EngineInput,
    EngineSettings,
    check_engine_settings,
    run_engine,
)
from clusterednb.naive_bayes.estimator import TaskNaiveBayes
from clusterednb.naive_bayes.transductive import TRANSDUCTIVE_MODES, select_log_proba_for_rows
from clusterednb.naive_bayes.transductive_tuning import choose_temperature
from clusterednb.persistence.state import ModelRecord
from clusterednb.stats.counts import Counts
from clusterednb.stats.sparse_counts import SparseCounts

_COCLUSTERING_LIMIT = 20_000


class ClusteredNB(TaskNaiveBayes):
    """Clustered Naive Bayes: tasks fall into clusters that share a naive-Bayes model.

    Each task ``u`` has its own label distribution ``φ_u ~ Dir(α)``; its feature parameters
    ``θ_u`` are drawn from ``G ~ DP(γ, Π_{y,f} Dir(β[y, f]))``. Integrating ``G`` out gives a
    Chinese-restaurant-process prior over partitions of the tasks; inference averages the
    predictions over partitions.

    Parameters
    ----------
    inference : {"gibbs", "bhc", "bhc-randomized", "exact", "search", "variational"}
        Default ``"gibbs"``.
        ``"exact"`` enumerates every partition (at most 10 tasks) and gives the exact
        evidence and the exact predictive (the ratio of evidences). ``"gibbs"``: collapsed
        Gibbs sampling over task assignments (and over missing labels), with split–merge
        moves; Rao-Blackwellised predictive. ``"bhc"``: Bayesian Hierarchical Clustering,
        O(U² log U), path-weighted predictive. ``"bhc-randomized"``: randomised BHC,
        O(U log U), for many tasks. ``"search"``: stochastic search for the best partition
        (thesis §4.3; conditional-mode moves and greedy merges from several starts); its
        predictive uses that one partition and its evidence is the bound
        ``log P(D | z*) + log P(z*)``. ``"variational"``: truncated stick-breaking
        mean-field VI (100 components, 3 restarts; :mod:`clusterednb.inference.variational.engine`),
        soft assignments, evidence an ELBO; linear in the number of tasks (up to 2 000 tasks
        its mode is finished by 40 collapsed Gibbs sweeps, whose average is the predictive).
    gamma : float, default=1.0
        DP concentration ``γ`` (the initial value when ``sample_gamma``).
    alpha, beta
        Label and feature pseudo-counts, as in :class:`~clusterednb.NoSharingNB`.
    n_sweeps, burn_in, thin : int, default=200, 50, 1
        Gibbs sweeps (each visits every task once), the first ones discarded, and the
        retained ones thinned (every ``thin``-th).
    sample_gamma, gamma_prior : bool, tuple of float, default=False, (1.0, 1.0)
        Resample ``γ`` each sweep (Escobar & West 1995) under a Gamma(shape, rate) prior.
    split_merge : bool or int, default=True
        Split–merge moves per sweep (Jain & Neal 2004): ``True`` means 3, ``False`` none.
    semi_supervised : {"auto", "gibbs", True, "em", False}, default="auto"
        What unlabelled training rows do. ``"gibbs"`` (or ``True``): the Gibbs engine
        resamples their labels along with the partition (other engines refuse it).
        ``"em"``: any engine finds the partition from the labelled rows, then EM gives the
        MAP parameters of that partition's clusters with the unlabelled rows' labels as
        missing data (a point fit; the predictive uses that one partition). ``"auto"``:
        ``"gibbs"`` with the Gibbs engine (not with ``relevance``), otherwise unused.
    n_iter : int, default=100
        EM iterations (``semi_supervised="em"``).
    backend : {"local", "dask"}, default="local"
        ``"dask"`` (with ``inference="gibbs"``): the assignment sweep is split into shards
        that run on the current ``dask.distributed`` client's workers (a 2-worker
        ``LocalCluster`` for the fit when there is none); the rest of each Gibbs step runs
        here. Shards see each other's moves only between sweeps (an approximation,
        documented in :mod:`clusterednb.inference.gibbs.sharded`).
    n_shards : int, optional
        Shards per sweep with ``backend="dask"`` (default: twice the number of workers).
    n_jobs : int, default=1
        With ``inference="gibbs"`` and ``backend="local"``: the assignment sweep is split
        into ``n_jobs`` shards that run in parallel threads (the same approximation as
        ``backend="dask"``; 1 is the exact sequential sampler).
    random_state, progress : int, numpy.random.Generator or None; bool, default=True
        Seed of the engines' draws (the screen's are seeded by the table: an exact or BHC
        fit is deterministic); a progress bar when stderr is a terminal.
    schema, classes, handle_unknown, task_column, observation
        As in :class:`~clusterednb.NoSharingNB` (every engine works with the document
        observation models, whose counts add like the categorical ones).
    transductive : {None, "select"}, default=None
        ``"select"``: the clusters are fitted on the labelled rows only, and a task's
        unlabelled training rows choose among them without refitting them (the MAP
        partition's clusters without the task, and a new one), weighted by their marginal
        likelihood; the task's rows are then predicted by the selected mixture
        (:mod:`clusterednb.naive_bayes.transductive`). Refitting the clusters with many unlabelled
        rows (``None`` with ``semi_supervised``) lets them form a cluster whose "label" is an
        unsupervised component: landmine AUC 0.58 against 0.76 by selection (BENCHMARKS.md).
    transductive_temperature : float or "auto", default=1.0
        ``τ`` in ``(0, 1]``, the power on the unlabelled rows' likelihood in the selection,
        against naive Bayes' over-counting of correlated features. ``"auto"``: chosen on the
        training tasks by one more fit, in which some tasks play targets with hidden labels
        (:mod:`clusterednb.naive_bayes.transductive_tuning`); the choice is
        ``transductive_temperature_``.
    calibration : {None, "sigmoid"}, default=None
        ``"sigmoid"`` (two classes): :meth:`fit` also learns ``σ(a z + b)`` of the model's
        log-odds ``z`` from out-of-fold predictions of the training rows (two more fits,
        each on half of every task's labelled rows; :mod:`clusterednb.naive_bayes.calibration`),
        and the probabilities pass through it: naive Bayes' over-confidence undone, each
        task's ranking unchanged. ``partial_fit`` keeps the map of the last ``fit``.
    relevance : bool or "auto", default="auto"
        Each feature differs between clusters or is shared by every task, as the exact, Gibbs
        and variational engines judge after a screen (:mod:`~clusterednb.inference.relevance`;
        others refuse). "auto", any local engine: the columns the screen holds (and the
        clusters do not release) shared, the others relevant; none held (or Dask, unlabelled
        rows, documents, over 300 tasks): as False, to the last digit.
    relevance_prior : (a, b), default=(1.0, 1.0)
        Beta prior of the share of relevant features, free or held by the screen.
    numeric, n_bins
        Columns read as numbers ("auto": columns of numbers that are not all whole, and
        columns of whole numbers with more than 20 distinct values), cut into ``n_bins``
        quantile bins of the training rows; as in :class:`TaskNaiveBayes`.

    Attributes
    ----------
    partition_ : ndarray of shape (n_tasks,)
        MAP partition in canonical labels (clusters numbered in order of first task).
    coclustering_ : ndarray of shape (n_tasks, n_tasks)
        Posterior probability that two tasks share a cluster.
    n_clusters_posterior_ : ndarray of shape (n_tasks + 1,)
        Posterior probability of each number of clusters.
    log_evidence_ : float
        ``log P(D | CNB)`` of the labelled rows: exact, a lower bound, or an estimate, as
        ``evidence_kind_`` says.
    evidence_kind_ : {"exact", "lower_bound"}
    tree_ : ndarray of shape (n_tasks - 1, 4)
        BHC only: scipy linkage matrix (heights are merge ranks).
    node_log_r_ : ndarray of shape (2 * n_tasks - 1,)
        BHC only: ``log r_k`` of every node (leaves first, in linkage numbering).
    gamma_samples_ : ndarray of shape (n_samples,)
        Gibbs only: ``γ`` of each retained sample.
    unlabelled_proba_ : ndarray of shape (n_unlabelled, n_classes)
        Gibbs only: Rao-Blackwellised posterior label probabilities of the unlabelled
        training rows (the transductive predictive of thesis §3.1).
    calibration_, transductive_temperature_ : ndarray of shape (2,), float
        ``(a, b)`` with ``calibration="sigmoid"``; ``τ`` with ``transductive_temperature="auto"``.
    feature_relevance_ : ndarray of shape (n_features,)
        When judged: ``P(feature relevant | D)`` ("auto": the screen's 1 or 0).

    Notes
    -----
    ``log P(D | z) = Σ_u log DM(m[u]; α) + Σ_k Σ_{y,f} log DM(N[k, y, f]; β[y, f])`` and
    ``log P(z) = |z| log γ + Σ_k lgamma(|k|) + lgamma(γ) − lgamma(γ + U)``.

    A task never seen in training is predicted with the CRP predictive: a mixture over the
    clusters with weights ``|k| / (U + γ)`` and a new cluster with ``γ / (U + γ)``; when
    several rows of the new task are predicted together, each weight is multiplied by the
    likelihood of those rows' features under that cluster (their labels summed out, rows
    treated as independent given the cluster). BHC's cold start uses its MAP partition.

    Many tasks: with the Gibbs and variational engines, counts whose dense table would pass
    256 MiB are kept sparse (:class:`~clusterednb.stats.sparse_counts.SparseCounts`), in the model
    file too; see the documentation's "Scaling out" page.

    ``partial_fit`` adds rows and tasks. The Gibbs engine warm-starts from the last state
    (new tasks are placed by the first sweep) and runs a quarter of ``n_sweeps`` and
    ``burn_in``; the exact and BHC engines recompute from the updated counts.

    References
    ----------
    D. M. Roy and L. P. Kaelbling, *Efficient Bayesian task-level transfer learning*,
    IJCAI 2007. R. M. Neal, *Markov chain sampling methods for Dirichlet process mixture
    models*, 2000. S. Jain and R. M. Neal, *A split-merge Markov chain Monte Carlo procedure
    for the Dirichlet process mixture model*, 2004. K. A. Heller and Z. Ghahramani,
    *Bayesian hierarchical clustering*, ICML 2005.

    Examples
    --------
    >>> from clusterednb.examples import naive_bayes as toy
    >>> model = ClusteredNB(inference="exact").fit(*toy.colour_rows())
    >>> model.partition_.tolist()  # ann and bob like red, cy likes blue
    [0, 0, 1]
    """

    def __init__(
        self,
        inference: str = "gibbs",
        gamma: float = 1.0,
        alpha: Any = 1.0,
        beta: Any = 1.0,
        n_sweeps: int = 200,
        burn_in: int = 50,
        thin: int = 1,
        sample_gamma: bool = False,
        gamma_prior: tuple[float, float] = (1.0, 1.0),
        split_merge: bool | int = True,
        semi_supervised: bool | str = "auto",
        n_iter: int = 100,
        backend: str = "local",
        n_shards: int | None = None,
        n_jobs: int = 1,
        random_state: int | np.random.Generator | None = None,
        progress: bool = True,
        schema: FeatureSchema | None = None,
        classes: Any = None,
        handle_unknown: str = "warn",
        task_column: str | None = None,
        observation: str = "categorical",
        transductive: str | None = None,
        transductive_temperature: float | str = 1.0,
        calibration: str | None = None,
        numeric: Any = "auto",
        n_bins: int = 10,
        relevance: bool | str = "auto",
        relevance_prior: tuple[float, float] = (1.0, 1.0),
    ) -> None:
        self.inference = inference
        self.gamma = gamma
        self.alpha = alpha
        self.beta = beta
        self.n_sweeps = n_sweeps
        self.burn_in = burn_in
        self.thin = thin
        self.sample_gamma = sample_gamma
        self.gamma_prior = gamma_prior
        self.split_merge = split_merge
        self.semi_supervised = semi_supervised
        self.n_iter = n_iter
        self.backend = backend
        self.n_shards = n_shards
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.progress = progress
        self.schema = schema
        self.classes = classes
        self.handle_unknown = handle_unknown
        self.task_column = task_column
        self.observation = observation
        self.transductive = transductive
        self.transductive_temperature = transductive_temperature
        self.calibration = calibration
        self.numeric = numeric
        self.n_bins = n_bins
        self.relevance = relevance
        self.relevance_prior = relevance_prior

    def fit(self, X: Any, y: Any, tasks: Any = None, sample_weight: Any = None) -> ClusteredNB:
        """Fit on the rows of many tasks (see :meth:`TaskNaiveBayes.fit`), then, with
        ``calibration="sigmoid"``, learn the calibration map.

        Examples
        --------
        >>> from clusterednb.examples import naive_bayes as toy
        >>> model = ClusteredNB(inference="exact", calibration="sigmoid").fit(*toy.colour_rows())
        >>> model.calibration_.shape
        (2,)
        """
        super().fit(X, y, tasks, sample_weight)
        choose_tau = self.transductive == "select" and self.transductive_temperature == "auto"
        if choose_tau or self.calibration == "sigmoid":
            X, tasks = split_tasks(X, tasks, self.task_column)
        if choose_tau:
            tau, self.temperature_tuning_ = choose_temperature(
                self, X, y, np.asarray(tasks), self._rng()
            )
            self.transductive_temperature_ = np.float64(tau)
        if self.calibration == "sigmoid":
            self.calibration_ = fit_sigmoid(self, X, y, np.asarray(tasks), self._rng())
        return self

    def selection_temperature(self) -> float:
        """The ``τ`` that transductive selection uses: ``transductive_temperature``, or the
        one chosen for "auto".

        Examples
        --------
        >>> ClusteredNB(transductive_temperature=0.5).selection_temperature()
        0.5
        """
        if self.transductive_temperature != "auto":
            return float(self.transductive_temperature)
        return float(np.asarray(self.transductive_temperature_).reshape(-1)[0])

    # ------------------------------------------------------------------ inference
    def _infer(self, model: DirichletNB, counts: Counts | SparseCounts) -> tuple[Posterior, float]:
        self._check_settings()
        given = self._engine_input()
        self.result_ = run_engine(self._engine_settings(), model, counts, given)
        self._publish(self.result_)
        return self.result_.posterior, self.result_.log_evidence

    def _engine_settings(self) -> EngineSettings:
        return EngineSettings.of(self.get_params())

    def _engine_input(self) -> EngineInput:
        # Without semi-supervision the unlabelled rows are not part of the data at all.
        rows = slice(None) if self._semi_supervised_mode() == "gibbs" else slice(0, 0)
        warm = getattr(self, "result_", None)
        previous = warm.extras.get("assignment") if warm is not None else None
        return EngineInput(
            self._rng(), self.unlabelled_X_[rows], self.unlabelled_task_[rows], previous
        )

    def _semi_supervised_mode(self) -> str | None:
        mode = super()._semi_supervised_mode()
        if self.transductive == "select":
            return None  # the clusters come from labelled rows; unlabelled ones only choose
        if mode == "gibbs" and (self.inference != "gibbs" or self.relevance is True):
            if self.semi_supervised == "auto":
                return None
            raise CNBError(
                f"semi_supervised={self.semi_supervised!r} needs inference='gibbs' without "
                f"relevance; with inference={self.inference!r} use semi_supervised='em'"
            )
        return mode

    def _infer_gibbs(self, model: DirichletNB, counts: Counts) -> tuple[Posterior, float]:
        return self._infer(model, counts)  # the sampler resamples the missing labels itself

    def _takes_sparse_counts(self) -> bool:
        return (
            self.inference in SPARSE_ENGINES
            and self.observation == "categorical"
            and self.semi_supervised != "em"
        )

    def _groups(self, counts: Counts) -> tuple[np.ndarray, np.ndarray]:
        return np.arange(counts.n_groups), self.partition_

    def _grouped_posterior(
        self, model: DirichletNB, counts: Counts, feature_group: np.ndarray
    ) -> Posterior:
        return Posterior.of_partition(counts, feature_group, self.gamma)

    def _check_settings(self) -> None:
        super()._check_settings()
        check_engine_settings(self._engine_settings())
        check_choice("transductive", self.transductive, TRANSDUCTIVE_MODES)
        check_choice("calibration", self.calibration, CALIBRATIONS)
        if self.transductive_temperature != "auto" and not 0 < self.transductive_temperature <= 1:
            raise CNBError(
                f"transductive_temperature must be in (0, 1], got {self.transductive_temperature!r}"
            )

    def _publish(self, result: ClusteringResult) -> None:
        self.partition_ = canonical_partition(result.partition)
        self.n_clusters_posterior_ = result.n_clusters_probability
        self.evidence_kind_ = result.evidence_kind
        names = {
            "tree": "tree_",
            "node_log_r": "node_log_r_",
            "gamma_samples": "gamma_samples_",
            "unlabelled_proba": "unlabelled_proba_",
            "feature_relevance": "feature_relevance_",
        }
        for key, attribute in names.items():
            if key in result.extras:
                setattr(self, attribute, result.extras[key])

    def predict_log_proba(self, X: Any, tasks: Any = None, new_tasks: str = "pooled") -> np.ndarray:
        """Log posterior predictive, shape (n_rows, n_classes); with ``transductive="select"``
        a task's unlabelled training rows choose its clusters
        (:mod:`clusterednb.naive_bayes.transductive`); ``new_tasks`` as in
        :meth:`~clusterednb.naive_bayes.predictions.PredictsFromPosterior.predict_log_proba`.

        Examples
        --------
        >>> from clusterednb.examples import naive_bayes as toy
        >>> model = ClusteredNB(inference="exact").fit(*toy.colour_rows())
        >>> np.exp(model.predict_log_proba([["red"]], ["cy"])).round(3).tolist()  # no, yes
        [[0.576, 0.424]]
        """
        log_proba = self._uncalibrated_log_proba(X, tasks, new_tasks)
        if hasattr(self, "calibration_"):
            return calibrated_log_proba(log_proba, self.calibration_)
        return log_proba

    def _uncalibrated_log_proba(self, X: Any, tasks: Any, new_tasks: str = "pooled") -> np.ndarray:
        log_proba = super().predict_log_proba(X, tasks, new_tasks)
        if self.transductive != "select" or self.unlabelled_X_.shape[0] == 0:
            return log_proba
        X_codes, task_index, _ = self._encode_for_prediction(X, tasks)
        return select_log_proba_for_rows(
            self.observation_,
            self.counts_,
            self.partition_,
            self.gamma,
            self.unlabelled_X_,
            self.unlabelled_task_,
            X_codes,
            task_index,
            log_proba,
            self.selection_temperature(),
        )

    @property
    def coclustering_(self) -> np.ndarray:
        """ndarray of shape (n_tasks, n_tasks): P(two tasks share a cluster | D).

        Examples
        --------
        >>> from clusterednb.examples import naive_bayes as toy
        >>> ClusteredNB(inference="exact").fit(*toy.colour_rows()).coclustering_.round(2)[0]
        array([1.  , 0.64, 0.14])
        """
        if not hasattr(self, "result_"):
            raise AttributeError("coclustering_ is available after fit")
        if self.task_ids_.size > _COCLUSTERING_LIMIT:
            raise CNBError(
                f"a co-clustering matrix of {self.task_ids_.size} tasks is too large; "
                "use result_.coclustering() on a subset"
            )
        return self.result_.coclustering()

    # ------------------------------------------------------------------ persistence
    def fit_summary(self) -> dict[str, Any]:
        """The shell's summary, the number of clusters of the MAP partition and, when
        calibrated, the sigmoid map's ``(a, b)``.

        Examples
        --------
        >>> from clusterednb.examples import naive_bayes as toy
        >>> ClusteredNB(inference="exact").fit(*toy.colour_rows()).fit_summary()["clusters"]
        2
        """
        summary = super().fit_summary() | {"clusters": int(self.partition_.max()) + 1}
        if hasattr(self, "calibration_"):
            summary["calibration"] = [float(value) for value in self.calibration_]
        return summary

    def _state(self) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        meta, arrays = super()._state()
        meta["evidence_kind"] = self.result_.evidence_kind
        return meta, {**arrays, **self.result_.to_arrays()}

    def _restore(self, record: ModelRecord) -> None:
        super()._restore(record)
        self.result_ = ClusteringResult.from_arrays(
            record.arrays,
            self.posterior_,
            self.log_evidence_,
            str(record.meta["evidence_kind"]),
            record.task_ids.size,
        )
        self._publish(self.result_)

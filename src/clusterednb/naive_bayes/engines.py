"""Which engine a :class:`~clusterednb.naive_bayes.clustered.ClusteredNB` runs, with its settings.

The estimator's hyperparameters are copied once into an :class:`EngineSettings`; here they become
each engine's arguments, so the estimator holds no engine logic and neither this module nor the
engines ever see an estimator. A warm start (``partial_fit``) resumes the Gibbs chain from the
previous assignment with a quarter of the sweeps.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields, replace
from typing import Any

import numpy as np

from clusterednb.data.guards import MAX_COUNT_BYTES, dense_count_bytes
from clusterednb.exceptions import CNBError, check_choice, require_extra
from clusterednb.inference.bhc.engine import fit_bhc, fit_bhc_randomized
from clusterednb.inference.exact import fit_exact
from clusterednb.inference.gibbs.engine import GibbsSettings, fit_gibbs
from clusterednb.inference.gibbs.search import fit_search
from clusterednb.inference.relevance import (
    RelevanceSettings,
    check_relevance_prior,
    fit_relevance_gibbs,
)
from clusterednb.inference.relevance_exact import fit_exact_relevance
from clusterednb.inference.relevance_screen import restricted, screened, with_held_columns
from clusterednb.inference.result import ClusteringResult
from clusterednb.inference.screen_release import released_columns
from clusterednb.inference.variational.engine import VariationalSettings, fit_variational
from clusterednb.inference.variational.relevance import fit_variational_relevance
from clusterednb.models.observation import DirichletNB, ObservationModel
from clusterednb.stats.counts import Counts
from clusterednb.stats.sparse_counts import SparseCounts

INFERENCE_ENGINES = ("gibbs", "bhc", "bhc-randomized", "exact", "search", "variational")
SPARSE_ENGINES = ("gibbs", "variational")
"""The engines that read per-task counts kept sparse (:class:`SparseCounts`)."""
RELEVANCE_ENGINES = ("exact", "gibbs", "variational")
"""The engines that judge each feature's relevance (``relevance=True``)."""
AUTO = "auto"
MAX_AUTO_TASKS = 300
"""Most tasks for which ``relevance="auto"`` screens the columns (above: fitted as False;
``relevance=True`` still judges them). On MovieLens' 943 users the screen costs 0.6 times a
Gibbs fit and holding what it found moved protocol T both ways (−0.019 to +0.021 AUC)."""


@dataclass(frozen=True)
class EngineSettings:
    """The settings an engine runs with, copied from the estimator's hyperparameters.

    Attributes
    ----------
    inference : str
        One of :data:`INFERENCE_ENGINES`.
    gamma : float
        The Dirichlet-process concentration.
    n_sweeps, burn_in, thin : int
        The Gibbs chain's length, discarded start and thinning.
    sample_gamma : bool
    gamma_prior : tuple of float
        The Gamma(shape, rate) prior of ``gamma`` when it is sampled.
    split_merge : bool or int
        Split-merge moves per sweep (``True`` = 3).
    progress : bool
    n_jobs : int
    backend : str
        ``"local"`` or ``"dask"``.
    n_shards : int or None
        The Dask backend's shards.
    relevance : bool or "auto"
        Each feature is relevant to the clusters or shared by every task (True: the switches
        summed out exactly, sampled or approximated, :data:`RELEVANCE_ENGINES`). "auto": the
        columns the screen holds shared, the others read by the plain engine (:func:`run_engine`).
    relevance_prior : tuple of float
        The Beta(a, b) prior of the share of relevant features.
    observation : str
        ``"categorical"`` columns are screened by "auto"; ``"bernoulli"`` documents are not.

    Examples
    --------
    >>> from clusterednb import ClusteredNB
    >>> EngineSettings.of(ClusteredNB(inference="bhc", gamma=2.0).get_params()).inference
    'bhc'
    """

    inference: str = "gibbs"
    gamma: float = 1.0
    n_sweeps: int = 200
    burn_in: int = 50
    thin: int = 1
    sample_gamma: bool = False
    gamma_prior: tuple[float, float] = (1.0, 1.0)
    split_merge: bool | int = True
    progress: bool = False
    n_jobs: int = 1
    backend: str = "local"
    n_shards: int | None = None
    relevance: bool | str = False
    relevance_prior: tuple[float, float] = (1.0, 1.0)
    observation: str = "categorical"

    @classmethod
    def of(cls, params: Mapping[str, Any]) -> EngineSettings:
        """The settings named in ``params`` (an estimator's ``get_params()``); others are
        ignored."""
        known = {f.name for f in fields(cls)}
        return cls(**{name: value for name, value in params.items() if name in known})


def check_engine_settings(settings: EngineSettings) -> None:
    """Refuse engine settings that no engine can run, with a
    :class:`~clusterednb.exceptions.CNBError` naming the value.

    Examples
    --------
    >>> check_engine_settings(EngineSettings())  # the defaults run
    >>> check_engine_settings(EngineSettings(n_sweeps=10, burn_in=10))
    Traceback (most recent call last):
    ...
    clusterednb.exceptions.CNBError: burn_in (10) must be smaller than n_sweeps (10)
    """
    if settings.backend not in ("local", "dask"):
        raise CNBError(f"backend must be 'local' or 'dask', got {settings.backend!r}")
    if settings.backend == "dask" and settings.inference != "gibbs":
        raise CNBError("backend='dask' runs the Gibbs engine: set inference='gibbs'")
    if not (isinstance(settings.n_jobs, int | np.integer) and settings.n_jobs >= 1):
        raise CNBError(f"n_jobs must be a positive integer, got {settings.n_jobs!r}")
    check_choice("inference", settings.inference, INFERENCE_ENGINES)
    if not (np.isfinite(settings.gamma) and settings.gamma > 0):
        raise CNBError(f"gamma must be positive and finite, got {settings.gamma!r}")
    if settings.n_sweeps < 1 or settings.burn_in < 0 or settings.thin < 1:
        raise CNBError(
            "need n_sweeps >= 1, burn_in >= 0 and thin >= 1; got "
            f"{settings.n_sweeps}, {settings.burn_in}, {settings.thin}"
        )
    if settings.burn_in >= settings.n_sweeps:
        raise CNBError(
            f"burn_in ({settings.burn_in}) must be smaller than n_sweeps ({settings.n_sweeps})"
        )
    check_choice("relevance", settings.relevance, (False, True, AUTO))
    check_relevance_prior(settings.relevance_prior)
    if settings.relevance is True and not _judging_engine(settings):
        raise CNBError(
            "relevance=True is run by the local exact, Gibbs and variational engines; the "
            f"{settings.inference!r} engine does not sum over the features' switches "
            '(docs/engines.md, "Columns that do not separate users")'
        )


@dataclass(frozen=True)
class EngineInput:
    """What an engine reads besides the counts: the random generator, the unlabelled rows that
    the Gibbs sampler completes, and a previous assignment to resume from.

    Attributes
    ----------
    rng : numpy.random.Generator
    unlabelled_X : int array of shape (n_unlabelled, n_features)
        Encoded unlabelled rows (empty when they are not part of the inference).
    unlabelled_task : int array of shape (n_unlabelled,)
    warm_assignment : int array of shape (n_previous_tasks,) or None
        The previous fit's cluster of each task (``partial_fit``).
    """

    rng: np.random.Generator
    unlabelled_X: np.ndarray
    unlabelled_task: np.ndarray
    warm_assignment: np.ndarray | None = None

    @classmethod
    def labelled_only(cls, rng: np.random.Generator, n_features: int) -> EngineInput:
        """No unlabelled rows, no warm start.

        Examples
        --------
        >>> EngineInput.labelled_only(np.random.default_rng(0), 2).unlabelled_X.shape
        (0, 2)
        """
        return cls(rng, np.zeros((0, n_features), np.int64), np.zeros(0, np.int64))


def run_engine(
    settings: EngineSettings,
    model: ObservationModel,
    counts: Counts | SparseCounts,
    given: EngineInput,
) -> ClusteringResult:
    """Run ``settings.inference`` on the per-task counts.

    Parameters
    ----------
    settings : EngineSettings
    model : ObservationModel
    counts : Counts or SparseCounts
        Per-task counts, ``n_groups`` = tasks.
    given : EngineInput

    Returns
    -------
    ClusteringResult

    Examples
    --------
    >>> from clusterednb import ClusteredNB
    >>> from clusterednb.examples import models as toy
    >>> given = EngineInput.labelled_only(np.random.default_rng(0), 1)
    >>> result = run_engine(EngineSettings(inference="exact"), toy.colour_model(),
    ...                     toy.three_task_counts(), given)
    >>> fitted = ClusteredNB(inference="exact").fit_counts(toy.three_task_counts(),
    ...                                                    ["a", "b", "c"], toy.colour_schema())
    >>> bool(np.isclose(result.log_evidence, fitted.log_evidence_))  # what fit runs
    True
    """
    if isinstance(counts, SparseCounts) and settings.inference not in SPARSE_ENGINES:
        raise CNBError(
            f"this model holds its {counts.n_groups} tasks' counts sparse (too many tasks for a "
            f"dense table), which inference={settings.inference!r} cannot read: use one of "
            f"{SPARSE_ENGINES}, or refit with fewer tasks"
        )
    if settings.relevance is True:
        return _run_relevance(settings, model, counts, given)
    if settings.relevance == AUTO and _may_screen(settings, model, counts, given):
        held, _ = _screen(model, counts)
        if held.any():  # the held columns shared, the others read by the plain engine
            return _held_shared(settings, model, counts, given, held)
    return _plain_engine(settings, model, counts, given)


def _plain_engine(
    settings: EngineSettings,
    model: ObservationModel,
    counts: Counts | SparseCounts,
    given: EngineInput,
) -> ClusteringResult:
    """``settings.inference`` without feature relevance: every column relevant."""
    gamma, rng = settings.gamma, given.rng
    engines: dict[str, Callable[[], ClusteringResult]] = {
        "exact": lambda: fit_exact(model, counts, gamma),
        "gibbs": lambda: _run_gibbs(settings, model, counts, given),
        "bhc": lambda: fit_bhc(model, counts, gamma),
        "bhc-randomized": lambda: fit_bhc_randomized(model, counts, gamma, rng),
        "search": lambda: fit_search(model, counts, gamma, rng),
        "variational": lambda: fit_variational(
            model, counts, gamma, rng, VariationalSettings(n_jobs=settings.n_jobs)
        ),
    }
    return engines[settings.inference]()


def _held_shared(
    settings: EngineSettings,
    model: DirichletNB,
    counts: Counts | SparseCounts,
    given: EngineInput,
    held: np.ndarray,
) -> ClusteringResult:
    """``relevance="auto"`` where the screen holds columns (``held``, bool (n_features,)):
    the plain engine on the other columns, every one of them relevant, and the held ones
    shared by every task (:func:`~clusterednb.inference.relevance_screen.with_held_columns`).
    Held columns whose evidence on that fit's clusters beats their shared evidence, judged
    together, are released (:func:`~clusterednb.inference.screen_release.released_columns`)
    and the engine runs again from the same draws on the columns then kept (all of them: the
    plain fit). The relevance is the screen's verdict, 1 or 0; the fit's draws are those of
    the plain engine on a table without the columns held."""
    fresh = copy.deepcopy(given.rng)  # a second fit draws as a first one would
    result = _fit_without(settings, model, counts, given, held)
    released = released_columns(model, counts, held, result.partition, settings.relevance_prior)
    if not released.any():
        return result
    held = held & ~released
    again = replace(given, rng=fresh)
    if held.any():
        result = _fit_without(settings, model, counts, again, held)
    else:
        result = _plain_engine(settings, model, counts, again)
    return replace(result, extras={**result.extras, "released": released})


def _fit_without(
    settings: EngineSettings,
    model: DirichletNB,
    counts: Counts | SparseCounts,
    given: EngineInput,
    held: np.ndarray,
) -> ClusteringResult:
    """The plain engine on the columns not ``held`` (bool (n_features,)), the held ones
    shared by every task; the relevance 1 or 0 (:func:`_held_shared`)."""
    sub_model, sub_counts = restricted(model, counts, ~held)
    result = _plain_engine(settings, sub_model, sub_counts, given)
    verdict = np.ones(int((~held).sum()))  # with_held_columns keeps the other extras
    extras = {**result.extras, "feature_relevance": verdict, "screen_only": True}
    restricted_result = replace(result, extras=extras)
    return with_held_columns(restricted_result, model, counts, ~held, settings.relevance_prior)


def _judging_engine(settings: EngineSettings) -> bool:
    """Whether the engine judges the columns' relevance: local exact, Gibbs or variational."""
    return settings.inference in RELEVANCE_ENGINES and settings.backend == "local"


def _may_screen(
    settings: EngineSettings,
    model: ObservationModel,
    counts: Counts | SparseCounts,
    given: EngineInput,
) -> bool:
    """Whether ``relevance="auto"`` screens the columns: a table's categorical model (not a
    Bernoulli model of documents, whose columns are the words), any local engine (the held
    columns are shared whichever engine clusters the others), labelled rows only, at most
    :data:`MAX_AUTO_TASKS` tasks, and a dense table the Gibbs engine may read (elsewhere:
    fitted as False)."""
    if settings.backend != "local" or settings.observation != "categorical":
        return False
    if not isinstance(model, DirichletNB) or given.unlabelled_X.shape[0]:
        return False
    if counts.n_groups > MAX_AUTO_TASKS:
        return False
    return (
        settings.inference != "gibbs"
        or not isinstance(counts, SparseCounts)
        or (dense_count_bytes(model.schema, counts.n_groups) <= MAX_COUNT_BYTES)
    )


def _screen(model: DirichletNB, counts: Counts | SparseCounts) -> tuple[np.ndarray, np.ndarray]:
    """The screen's held and designed columns (:func:`~clusterednb.inference.
    relevance_screen.screened`), each column's shuffles seeded by its own counts: the
    verdicts are a function of the table, whatever ``random_state`` (an exact or BHC fit
    stays deterministic), and the fit's own draws are those without the screen."""
    schema = model.schema
    ordinal = np.array([name in schema.bin_edges for name in schema.feature_names])
    return screened(counts, model.offsets, ordinal, None)


def _run_relevance(
    settings: EngineSettings,
    model: ObservationModel,
    counts: Counts | SparseCounts,
    given: EngineInput,
) -> ClusteringResult:
    """The Gibbs or variational engine with feature relevance (a warm start fits from
    scratch), on the columns the screen leaves free
    (:mod:`~clusterednb.inference.relevance_screen`). Where it holds nothing the fit's
    numbers are those without it."""
    if given.unlabelled_X.shape[0]:
        raise CNBError("relevance=True learns from labelled rows only: set semi_supervised=False")
    if isinstance(model, DirichletNB):
        held, designed = _screen(model, counts)
        designed = designed if designed.any() else None
        if held.any():
            sub_model, sub_counts = restricted(model, counts, ~held)
            forced = None if designed is None else designed[~held]
            result = _run_judge(settings, sub_model, sub_counts, given, forced)
            completed = with_held_columns(result, model, counts, ~held, settings.relevance_prior)
            return _naming(completed, designed)
        return _naming(_run_judge(settings, model, counts, given, designed), designed)
    return _run_judge(settings, model, counts, given)


def _naming(result: ClusteringResult, designed: np.ndarray | None) -> ClusteringResult:
    """``result`` with ``extras["designed"]`` (bool, (n_features,)) where a column was."""
    extras = result.extras if designed is None else {**result.extras, "designed": designed}
    return replace(result, extras=extras)


def _run_judge(
    settings: EngineSettings,
    model: ObservationModel,
    counts: Counts | SparseCounts,
    given: EngineInput,
    forced: np.ndarray | None = None,
) -> ClusteringResult:
    """The exact, Gibbs or variational relevance engine on these columns (``forced``, bool
    (n_features,): the designed ones, kept relevant)."""
    if settings.inference == "exact":
        return fit_exact_relevance(model, counts, settings.gamma, settings.relevance_prior, forced)
    if settings.inference == "variational":
        return fit_variational_relevance(
            model,
            counts,
            settings.gamma,
            given.rng,
            VariationalSettings(n_jobs=settings.n_jobs),
            settings.relevance_prior,
            forced,
        )
    if isinstance(counts, SparseCounts):  # the sampler reads a dense table: checked first
        n_bytes = dense_count_bytes(model.schema, counts.n_groups)
        if n_bytes > MAX_COUNT_BYTES:
            raise CNBError(
                f"relevance=True with inference='gibbs' reads the {counts.n_groups} tasks' "
                f"counts as a dense table of {n_bytes / 2**20:.0f} MiB, above the "
                f"{MAX_COUNT_BYTES / 2**20:.0f} MiB limit: use inference='variational'"
            )
        counts = counts.dense()
    chain = RelevanceSettings(
        settings.n_sweeps,
        settings.burn_in,
        settings.thin,
        settings.relevance_prior,
        settings.progress,
    )
    return fit_relevance_gibbs(model, counts, settings.gamma, chain, given.rng, forced)


def _run_gibbs(
    settings: EngineSettings,
    model: ObservationModel,
    counts: Counts | SparseCounts,
    given: EngineInput,
) -> ClusteringResult:
    n_sweeps, burn_in, initial = settings.n_sweeps, settings.burn_in, None
    if given.warm_assignment is not None:
        previous = given.warm_assignment
        initial = np.full(counts.n_groups, -1, dtype=np.int64)
        initial[: previous.size] = previous
        n_sweeps, burn_in = max(settings.n_sweeps // 4, 1), settings.burn_in // 4
    moves = 3 if settings.split_merge is True else int(settings.split_merge)
    gibbs = GibbsSettings(
        n_sweeps=n_sweeps,
        burn_in=min(burn_in, n_sweeps - 1),
        thin=settings.thin,
        sample_gamma=settings.sample_gamma,
        gamma_prior=tuple(settings.gamma_prior),
        split_merge_moves=moves,
        progress=settings.progress,
        n_jobs=settings.n_jobs,
    )
    arguments = (
        model,
        counts,
        given.unlabelled_X,
        given.unlabelled_task,
        settings.gamma,
        gibbs,
        given.rng,
        initial,
    )
    if settings.backend == "dask":
        # dask is an optional extra: imported only when this backend is asked for
        require_extra("dask", "backend='dask'")
        from clusterednb.distributed.dask import dask_sharded_sweep

        with dask_sharded_sweep(settings.n_shards) as sweep:
            return fit_gibbs(*arguments, sweep=sweep)
    return fit_gibbs(*arguments)

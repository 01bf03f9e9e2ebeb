"""Which engine a :class:`~clusterednb.clustered.ClusteredNB` runs, with its settings.

The estimator's hyperparameters become each engine's arguments here, so the estimator holds
no engine logic and the engines know nothing of estimators. A warm start (``partial_fit``)
resumes the Gibbs chain from the previous assignment with a quarter of the sweeps.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from clusterednb.exceptions import CNBError
from clusterednb.inference.bhc import fit_bhc, fit_bhc_randomized
from clusterednb.inference.exact import fit_exact
from clusterednb.inference.gibbs import GibbsSettings, fit_gibbs
from clusterednb.inference.result import ClusteringResult
from clusterednb.inference.search import fit_search
from clusterednb.inference.variational import VariationalSettings, fit_variational
from clusterednb.observation import DirichletNB
from clusterednb.sparse_counts import SparseCounts
from clusterednb.stats import Counts

INFERENCE_ENGINES = ("gibbs", "bhc", "bhc-randomized", "exact", "search", "variational")
SPARSE_ENGINES = ("gibbs", "variational")
"""The engines that read per-task counts kept sparse (:class:`SparseCounts`)."""


def check_engine_settings(estimator: Any) -> None:
    """Refuse engine settings of a :class:`~clusterednb.clustered.ClusteredNB` that no engine
    can run, with a :class:`~clusterednb.exceptions.CNBError` naming the value.

    Examples
    --------
    >>> from clusterednb import ClusteredNB
    >>> check_engine_settings(ClusteredNB())  # the defaults run
    >>> check_engine_settings(ClusteredNB(n_sweeps=10, burn_in=10))
    Traceback (most recent call last):
    ...
    clusterednb.exceptions.CNBError: burn_in (10) must be smaller than n_sweeps (10)
    """
    if estimator.backend not in ("local", "dask"):
        raise CNBError(f"backend must be 'local' or 'dask', got {estimator.backend!r}")
    if estimator.backend == "dask" and estimator.inference != "gibbs":
        raise CNBError("backend='dask' runs the Gibbs engine: set inference='gibbs'")
    if not (isinstance(estimator.n_jobs, int | np.integer) and estimator.n_jobs >= 1):
        raise CNBError(f"n_jobs must be a positive integer, got {estimator.n_jobs!r}")
    if estimator.inference not in INFERENCE_ENGINES:
        raise CNBError(f"inference must be one of {INFERENCE_ENGINES}, got {estimator.inference!r}")
    if not (np.isfinite(estimator.gamma) and estimator.gamma > 0):
        raise CNBError(f"gamma must be positive and finite, got {estimator.gamma!r}")
    if estimator.n_sweeps < 1 or estimator.burn_in < 0 or estimator.thin < 1:
        raise CNBError(
            "need n_sweeps >= 1, burn_in >= 0 and thin >= 1; got "
            f"{estimator.n_sweeps}, {estimator.burn_in}, {estimator.thin}"
        )
    if estimator.burn_in >= estimator.n_sweeps:
        raise CNBError(
            f"burn_in ({estimator.burn_in}) must be smaller than n_sweeps ({estimator.n_sweeps})"
        )


def run_engine(
    estimator: Any, model: DirichletNB, counts: Counts | SparseCounts
) -> ClusteringResult:
    """Run ``estimator.inference`` on the per-task counts with the estimator's settings.

    Examples
    --------
    >>> from clusterednb import ClusteredNB, toy
    >>> estimator = ClusteredNB(inference="exact")
    >>> result = run_engine(estimator, toy.colour_model(), toy.three_task_counts())
    >>> fitted = estimator.fit_counts(toy.three_task_counts(), ["a", "b", "c"],
    ...                               toy.colour_schema())
    >>> bool(np.isclose(result.log_evidence, fitted.log_evidence_))  # what fit runs
    True
    """
    if isinstance(counts, SparseCounts) and estimator.inference not in SPARSE_ENGINES:
        raise CNBError(
            f"this model holds its {counts.n_groups} tasks' counts sparse (too many tasks for a "
            f"dense table), which inference={estimator.inference!r} cannot read: use one of "
            f"{SPARSE_ENGINES}, or refit with fewer tasks"
        )
    gamma = estimator.gamma
    engines: dict[str, Callable[[], ClusteringResult]] = {
        "exact": lambda: fit_exact(model, counts, gamma),
        "gibbs": lambda: _run_gibbs(estimator, model, counts),
        "bhc": lambda: fit_bhc(model, counts, gamma),
        "bhc-randomized": lambda: fit_bhc_randomized(model, counts, gamma, estimator._rng()),
        "search": lambda: fit_search(model, counts, gamma, estimator._rng()),
        "variational": lambda: fit_variational(
            model, counts, gamma, estimator._rng(), VariationalSettings(n_jobs=estimator.n_jobs)
        ),
    }
    return engines[estimator.inference]()


def _run_gibbs(
    estimator: Any, model: DirichletNB, counts: Counts | SparseCounts
) -> ClusteringResult:
    warm = getattr(estimator, "result_", None)
    n_sweeps, burn_in, initial = estimator.n_sweeps, estimator.burn_in, None
    if warm is not None and "assignment" in warm.extras:
        previous = warm.extras["assignment"]
        initial = np.full(counts.n_groups, -1, dtype=np.int64)
        initial[: previous.size] = previous
        n_sweeps, burn_in = max(estimator.n_sweeps // 4, 1), estimator.burn_in // 4
    moves = 3 if estimator.split_merge is True else int(estimator.split_merge)
    settings = GibbsSettings(
        n_sweeps=n_sweeps,
        burn_in=min(burn_in, n_sweeps - 1),
        thin=estimator.thin,
        sample_gamma=estimator.sample_gamma,
        gamma_prior=tuple(estimator.gamma_prior),
        split_merge_moves=moves,
        progress=estimator.progress,
        n_jobs=estimator.n_jobs,
    )
    # Without semi-supervision the unlabelled rows are not part of the data at all.
    rows = slice(None) if estimator._semi_supervised_mode() == "gibbs" else slice(0, 0)
    arguments = (
        model,
        counts,
        estimator.unlabelled_X_[rows],
        estimator.unlabelled_task_[rows],
        estimator.gamma,
        settings,
        estimator._rng(),
        initial,
    )
    if estimator.backend == "dask":
        from clusterednb.distributed.dask import dask_sharded_sweep

        with dask_sharded_sweep(estimator.n_shards) as sweep:
            return fit_gibbs(*arguments, sweep=sweep)
    return fit_gibbs(*arguments)

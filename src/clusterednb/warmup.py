"""Compile every Numba kernel once, so that later processes load them from the cache.

A process that finds no compiled kernels spends ~10 s compiling them on its first fit
(Gibbs, BHC, variational, label resampling, counting, the clustered logistic regression's
block sampler). :func:`warm_up` fits a tiny
synthetic problem with every engine that has compiled kernels; ``cnb warm-up`` runs it,
and ``make`` runs it once after installing. The cache lives where
:func:`clusterednb.jit.cache_directory` says.
"""

from __future__ import annotations

import time
import warnings

import numpy as np

from clusterednb.data.dataset import TaskDataset
from clusterednb.data.synthetic import make_planted_population
from clusterednb.jit import cache_directory
from clusterednb.logistic.estimator import ClusteredLogisticRegression
from clusterednb.naive_bayes.clustered import ClusteredNB
from clusterednb.naive_bayes.sharing import NoSharingNB
from clusterednb.stats.sparse_counts import SparseCounts

ENGINE_SETTINGS: dict[str, dict] = {
    "counting": {},
    "sparse-counting": {},
    "gibbs": {"inference": "gibbs", "n_sweeps": 3, "burn_in": 1, "semi_supervised": "gibbs"},
    "gibbs-sharded": {"inference": "gibbs", "n_sweeps": 2, "burn_in": 1, "n_jobs": 2},
    "gibbs-relevance": {"inference": "gibbs", "n_sweeps": 2, "burn_in": 1, "relevance": True},
    "bhc": {"inference": "bhc"},
    "bhc-randomized": {"inference": "bhc-randomized"},
    "variational": {"inference": "variational"},
    "clustered-logistic": {"inference": "gibbs", "n_sweeps": 2, "burn_in": 1},
}
"""Each warmed engine and the settings of its tiny fit ("counting": No-Sharing NB;
"sparse-counting": the per-task counts a fit of many tasks keeps sparse;
"clustered-logistic": :class:`~clusterednb.ClusteredLogisticRegression`'s block sampler)."""


def warm_up(rng: np.random.Generator | None = None) -> dict[str, float]:
    """Fit a tiny problem with each engine; return the seconds each took.

    Parameters
    ----------
    rng : numpy.random.Generator, optional
        Draws the tiny problem and seeds the samplers (default: seed 0).

    Returns
    -------
    dict
        Engine name → wall-clock seconds of its fit (compile time when the cache was cold,
        load time when it was warm). ``"cache"`` is not a key; see
        :func:`clusterednb.jit.cache_directory`.

    Examples
    --------
    >>> seconds = warm_up(np.random.default_rng(0))
    >>> sorted(seconds) == sorted(ENGINE_SETTINGS)
    True
    """
    rng = rng if rng is not None else np.random.default_rng(0)
    population = make_planted_population(rng, group_sizes=(4, 4), rows_per_task=6)
    frame = population.frame
    X, y, tasks = frame[population.feature_names], frame["label"].copy(), frame["task"]
    y.iloc[::5] = np.nan  # unlabelled rows exercise label resampling
    seconds: dict[str, float] = {}
    for engine, settings in ENGINE_SETTINGS.items():
        if engine == "sparse-counting":
            start = time.perf_counter()
            data = TaskDataset.from_arrays(X, y.to_numpy(dtype=float), tasks)
            SparseCounts.from_codes(data.X, data.y, data.task_index, data.n_tasks, data.schema)
            seconds[engine] = time.perf_counter() - start
            continue
        if engine == "counting":
            estimator = NoSharingNB()
        elif engine == "clustered-logistic":
            estimator = ClusteredLogisticRegression(random_state=rng, **settings)
        else:
            estimator = ClusteredNB(progress=False, random_state=rng, **settings)
        start = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            estimator.fit(X, y, tasks)
            estimator.predict_proba(X, tasks)
        seconds[engine] = time.perf_counter() - start
    return seconds


def describe(seconds: dict[str, float]) -> str:
    """A few lines for a terminal: the cache folder and the time of each engine.

    Examples
    --------
    >>> print(describe({"gibbs": 1.25, "bhc": 0.5}))  # doctest: +ELLIPSIS
    compiled-kernel cache: ...
      gibbs             1.25 s
      bhc               0.50 s
      total             1.75 s
    """
    lines = [f"compiled-kernel cache: {cache_directory()}"]
    lines += [f"  {engine:<15} {value:6.2f} s" for engine, value in seconds.items()]
    lines.append(f"  {'total':<15} {sum(seconds.values()):6.2f} s")
    return "\n".join(lines)

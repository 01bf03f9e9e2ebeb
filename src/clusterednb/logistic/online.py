"""One more answer: how :meth:`~clusterednb.ClusteredLogisticRegression.partial_fit` updates
a fit.

The new rows join the training rows. The partition posterior is sampled again (a quarter of
the sampler's sweeps, as :class:`~clusterednb.ClusteredNB`'s warm refit) when a task is new,
when the rows added since it was last sampled reach :data:`RESAMPLE_AFTER` of the rows it was
sampled on, or when the fit does not hold the regressions' task weights (a file written
before them). Otherwise the posterior is kept — one answer among thousands barely moves it —
and the cluster regressions are fitted again under the same task weights, each from its
previous minimum: the same weighted objectives a refit under that posterior solves, to the
same tolerance, in a Newton step or two instead of a chain and regressions from the pooled
fit. The kept partition's ``log_joint`` is that of the rows it was sampled on.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from clusterednb.inference.blocks.engine import BlockClustering
from clusterednb.logistic.clusters import LogisticClusters, assemble, fit_clusters
from clusterednb.logistic.fit import FitSettings, JointData

RESAMPLE_AFTER = 0.05
"""Rows added since the partition posterior was sampled, as a share of the rows it was
sampled on, at which a partial fit samples it again."""


def partial_update(
    previous: LogisticClusters,
    data: JointData,
    settings: FitSettings,
    n_known_tasks: int,
    rng: np.random.Generator,
) -> LogisticClusters:
    """The fit of ``data`` (the previous training rows and the new ones; tasks numbered as
    before, new tasks after the ``n_known_tasks`` known ones) updated from ``previous``.

    Examples
    --------
    >>> from clusterednb.examples import logistic as toy
    >>> data, settings = toy.joint_data(), FitSettings(effective_rows=5.0, floor=0.2)
    >>> fitted = fit_clusters(data, settings, np.random.default_rng(0))
    >>> again = partial_update(fitted, data, settings, data.n_tasks, np.random.default_rng(1))
    >>> bool(np.array_equal(again.partition, fitted.partition))  # nothing added: kept
    True
    """
    added = data.y.size - previous.sampled_rows
    if (
        data.n_tasks > n_known_tasks
        or previous.cluster_weights is None
        or added >= RESAMPLE_AFTER * previous.sampled_rows
    ):
        quick = replace(
            settings, n_sweeps=max(settings.n_sweeps // 4, 2), burn_in=settings.burn_in // 4
        )
        return fit_clusters(data, quick, rng)
    kept = BlockClustering(
        partition=previous.partition,
        log_joint=previous.log_joint,
        coclustering=previous.coclustering,
        n_clusters_probability=previous.n_clusters_probability,
        membership=previous.cluster_weights,
    )
    clusters = assemble(data, kept, settings, near=previous)
    clusters = replace(clusters, sampled_rows=previous.sampled_rows)
    return clusters.with_deviations(data, settings.deviation_variance)

"""The partition posterior of :class:`~clusterednb.ClusteredLogisticRegression`: enumerated
for few tasks, else sampled (above
:data:`~clusterednb.inference.blocks.core_and_place.MAX_SAMPLED_TASKS` tasks on a core of them,
the others placed), on scores that read, with ``relevance``, only the features judged to
tell the clusters apart (:mod:`~clusterednb.logistic.clustering.feature_relevance`) and let
differ between clusters only the label weights judged to
(:mod:`~clusterednb.logistic.clustering.shared_slopes`, :func:`judged_differing`).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from clusterednb.inference.blocks.core_and_place import MAX_SAMPLED_TASKS, core_and_place
from clusterednb.inference.blocks.engine import BlockClustering, enumerate_blocks
from clusterednb.inference.blocks.slot_chain import gibbs_joint_blocks
from clusterednb.logistic.clustering.feature_relevance import judged_relevance, kept_values
from clusterednb.logistic.clustering.joint_blocks import JointLogisticBlocks
from clusterednb.logistic.clustering.shared_slopes import differing_columns
from clusterednb.logistic.fit import JointData
from clusterednb.logistic.settings import AUTO, MAX_ENUMERATED_TASKS, FitSettings


def partition_posterior(
    data: JointData,
    settings: FitSettings,
    rng: np.random.Generator,
    relevance: np.ndarray | None = None,
    differing: np.ndarray | None = None,
) -> BlockClustering:
    """The partition posterior of ``data`` (see the module).

    With ``settings.relevance`` the features' relevance to the clusters is judged on the
    tempered feature counts, unless ``relevance`` (n_features,) gives it already judged (the
    tuning's later settings reuse its first judgement); ``differing`` (n_features,), bool:
    the features whose label weights the scores let differ between clusters, the others
    held shared (None: all differ; :func:`judged_differing` judges them). Both are returned
    in the clustering (``feature_relevance``, ``differing_columns``).

    Examples
    --------
    >>> from clusterednb.examples import logistic as toy
    >>> data = toy.joint_data()  # 3 tasks of 2 rows, one unlabelled
    >>> settings = FitSettings(effective_rows=5.0)
    >>> clustering = partition_posterior(data, settings, np.random.default_rng(0))
    >>> clustering.coclustering.shape, round(float(clustering.n_clusters_probability.sum()), 12)
    ((3, 3), 1.0)
    """
    if differing is not None and differing.all():
        differing = None
    kept = None
    if settings.relevance:
        if relevance is None:
            counts = data.blocks(settings).value_counts
            relevance = judged_relevance(
                counts, data.codes, data.task, data.offsets, settings.beta, settings.gamma, rng
            )
        kept = kept_values(relevance, data.offsets)
    clustering = _posterior(data, data.blocks(settings, kept, differing=differing), settings, rng)
    return replace(clustering, feature_relevance=relevance, differing_columns=differing)


def judged_differing(data: JointData, settings: FitSettings, partition: np.ndarray) -> np.ndarray:
    """The features whose label weights differ between the clusters of ``partition``
    (n_tasks,), judged on ``data``'s expansions tempered as ``settings`` says
    (:func:`~clusterednb.logistic.clustering.shared_slopes.differing_columns`); bool,
    shape (n_features,).

    Examples
    --------
    >>> from clusterednb.examples import logistic as toy
    >>> judged_differing(toy.joint_data(), FitSettings(effective_rows=5.0), np.zeros(3, int))
    array([ True])
    """
    offsets = data.label_offsets()
    return differing_columns(data.blocks(settings), partition, offsets)


def _posterior(
    data: JointData, blocks: JointLogisticBlocks, settings: FitSettings, rng: np.random.Generator
) -> BlockClustering:
    """The partition posterior under ``blocks``: enumerated, sampled, or sampled on a core."""
    exact = settings.inference == "exact" or (
        settings.inference == AUTO and data.n_tasks <= MAX_ENUMERATED_TASKS
    )
    if exact:
        return enumerate_blocks(data.n_tasks, blocks.log_block, settings.gamma)
    if data.n_tasks > MAX_SAMPLED_TASKS:
        return core_and_place(blocks, settings.gamma, rng, settings.n_sweeps, settings.burn_in)
    return gibbs_joint_blocks(blocks, settings.gamma, rng, settings.n_sweeps, settings.burn_in)

"""Tiny ready-made rows, expansions, blocks and clusters for the clustered logistic model's
examples.

A docstring imports the fixture module that defines what it uses (:mod:`clusterednb.examples`).
"""

from __future__ import annotations

import numpy as np

from clusterednb.logistic.clustering.joint_blocks import (
    JointLogisticBlocks,
    TaskExpansions,
    one_hot_design,
)
from clusterednb.logistic.clusters import LogisticClusters, fit_clusters
from clusterednb.logistic.fit import FitSettings, JointData


def logistic_rows() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Two tasks of two rows each, one-hot encoded with an intercept.

    Returns
    -------
    design : ndarray of shape (4, 3)
        The one-hot columns of one feature of two values, then the intercept.
    y : ndarray of shape (4,)
        Labels ``1, 0`` (task 0) and ``1, 1`` (task 1).
    starts : ndarray of shape (3,)
        Task ``u``'s rows are ``starts[u]:starts[u + 1]``.

    Examples
    --------
    >>> design, y, starts = logistic_rows()
    >>> design.tolist()[:2], y.tolist(), starts.tolist()
    ([[1.0, 0.0, 1.0], [0.0, 1.0, 1.0]], [1.0, 0.0, 1.0, 1.0], [0, 2, 4])
    """
    design = one_hot_design(np.array([[0], [1], [0], [1]]), np.array([0, 2]))
    return design, np.array([1.0, 0.0, 1.0, 1.0]), np.array([0, 2, 4])


def task_expansions() -> TaskExpansions:
    """The second-order expansions of :func:`logistic_rows`' tasks at their pooled MAP (``λ = 1``).

    Examples
    --------
    >>> task_expansions().hessian.shape  # two tasks, 2 values + intercept
    (2, 3, 3)
    """
    design, y, starts = logistic_rows()
    return TaskExpansions.at_pooled_map(design, y, starts, precision=1.0)


def joint_blocks() -> JointLogisticBlocks:
    """The joint block scores of :func:`logistic_rows`' two tasks, each of which saw both values.

    Examples
    --------
    >>> joint_blocks().n_tasks
    2
    """
    return JointLogisticBlocks(np.array([[1, 1], [1, 1]]), np.array([0, 2]), task_expansions())


def joint_data() -> JointData:
    """Three tasks of two rows over one feature of two values; one row of task 1 is unlabelled.

    Examples
    --------
    >>> data = joint_data()
    >>> data.task.tolist(), data.y.tolist()
    ([0, 0, 1, 1, 2, 2], [1, 0, -1, 1, 0, 1])
    """
    return JointData.from_codes(
        np.array([[0], [1], [0], [1], [1], [0]]),
        np.array([1, 0, -1, 1, 0, 1]),
        np.array([0, 0, 1, 1, 2, 2]),
        3,
        np.array([0, 2]),
    )


def fitted_clusters(floor: float = 1.0) -> LogisticClusters:
    """The clustered logistic fit of :func:`joint_data` (``R = 5`` effective rows, seed 0).

    Parameters
    ----------
    floor : float
        The weight every other cluster's rows keep in a cluster's regression.

    Examples
    --------
    >>> int(fitted_clusters().cluster_sizes.sum())  # every task in some cluster
    3
    """
    settings = FitSettings(effective_rows=5.0, floor=floor)
    return fit_clusters(joint_data(), settings, np.random.default_rng(0))


def toy_shards_frame():
    """Six tasks of eight rows over one feature of two values, half of them liking ``a``.

    Examples
    --------
    >>> toy_shards_frame().shape
    (48, 3)
    """
    import pandas as pd

    rng = np.random.default_rng(3)
    task = np.repeat([f"u{i}" for i in range(6)], 8)
    value = rng.choice(["a", "b"], size=48)
    likes_a = np.isin(task, ["u0", "u1", "u2"])
    label = np.where(rng.random(48) < 0.85, (value == "a") == likes_a, (value == "b") == likes_a)
    return pd.DataFrame({"user": task, "label": label.astype(int), "f": value})


def toy_shards_schema():
    """The schema of :func:`toy_shards_frame`.

    Examples
    --------
    >>> toy_shards_schema().n_values_total
    2
    """
    from clusterednb.data.schema import FeatureSchema

    return FeatureSchema(("f",), (("a", "b"),), (0, 1))


def toy_shards():
    """:func:`toy_shards_frame` in two shards of three tasks (positions set), fixed settings
    and the pooled anchor of every row.

    Examples
    --------
    >>> shards, settings, anchor = toy_shards()
    >>> [shard.positions.tolist() for shard in shards], anchor.shape
    ([[0, 1, 2], [3, 4, 5]], (3,))
    """
    from clusterednb.logistic.clustering.task_expansions import TaskExpansions
    from clusterednb.logistic.sharded.shards import encode_shard, with_positions

    frame, schema = toy_shards_frame(), toy_shards_schema()
    all_ids = np.array([f"u{i}" for i in range(6)], dtype=object)
    shards = [
        with_positions(encode_shard(part, "user", "label", schema), all_ids)
        for part in (frame.iloc[:24], frame.iloc[24:])
    ]
    codes = np.where(frame["f"].to_numpy() == "a", 0, 1)[:, None]
    starts = np.arange(0, 49, 8)
    design = one_hot_design(codes, schema.offsets)
    anchor = TaskExpansions.at_pooled_map(design, frame["label"].to_numpy(), starts, 1.0).anchor
    return shards, FitSettings(effective_rows=10.0, floor=0.2), anchor

"""Synthetic multi-task populations with a planted partition of the tasks."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd


@dataclass(frozen=True)
class PlantedPopulation:
    """A generated long-format data set and the groups the tasks were drawn from.

    Attributes
    ----------
    frame : DataFrame
        Columns ``task``, ``label`` and the features ``f0 .. f{F-1}`` (integer categories).
    true_group : dict
        Task id → index of the group whose parameters generated it.
    feature_names : list of str

    Examples
    --------
    >>> population = make_planted_population(np.random.default_rng(0), group_sizes=(2, 3))
    >>> len(population.true_group), population.feature_names[:2]
    (5, ['f0', 'f1'])
    """

    frame: pd.DataFrame
    true_group: dict[str, int]
    feature_names: list[str]
    task_column: str = "task"
    label_column: str = "label"

    def labels_for(self, task_ids: Sequence[str]) -> np.ndarray:
        """True group of each task in ``task_ids`` order, shape (n_tasks,).

        Examples
        --------
        >>> population = make_planted_population(np.random.default_rng(0), group_sizes=(2, 3))
        >>> population.labels_for(sorted(population.true_group)).tolist()
        [0, 0, 1, 1, 1]
        """
        return np.array([self.true_group[t] for t in task_ids], dtype=np.int64)


def make_planted_population(
    rng: np.random.Generator,
    *,
    group_sizes: Sequence[int] = (10, 10, 10),
    rows_per_task: int | Sequence[int] = 40,
    n_features: int = 8,
    n_values: int = 4,
    n_classes: int = 2,
    feature_concentration: float = 0.5,
    label_concentration: float = 2.0,
    missing_rate: float = 0.0,
) -> PlantedPopulation:
    """Draw tasks in planted groups, each group with its own naive-Bayes feature parameters.

    The generative story is the Clustered model's with the partition fixed: group ``g`` has
    ``θ[g, y, f] ~ Dir(feature_concentration)``; task ``u`` has its own label distribution
    ``φ_u ~ Dir(label_concentration)``; each row draws ``y ~ φ_u`` and ``x_f ~ θ[g_u, y, f]``.

    Parameters
    ----------
    rng : numpy.random.Generator
        The only source of randomness.
    group_sizes : sequence of int
        Number of tasks in each group.
    rows_per_task : int or sequence of int (one per task)
    n_features, n_values, n_classes : int
    feature_concentration : float
        Smaller values give more distinct groups.
    label_concentration : float
    missing_rate : float
        Probability that a feature value is replaced by NaN.

    Returns
    -------
    PlantedPopulation

    Examples
    --------
    >>> import numpy as np
    >>> population = make_planted_population(np.random.default_rng(0), group_sizes=(2, 1),
    ...                                      rows_per_task=5, n_features=3)
    >>> population.frame.shape, sorted(set(population.true_group.values()))
    ((15, 5), [0, 1])
    """
    n_tasks = int(sum(group_sizes))
    rows = np.broadcast_to(np.asarray(rows_per_task, dtype=np.int64), (n_tasks,))
    theta = rng.dirichlet(
        np.full(n_values, feature_concentration), size=(len(group_sizes), n_classes, n_features)
    )  # (G, C, F, V)
    group_of_task = np.repeat(np.arange(len(group_sizes)), group_sizes)
    width = len(str(n_tasks - 1))
    task_ids = [f"u{t:0{width}d}" for t in range(n_tasks)]
    frames = []
    for t in range(n_tasks):
        phi = rng.dirichlet(np.full(n_classes, label_concentration))
        y = rng.choice(n_classes, size=rows[t], p=phi)
        probs = theta[group_of_task[t], y]  # (n_rows, F, V)
        cumulative = probs.cumsum(axis=-1)
        draws = rng.random((rows[t], n_features, 1))
        x = np.minimum((draws > cumulative).sum(axis=-1), n_values - 1).astype(float)
        if missing_rate > 0:
            x[rng.random(x.shape) < missing_rate] = np.nan
        block = pd.DataFrame(x, columns=[f"f{j}" for j in range(n_features)])
        if missing_rate == 0:
            block = block.astype(np.int64)
        block.insert(0, "label", y)
        block.insert(0, "task", task_ids[t])
        frames.append(block)
    return PlantedPopulation(
        frame=pd.concat(frames, ignore_index=True),
        true_group=dict(zip(task_ids, group_of_task.tolist(), strict=True)),
        feature_names=[f"f{j}" for j in range(n_features)],
    )


def make_logistic_population(
    rng: np.random.Generator,
    *,
    group_sizes: Sequence[int] = (10, 10, 10),
    rows_per_task: int = 40,
    n_features: int = 6,
    n_values: int = 3,
    feature_concentration: float = 1.0,
    weight_scale: float = 2.0,
) -> PlantedPopulation:
    """Draw tasks in planted groups whose features AND label rule differ between groups.

    The story of :class:`~clusterednb.ClusteredLogisticRegression` with the partition fixed:
    group ``g`` has feature probabilities ``θ[g, f] ~ Dir(feature_concentration)`` and a label
    rule ``P(y = 1 | x) = σ(b_g + Σ_f w[g, f, x_f])`` with every weight ``~ N(0,
    weight_scale²)``; each row draws ``x_f ~ θ[g, f]``, then ``y``.

    Examples
    --------
    >>> import numpy as np
    >>> population = make_logistic_population(np.random.default_rng(0), group_sizes=(2, 1),
    ...                                       rows_per_task=5, n_features=3)
    >>> population.frame.shape
    (15, 5)
    """
    groups = LogisticGroups.draw(
        rng, len(group_sizes), n_features, n_values, feature_concentration, weight_scale
    )
    group_of_task = np.repeat(np.arange(len(group_sizes)), group_sizes)
    task_ids = [f"u{t:0{len(str(group_of_task.size - 1))}d}" for t in range(group_of_task.size)]
    frame = groups.rows(rng, group_of_task, task_ids, rows_per_task)
    return PlantedPopulation(
        frame=frame,
        true_group=dict(zip(task_ids, group_of_task.tolist(), strict=True)),
        feature_names=[f"f{j}" for j in range(n_features)],
    )


@dataclass(frozen=True)
class LogisticGroups:
    """The planted groups of :func:`make_logistic_population`: feature probabilities ``θ``
    (n_groups, n_features, n_values), label weights (same shape) and biases (n_groups,).

    Examples
    --------
    >>> groups = LogisticGroups.draw(np.random.default_rng(0), 2, 3, 3, 1.0, 2.0)
    >>> groups.rows(np.random.default_rng(1), np.array([0, 1]), ["a", "b"], 4).shape
    (8, 5)
    """

    theta: np.ndarray
    weights: np.ndarray
    bias: np.ndarray

    @classmethod
    def draw(
        cls,
        rng: np.random.Generator,
        n_groups: int,
        n_features: int,
        n_values: int,
        feature_concentration: float,
        weight_scale: float,
    ) -> LogisticGroups:
        """The groups' parameters, drawn in this order: ``θ``, weights, biases."""
        theta = rng.dirichlet(np.full(n_values, feature_concentration), size=(n_groups, n_features))
        weights = rng.normal(0.0, weight_scale, size=(n_groups, n_features, n_values))
        return cls(theta, weights, rng.normal(0.0, 1.0, size=n_groups))

    def rows(
        self,
        rng: np.random.Generator,
        group_of_task: np.ndarray,
        task_ids: Sequence[str],
        rows_per_task: int,
    ) -> pd.DataFrame:
        """``rows_per_task`` rows of each task (columns task, label, f0, f1, …).

        Each task draws its rows' feature uniforms, then its labels' uniforms, from one
        stream: drawn for all tasks at once they are the numbers a task-by-task draw gives.
        """
        _, n_features, n_values = self.theta.shape
        per_task = rows_per_task * (n_features + 1)
        uniforms = rng.random((group_of_task.size, per_task))
        feature_draws = uniforms[:, : rows_per_task * n_features].reshape(-1, n_features, 1)
        group_of_row = np.repeat(group_of_task, rows_per_task)
        cumulative = self.theta.cumsum(axis=-1)[group_of_row]  # (n_rows, n_features, n_values)
        x = np.minimum((feature_draws > cumulative).sum(axis=-1), n_values - 1)
        del cumulative, feature_draws
        features = np.arange(n_features)
        margin = self.bias[group_of_row] + self.weights[group_of_row[:, None], features, x].sum(
            axis=1
        )
        label_draws = uniforms[:, rows_per_task * n_features :].ravel()
        y = (label_draws < 1.0 / (1.0 + np.exp(-margin))).astype(np.int64)
        frame = pd.DataFrame(x.astype(np.int64), columns=[f"f{j}" for j in features])
        frame.insert(0, "label", y)
        frame.insert(0, "task", np.repeat(np.array(task_ids, dtype=object), rows_per_task))
        return frame

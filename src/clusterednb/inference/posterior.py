"""The posterior predictive every engine returns and every prediction reads.

Each known task's predictive is a mixture of naive-Bayes predictives, one per *component*: a
table of feature counts (a cluster's pooled counts, the task's own, everyone's, ...). The
label prior always uses the task's label counts (its own, or pooled for Complete-Sharing).
The mixture is stored sparsely (CSR: ``indptr``, ``components``, ``log_weights``) so that
No-Sharing (one own component per task), Complete-Sharing (one shared component), a Gibbs
sampler (one component per retained sample) and BHC (the nodes on a task's path) are all the
same object.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from clusterednb.exceptions import CNBError
from clusterednb.inference.predictive import cold_start_log_proba, mixture_log_proba
from clusterednb.models.observation import ConjugateModel
from clusterednb.stats.counts import Counts

_TABLE_BUDGET = 1 << 22  # component tables up to this many entries are computed once


@dataclass
class Posterior:
    """Mixture-of-components posterior predictive.

    Attributes
    ----------
    component_counts : ndarray of shape (n_components, n_classes, n_values_total)
        Feature value counts of each component.
    task_label_counts : ndarray of shape (n_tasks, n_classes)
        Label counts that set each known task's label prior.
    indptr : ndarray of shape (n_tasks + 1,)
        Task ``t``'s mixture entries are ``indptr[t]:indptr[t + 1]``.
    components : ndarray of shape (n_entries,)
        Component of each entry.
    log_weights : ndarray of shape (n_entries,)
        Log mixture weight of each entry; they log-sum to 0 within a task.
    cold_label_counts : ndarray of shape (n_classes,)
        Label counts for a task never seen in training.
    cold_components, cold_log_weights : ndarray of shape (n_cold,)
        The mixture used for a task never seen in training.
    entry_label_counts : ndarray of shape (n_entries, n_classes), optional
        Per-entry label counts that replace ``task_label_counts`` (a sampler whose
        unlabelled rows' labels differ between samples).
    mix_joint : bool
        False: the predictive is the weighted average of each component's normalised
        ``P(y | x)`` (BHC's path average, the variational clusters). True: it is the
        weighted average of the joints ``P(x, y)``, normalised over ``y`` at the end: the exact
        ratio of evidences, with weights ``P(component | D)``.

    Examples
    --------
    Three tasks; the first two share a cluster:

    >>> from clusterednb import Counts, FeatureSchema
    >>> from clusterednb.models.observation import ConjugateModel, DirichletNB
    >>> model = DirichletNB(FeatureSchema(("colour",), (("red", "blue"),), (0, 1)))
    >>> counts = Counts(np.array([[2, 0], [2, 0], [0, 2]]),
    ...                 np.array([[[2, 0], [0, 0]], [[2, 0], [0, 0]], [[0, 0], [0, 2]]]))
    >>> posterior = Posterior.of_partition(counts, np.array([0, 0, 1]), gamma=1.0)
    >>> posterior.component_counts.shape, posterior.components.tolist()
    ((3, 2, 2), [0, 0, 1])
    """

    component_counts: np.ndarray
    task_label_counts: np.ndarray
    indptr: np.ndarray
    components: np.ndarray
    log_weights: np.ndarray
    cold_label_counts: np.ndarray
    cold_components: np.ndarray
    cold_log_weights: np.ndarray
    entry_label_counts: np.ndarray | None = None
    mix_joint: bool = False

    def __post_init__(self) -> None:
        n_tasks = self.task_label_counts.shape[0]
        if self.indptr.shape != (n_tasks + 1,) or self.indptr[-1] != self.components.shape[0]:
            raise CNBError("posterior mixture pointers do not match the number of tasks")
        if (np.diff(self.indptr) <= 0).any() or self.cold_components.size == 0:
            raise CNBError("every task needs at least one mixture component")
        self.mix_joint = bool(self.mix_joint)

    @classmethod
    def single(
        cls,
        component_counts: np.ndarray,
        task_label_counts: np.ndarray,
        task_component: np.ndarray,
        cold_label_counts: np.ndarray,
        cold_component: int,
    ) -> Posterior:
        """A posterior in which every task (and the cold start) uses exactly one component.

        Examples
        --------
        >>> from clusterednb.examples import models as toy
        >>> counts = toy.three_task_counts()
        >>> pooled = counts.value_counts.sum(axis=0, keepdims=True)  # one component for all
        >>> posterior = Posterior.single(pooled, counts.label_counts, np.zeros(3, int),
        ...                              counts.label_counts.sum(axis=0), cold_component=0)
        >>> posterior.components.tolist(), posterior.log_weights.tolist()
        ([0, 0, 0], [0.0, 0.0, 0.0])
        """
        n_tasks = task_label_counts.shape[0]
        return cls(
            component_counts=component_counts,
            task_label_counts=task_label_counts,
            indptr=np.arange(n_tasks + 1, dtype=np.int64),
            components=np.asarray(task_component, dtype=np.int64),
            log_weights=np.zeros(n_tasks),
            cold_label_counts=np.asarray(cold_label_counts),
            cold_components=np.array([cold_component], dtype=np.int64),
            cold_log_weights=np.zeros(1),
        )

    @classmethod
    def of_partition(cls, counts: Counts, partition: np.ndarray, gamma: float) -> Posterior:
        """One partition's predictive: each task predicts from its cluster's pooled counts.

        A task never seen in training gets the CRP mixture over the clusters (weights
        ``|k| / (U + γ)``) and a new, empty cluster (``γ / (U + γ)``).

        Parameters
        ----------
        counts : Counts with n_tasks groups
        partition : ndarray of shape (n_tasks,)
            Cluster of each task, numbered 0..K-1.
        gamma : float

        Examples
        --------
        >>> from clusterednb.examples import models as toy
        >>> model, counts = toy.colour_model(), toy.three_task_counts()  # the class's example
        >>> posterior = Posterior.of_partition(counts, np.array([0, 0, 1]), gamma=1.0)
        >>> np.exp(posterior.cold_log_weights).round(4).tolist()  # |k| / (U + γ), then γ / (U + γ)
        [0.5, 0.25, 0.25]
        """
        n_clusters = int(partition.max()) + 1
        clusters = counts.group_by(partition, n_clusters)
        n_tasks = counts.n_groups
        sizes = np.bincount(partition, minlength=n_clusters)
        empty = np.zeros((1, *counts.value_counts.shape[1:]), dtype=counts.value_counts.dtype)
        return cls(
            component_counts=np.concatenate([clusters.value_counts, empty]),
            task_label_counts=counts.label_counts,
            indptr=np.arange(n_tasks + 1, dtype=np.int64),
            components=partition.astype(np.int64),
            log_weights=np.zeros(n_tasks),
            cold_label_counts=np.zeros(counts.label_counts.shape[1], dtype=np.int64),
            cold_components=np.arange(n_clusters + 1),
            cold_log_weights=np.log(np.append(sizes, gamma)) - np.log(n_tasks + gamma),
        )

    @classmethod
    def average(cls, posteriors: list[Posterior]) -> Posterior:
        """Equal-weight mixture of posteriors over the same tasks (e.g. one per sample).

        Each member's entries keep their own label counts. The cold start mixes every
        member's cold components; its label prior uses the members' mean cold label counts
        (identical for No-Sharing; for Complete-Sharing the pooled label counts vary between
        samples only through the imputed labels).

        Parameters
        ----------
        posteriors : list of Posterior
            Members with ``mix_joint=False`` (averages of normalised predictives).

        Examples
        --------
        >>> from clusterednb.examples import models as toy
        >>> model, counts = toy.colour_model(), toy.three_task_counts()  # the class's example
        >>> together = Posterior.of_partition(counts, np.array([0, 0, 0]), gamma=1.0)
        >>> apart = Posterior.of_partition(counts, np.array([0, 1, 2]), gamma=1.0)
        >>> both = Posterior.average([together, apart])
        >>> both.indptr.tolist(), np.exp(both.log_weights[:2]).tolist()
        ([0, 2, 4, 6], [0.5, 0.5])
        """
        if any(p.mix_joint for p in posteriors):
            raise CNBError("only posteriors with mix_joint=False can be averaged")
        log_share = -np.log(len(posteriors))
        shift = np.cumsum([0] + [p.component_counts.shape[0] for p in posteriors])
        task_of_entry, components, log_weights, labels = [], [], [], []
        for member, offset in zip(posteriors, shift[:-1], strict=False):
            task = np.repeat(np.arange(member.n_tasks), np.diff(member.indptr))
            task_of_entry.append(task)
            components.append(member.components + offset)
            log_weights.append(member.log_weights + log_share)
            labels.append(
                member.task_label_counts[task]
                if member.entry_label_counts is None
                else member.entry_label_counts
            )
        task = np.concatenate(task_of_entry)
        order = np.argsort(task, kind="stable")
        n_tasks = posteriors[0].n_tasks
        return cls(
            component_counts=np.concatenate([p.component_counts for p in posteriors]),
            task_label_counts=np.mean([p.task_label_counts for p in posteriors], axis=0),
            indptr=np.concatenate([[0], np.cumsum(np.bincount(task, minlength=n_tasks))]),
            components=np.concatenate(components)[order],
            log_weights=np.concatenate(log_weights)[order],
            cold_label_counts=np.mean([p.cold_label_counts for p in posteriors], axis=0),
            cold_components=np.concatenate(
                [p.cold_components + offset for p, offset in zip(posteriors, shift, strict=False)]
            ),
            cold_log_weights=np.concatenate([p.cold_log_weights for p in posteriors]) + log_share,
            entry_label_counts=np.concatenate(labels)[order],
        )

    @property
    def n_tasks(self) -> int:
        """Number of known tasks.

        Examples
        --------
        >>> from clusterednb.examples import inference as toy
        >>> toy.three_task_posterior().n_tasks
        3
        """
        return int(self.task_label_counts.shape[0])

    def predict_log_proba(
        self,
        model: ConjugateModel,
        X: np.ndarray,
        task_index: np.ndarray,
        cold_group: np.ndarray | None = None,
    ) -> np.ndarray:
        """Log P(y | x, D) for each row.

        Parameters
        ----------
        model : ConjugateModel
        X : ndarray of shape (n_rows, n_features)
            Category codes, -1 for missing.
        task_index : ndarray of shape (n_rows,)
            Known task of each row, -1 for a task not seen in training (cold start).
        cold_group : ndarray of shape (n_rows,), optional
            For cold rows, which new task each belongs to (any integers); the rows of one new
            task reweight the cold-start mixture by their likelihood under each component.
            Default: every cold row is a new task of its own.

        Returns
        -------
        ndarray of shape (n_rows, n_classes)

        Examples
        --------
        >>> from clusterednb.examples import models as toy
        >>> model, counts = toy.colour_model(), toy.three_task_counts()  # the class's example
        >>> posterior = Posterior.of_partition(counts, np.array([0, 0, 1]), gamma=1.0)
        >>> red_rows, tasks = np.array([[0], [0]]), np.array([0, 2])
        >>> proba = np.exp(posterior.predict_log_proba(model, red_rows, tasks))
        >>> bool(proba[0, 0] > 0.5 > proba[1, 0])  # red is class 0 for the first cluster only
        True
        """
        out = np.empty((X.shape[0], model.schema.n_classes))
        tables = (
            model.log_feature_table(self.component_counts)
            if self.component_counts.size <= _TABLE_BUDGET
            else None
        )
        known = task_index >= 0
        every_row = bool(known.all())
        known_rows = np.flatnonzero(known)  # index arrays: X may be a sparse matrix
        if known.any():
            if self.entry_label_counts is None:
                log_prior = model.log_label_prior(self.task_label_counts)
                prior_of_entry = np.repeat(np.arange(self.n_tasks), np.diff(self.indptr))
            else:
                log_prior = model.log_label_prior(self.entry_label_counts)
                prior_of_entry = np.arange(self.components.size)
            log_proba = mixture_log_proba(
                self,
                model,
                X if every_row else X[known_rows],
                task_index if every_row else task_index[known],
                self.indptr,
                self.components,
                self.log_weights,
                log_prior[prior_of_entry],
                self.mix_joint,
                tables,
            )
            if every_row:
                return log_proba
            out[known] = log_proba
        if not every_row:
            rows = np.flatnonzero(~known)
            group = np.arange(rows.size) if cold_group is None else cold_group[rows]
            out[rows] = cold_start_log_proba(self, model, X[rows], group, tables)
        return out

    # ------------------------------------------------------------------ plain data
    def to_arrays(self) -> dict[str, np.ndarray]:
        """The posterior as named arrays (for NPZ).

        Examples
        --------
        >>> from clusterednb.examples import inference as toy
        >>> posterior = toy.three_task_posterior()
        >>> again = Posterior.from_arrays(posterior.to_arrays())  # what a model file holds
        >>> bool(np.array_equal(again.component_counts, posterior.component_counts))
        True
        """
        return {
            name: np.asarray(getattr(self, name))
            for name in self.__dataclass_fields__
            if getattr(self, name) is not None
        }

    @classmethod
    def from_arrays(cls, arrays: dict[str, np.ndarray]) -> Posterior:
        """Inverse of :meth:`to_arrays`.

        Examples
        --------
        >>> from clusterednb.examples import inference as toy
        >>> Posterior.from_arrays(toy.three_task_posterior().to_arrays()).components.tolist()
        [0, 0, 1]
        """
        fields = {name: arrays[name] for name in cls.__dataclass_fields__ if name in arrays}
        if "mix_joint" in fields:
            fields["mix_joint"] = bool(fields["mix_joint"])
        return cls(**fields)

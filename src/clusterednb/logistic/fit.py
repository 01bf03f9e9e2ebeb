"""The encoded rows of :class:`~clusterednb.ClusteredLogisticRegression`: :class:`JointData`
holds them in the forms the fitting steps (:mod:`clusterednb.logistic.clusters`) read (the
hyperparameters are :class:`~clusterednb.logistic.settings.FitSettings`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cached_property

import numpy as np
from scipy import sparse

from clusterednb.logistic.clustering.joint_blocks import (
    JointLogisticBlocks,
    TaskExpansions,
)
from clusterednb.logistic.clustering.label_relevance import label_relevance
from clusterednb.logistic.clustering.shared_slopes import differing_dims
from clusterednb.logistic.clustering.task_expansions import (
    label_offsets,
    label_rows,
    one_hot_columns,
    one_hot_rows,
)
from clusterednb.logistic.documents import (
    latent_design,
    regression_design,
    task_value_counts,
    task_word_counts,
)
from clusterednb.logistic.settings import FitSettings, task_tempering

NUMBERS_BY_SLOPE = True
"""The partition's label score reads a numeric column by its number, one slope
(:func:`~clusterednb.logistic.clustering.task_expansions.label_rows`); False: by its bins'
one-hot, as before 2026-11-28 (the tests that rebuild a scenario of that score set it)."""


@dataclass(frozen=True)
class JointData:
    """Encoded training rows.

    Attributes
    ----------
    codes : ndarray of shape (n_rows, n_features), or sparse matrix of shape (n_rows, n_words)
        Feature codes (-1 missing), or documents' word counts (then ``offsets`` is
        ``[0, n_words]``: the vocabulary is one feature whose values are the words;
        :mod:`clusterednb.logistic.documents`).
    y : ndarray of shape (n_rows,)
        Class codes 0/1, -1 for an unlabelled row.
    task : ndarray of shape (n_rows,)
        Task positions.
    n_tasks : int
    offsets : ndarray of shape (n_features + 1,)
    numeric : ndarray of shape (n_rows, n_numeric)
        Standardised numbers that only the regressions read (none by default).
    numeric_features : ndarray of shape (n_numeric,), optional
        The feature each numeric column is the number of (its binned codes are that column
        of ``codes``).
    label_columns : ndarray of shape (n_features,), optional
        Bool: the features the label expansions and the regressions read (None: all;
        :meth:`reading`). The feature counts of the clustering read every feature.
    allowed_columns : ndarray of shape (n_features,), optional
        Bool: the only features any :meth:`reading` may read (None: all; :meth:`allowing`).

    Examples
    --------
    >>> data = JointData.from_codes(np.array([[0], [1], [0], [1], [1], [0]]),
    ...     np.array([1, 0, -1, 1, 0, 1]), np.array([0, 0, 1, 1, 2, 2]), 3, np.array([0, 2]))
    >>> data.rows_per_task.tolist(), data.labelled.tolist()
    ([2, 2, 2], [0, 1, 3, 4, 5])
    """

    codes: np.ndarray
    y: np.ndarray
    task: np.ndarray
    n_tasks: int
    offsets: np.ndarray
    numeric: np.ndarray
    numeric_features: np.ndarray | None = None
    label_columns: np.ndarray | None = None
    allowed_columns: np.ndarray | None = None

    @classmethod
    def from_codes(
        cls,
        codes: np.ndarray,
        y: np.ndarray,
        task: np.ndarray,
        n_tasks: int,
        offsets: np.ndarray,
        numeric: np.ndarray | None = None,
        numeric_features: np.ndarray | None = None,
    ) -> JointData:
        """Rows reordered by task (stable), so each task's labelled rows are contiguous.

        Examples
        --------
        Rows arrive in any order and are kept grouped by task:

        >>> data = JointData.from_codes(
        ...     np.array([[0], [1], [1]]), np.array([1, 0, 1]), np.array([1, 0, 1]), 2,
        ...     np.array([0, 2]),
        ... )
        >>> data.task.tolist(), data.codes[:, 0].tolist()
        ([0, 1, 1], [1, 0, 1])
        """
        order = np.argsort(task, kind="stable")
        numbers = np.zeros((codes.shape[0], 0)) if numeric is None else np.asarray(numeric)
        return cls(
            codes[order],
            y[order],
            task[order],
            int(n_tasks),
            np.asarray(offsets),
            numbers[order].astype(np.float64),
            None if numeric_features is None else np.asarray(numeric_features, dtype=np.int64),
        )

    def with_rows(
        self,
        codes: np.ndarray,
        y: np.ndarray,
        task: np.ndarray,
        n_tasks: int,
        numeric: np.ndarray,
    ) -> JointData:
        """These rows and more, each new row placed after its task's rows (what
        :meth:`from_codes` of all of them gives, by insertion instead of a sort of all rows).

        Examples
        --------
        >>> data = JointData.from_codes(np.array([[0], [1], [1]]), np.array([1, 0, 1]),
        ...                             np.array([0, 1, 1]), 2, np.array([0, 2]))
        >>> more = data.with_rows(np.array([[1], [0]]), np.array([0, 1]), np.array([2, 0]), 3,
        ...                       np.zeros((2, 0)))
        >>> more.task.tolist(), more.codes[:, 0].tolist(), more.n_tasks
        ([0, 0, 1, 1, 2], [0, 0, 1, 1, 1], 3)
        """
        order = np.argsort(task, kind="stable")
        at = np.searchsorted(self.task, task[order], side="right")
        return replace(
            self,
            codes=np.insert(self.codes, at, codes[order].astype(self.codes.dtype), axis=0),
            y=np.insert(self.y, at, y[order].astype(self.y.dtype)),
            task=np.insert(self.task, at, task[order].astype(self.task.dtype)),
            n_tasks=int(n_tasks),
            numeric=np.insert(
                self.numeric, at, np.asarray(numeric, dtype=np.float64)[order], axis=0
            ),
        )

    @property
    def documents(self) -> bool:
        """Whether the rows are documents (word counts) rather than feature codes.

        Examples
        --------
        >>> data = JointData.from_codes(sparse.csr_matrix([[1, 2], [0, 1]]), np.array([1, 0]),
        ...                             np.array([0, 1]), 2, np.array([0, 2]))
        >>> data.documents, data.value_counts.tolist()
        (True, [[1, 2], [0, 1]])
        """
        return sparse.issparse(self.codes)

    def design(self, rows: np.ndarray):
        """:func:`regression_design` of ``rows``.

        Examples
        --------
        >>> data = JointData.from_codes(np.array([[0], [1], [0], [1], [1], [0]]),
        ...     np.array([1, 0, -1, 1, 0, 1]), np.array([0, 0, 1, 1, 2, 2]), 3, np.array([0, 2]))
        >>> data.design(np.array([0, 2])).toarray().tolist()  # value one-hot, then task one-hot
        [[1.0, 0.0, 1.0, 0.0, 0.0], [1.0, 0.0, 0.0, 1.0, 0.0]]
        """
        codes, numeric = self._read_codes(self.codes[rows]), self.numeric[rows]
        if self.label_columns is not None and self.numeric_features is not None:
            numeric = numeric * self.label_columns[self.numeric_features]
        return regression_design(codes, self.offsets, self.task[rows], self.n_tasks, numeric)

    def reading(self, columns: np.ndarray | None) -> JointData:
        """These rows, their label expansions and regressions reading only the features
        ``columns`` (bool, shape (n_features,); None: all) of those allowed (:meth:`allowing`).
        The others' codes and numbers read as missing: the regressions give them no weight.

        Examples
        --------
        >>> data = JointData.from_codes(np.array([[0, 1], [1, 0]]), np.array([1, 0]),
        ...                             np.array([0, 1]), 2, np.array([0, 2, 4]))
        >>> data.reading(np.array([True, False])).design(np.array([0])).toarray().tolist()
        [[1.0, 0.0, 0.0, 0.0, 1.0, 0.0]]
        >>> data.allowing(np.array([False, True])).reading(None).label_columns.tolist()
        [False, True]
        """
        kept = None if columns is None else np.asarray(columns, dtype=bool)
        if self.allowed_columns is not None:
            kept = self.allowed_columns if kept is None else kept & self.allowed_columns
        if _same_columns(kept, self.label_columns):
            return self  # its caches (expansions, counts) kept
        return replace(self, label_columns=kept)

    def allowing(self, columns: np.ndarray) -> JointData:
        """These rows reading ``columns`` (bool, (n_features,)), and never more."""
        columns = np.asarray(columns, dtype=bool)
        return replace(self, label_columns=columns, allowed_columns=columns)

    def _read_codes(self, codes):
        """``codes`` of some rows with the features the regressions do not read missing."""
        if self.label_columns is None or self.documents:
            return codes
        return np.where(self.label_columns, codes, -1)

    def without_rows(self, rows: np.ndarray) -> JointData:
        """These data without ``rows`` (positions); the tasks keep their numbers.

        Examples
        --------
        >>> data = JointData.from_codes(np.array([[0], [1], [0], [1], [1], [0]]),
        ...     np.array([1, 0, -1, 1, 0, 1]), np.array([0, 0, 1, 1, 2, 2]), 3, np.array([0, 2]))
        >>> fewer = data.without_rows(np.array([1, 2]))
        >>> fewer.y.tolist(), fewer.task.tolist(), fewer.n_tasks
        ([1, 1, 0, 1], [0, 1, 2, 2], 3)
        """
        keep = np.ones(self.y.size, dtype=bool)
        keep[rows] = False
        return replace(
            self,
            codes=self.codes[keep],
            y=self.y[keep],
            task=self.task[keep],
            numeric=self.numeric[keep],
        )

    def of_tasks(self, tasks: np.ndarray) -> JointData:
        """The rows of ``tasks`` (sorted positions) only, the tasks renumbered 0, 1, ….

        Examples
        --------
        >>> data = JointData.from_codes(np.array([[0], [1], [0], [1], [1], [0]]),
        ...     np.array([1, 0, -1, 1, 0, 1]), np.array([0, 0, 1, 1, 2, 2]), 3, np.array([0, 2]))
        >>> two = data.of_tasks(np.array([0, 2]))
        >>> two.n_tasks, two.task.tolist(), two.y.tolist()
        (2, [0, 0, 1, 1], [1, 0, 0, 1])
        """
        position = np.full(self.n_tasks, -1)
        position[tasks] = np.arange(tasks.size)
        keep = position[self.task] >= 0
        return replace(
            self,
            codes=self.codes[keep],
            y=self.y[keep],
            task=position[self.task[keep]],
            n_tasks=int(tasks.size),
            numeric=self.numeric[keep],
        )

    def without_labels(self, rows: np.ndarray) -> JointData:
        """The same rows with the labels of ``rows`` (positions) hidden.

        Examples
        --------
        >>> data = JointData.from_codes(np.array([[0], [1], [0], [1], [1], [0]]),
        ...     np.array([1, 0, -1, 1, 0, 1]), np.array([0, 0, 1, 1, 2, 2]), 3, np.array([0, 2]))
        >>> data.without_labels(np.array([0, 1])).y.tolist()
        [-1, -1, -1, 1, 0, 1]
        """
        y = self.y.copy()
        y[rows] = -1
        return replace(self, y=y)

    @cached_property
    def value_counts(self) -> np.ndarray:
        """Feature-value counts per task over all rows, shape (n_tasks, n_values_total).

        Examples
        --------
        >>> data = JointData.from_codes(np.array([[0], [1], [0], [1], [1], [0]]),
        ...     np.array([1, 0, -1, 1, 0, 1]), np.array([0, 0, 1, 1, 2, 2]), 3, np.array([0, 2]))
        >>> data.value_counts.tolist()  # every row counts, labelled or not
        [[1, 1], [1, 1], [1, 1]]
        """
        if self.documents:
            return task_word_counts(self.codes, self.task, self.n_tasks)
        return task_value_counts(self.codes, self.task, self.n_tasks, self.offsets)

    @cached_property
    def rows_per_task(self) -> np.ndarray:
        """Rows of each task, labelled or not, shape (n_tasks,).

        Examples
        --------
        >>> data = JointData.from_codes(np.array([[0], [1], [0], [1], [1], [0]]),
        ...     np.array([1, 0, -1, 1, 0, 1]), np.array([0, 0, 1, 1, 2, 2]), 3, np.array([0, 2]))
        >>> data.rows_per_task.tolist()
        [2, 2, 2]
        """
        return np.bincount(self.task, minlength=self.n_tasks)

    @cached_property
    def labelled(self) -> np.ndarray:
        """Positions of the labelled rows (in task order).

        Examples
        --------
        >>> data = JointData.from_codes(np.array([[0], [1], [0], [1], [1], [0]]),
        ...     np.array([1, 0, -1, 1, 0, 1]), np.array([0, 0, 1, 1, 2, 2]), 3, np.array([0, 2]))
        >>> data.labelled.tolist()  # row 2 is unlabelled
        [0, 1, 3, 4, 5]
        """
        return np.flatnonzero(self.y >= 0)

    @cached_property
    def task_starts(self) -> np.ndarray:
        """Task ``u``'s labelled rows are ``labelled[task_starts[u]:task_starts[u + 1]]``.

        Examples
        --------
        >>> data = JointData.from_codes(np.array([[0], [1], [0], [1], [1], [0]]),
        ...     np.array([1, 0, -1, 1, 0, 1]), np.array([0, 0, 1, 1, 2, 2]), 3, np.array([0, 2]))
        >>> data.task_starts.tolist()  # task 1 has one labelled row
        [0, 2, 3, 5]
        """
        sizes = np.bincount(self.task[self.labelled], minlength=self.n_tasks)
        return np.concatenate([[0], np.cumsum(sizes)])

    @cached_property
    def _expansions(self) -> dict[tuple, TaskExpansions]:
        return {}

    def label_design(self) -> np.ndarray:
        """The label model's design of the labelled rows: one-hot features (of those read:
        :meth:`reading`; a numeric one as its standardised number, :attr:`label_numbered`) and
        an intercept, sparse (of documents: their coordinates on the documents' leading
        directions and an intercept, dense).

        Examples
        --------
        >>> data = JointData.from_codes(np.array([[0], [1], [0], [1], [1], [0]]),
        ...     np.array([1, 0, -1, 1, 0, 1]), np.array([0, 0, 1, 1, 2, 2]), 3, np.array([0, 2]))
        >>> data.label_design().shape  # 5 labelled rows; 2 values and an intercept
        (5, 3)
        """
        rows = self.labelled
        if self.documents:
            return latent_design(self.codes, rows)
        numbered = self.label_numbered
        if numbered is not None:
            numbers = self.numeric[rows]
            return label_rows(self.codes[rows], self.offsets, self.label_columns, numbers, numbered)
        if self.label_columns is None:
            return one_hot_rows(self.codes[rows], self.offsets)
        return one_hot_columns(self.codes[rows], self.offsets, self.label_columns)

    @property
    def label_numbered(self) -> np.ndarray | None:
        """The features the partition's label score reads by their number (its slope) rather
        than their bins, positions of shape (n_numeric,) in ``numeric``'s column order (None:
        none; :func:`~clusterednb.logistic.clustering.task_expansions.label_rows`).

        Examples
        --------
        >>> data = JointData.from_codes(np.array([[0, 1], [1, 0]]), np.array([1, 0]),
        ...     np.array([0, 1]), 2, np.array([0, 2, 4]), numeric=np.array([[0.5], [-0.5]]),
        ...     numeric_features=np.array([1]))
        >>> data.label_numbered.tolist(), data.label_offsets().tolist()
        ([1], [0, 2, 3])
        """
        if self.documents or self.numeric_features is None or self.numeric.shape[1] == 0:
            return None
        return self.numeric_features if NUMBERS_BY_SLOPE else None

    def label_offsets(self) -> np.ndarray:
        """Where each feature's weights start in :meth:`label_design`, shape (n_features + 1,)
        (:func:`~clusterednb.logistic.clustering.task_expansions.label_offsets`)."""
        return label_offsets(self.offsets, self.label_columns, self.label_numbered)

    def label_relevance_in(self, partition: np.ndarray, beta: float) -> np.ndarray:
        """Each feature's relevance to the label in the clusters of ``partition`` (n_tasks,),
        (n_features,); :func:`~clusterednb.logistic.clustering.label_relevance.label_relevance`.

        Examples
        --------
        >>> data = JointData.from_codes(np.array([[0], [1], [0], [1], [1], [0]]),
        ...     np.array([1, 0, -1, 1, 0, 1]), np.array([0, 0, 1, 1, 2, 2]), 3, np.array([0, 2]))
        >>> data.label_relevance_in(np.array([0, 0, 1]), 1.0).shape
        (1,)
        """
        rows, task = self.labelled, self.task[self.labelled]
        numbers = {"numbers": self.numeric[rows], "numbered": self.numeric_features, "task": task}
        return label_relevance(
            self.codes[rows], self.y[rows], partition[task], self.offsets, beta, **numbers
        )

    def expansions(self, precision: float, differing: np.ndarray | None = None) -> TaskExpansions:
        """Each task's label log-likelihood expanded at the pooled MAP (computed once per
        prior precision, and per ``differing``: bool (n_features,), the features the label
        model reads, None: those the regressions read; the tuning grid's settings share them).

        Examples
        --------
        >>> data = JointData.from_codes(np.array([[0], [1], [0], [1], [1], [0]]),
        ...     np.array([1, 0, -1, 1, 0, 1]), np.array([0, 0, 1, 1, 2, 2]), 3, np.array([0, 2]))
        >>> expansions = data.expansions(precision=1.0)
        >>> expansions.gradient.shape, expansions.hessian.shape  # 2 values and an intercept
        ((3, 3), (3, 3, 3))
        >>> data.expansions(1.0, np.array([False])).gradient.shape  # the intercept alone
        (3, 1)
        """
        key = (precision, None if differing is None else np.asarray(differing, bool).tobytes())
        if key not in self._expansions:
            read = self if differing is None else self.reading(self.read_of(differing))
            labels = self.y[self.labelled].astype(np.float64)
            self._expansions[key] = TaskExpansions.at_pooled_map(
                read.label_design(), labels, self.task_starts, precision
            )
        return self._expansions[key]

    def read_of(self, columns: np.ndarray) -> np.ndarray:
        """Of ``columns`` (bool, (n_features,)) those the regressions read too."""
        read = self.label_columns
        return np.asarray(columns if read is None else columns & read, dtype=bool)

    def blocks(
        self,
        settings: FitSettings,
        kept: np.ndarray | None = None,
        anchor: np.ndarray | None = None,
        differing: np.ndarray | None = None,
    ) -> JointLogisticBlocks:
        """The block scores of these rows under ``settings`` (fixed ``effective_rows``);
        ``kept`` (n_values_total,): 1 for the values of the features the scores keep, 0 for
        a shared one's (:mod:`~clusterednb.logistic.clustering.feature_relevance`);
        ``anchor`` (d,), where the label log-likelihoods are expanded (default: the pooled MAP
        of these rows; a shard of the tasks takes that of every shard); ``differing``
        (n_features,), bool: the features whose label weights differ between clusters, which
        alone the label score reads, at their own pooled MAP (at a given ``anchor`` the others
        are held there; default: all; :mod:`~clusterednb.logistic.clustering.shared_slopes`).

        Examples
        --------
        >>> data = JointData.from_codes(np.array([[0], [1], [0], [1], [1], [0]]),
        ...     np.array([1, 0, -1, 1, 0, 1]), np.array([0, 0, 1, 1, 2, 2]), 3, np.array([0, 2]))
        >>> blocks = data.blocks(FitSettings(effective_rows=1.0, floor=0.2))
        >>> blocks.value_counts.tolist()  # tempered: each task counts as 1 row
        [[0.5, 0.5], [0.5, 0.5], [0.5, 0.5]]
        """
        if anchor is None:
            expansions = self.expansions(settings.precision, differing)
        else:
            rows = self.labelled
            labels = self.y[rows].astype(np.float64)
            expansions = TaskExpansions.at_anchor(
                self.label_design(), labels, self.task_starts, anchor
            )
            if differing is not None:
                offsets = self.label_offsets()
                expansions = expansions.restricted(differing_dims(offsets, differing))
        return JointLogisticBlocks(
            self.value_counts if kept is None else self.value_counts * kept,
            self.offsets,
            expansions,
            beta=settings.beta,
            precision=settings.precision,
            task_weights=task_tempering(self.rows_per_task, float(settings.effective_rows)),
        )


def _same_columns(first: np.ndarray | None, second: np.ndarray | None) -> bool:
    """Whether two choices of columns (bool arrays, None: all) are the same arrays or both None."""
    if first is None or second is None:
        return first is None and second is None
    return bool(np.array_equal(first, second))

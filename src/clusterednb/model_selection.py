"""Cross-validation for multi-task data: folds within every task.

scikit-learn's ``GroupKFold`` with the task as the group holds out whole tasks, so it measures
only the cold start (users never seen). The everyday question — how well does the model
predict a known user's next request — needs folds *within* each task: every task's rows are
split by ``StratifiedKFold`` (its labels balanced across folds), and fold ``i`` of the whole
data is fold ``i`` of every task. Tasks with fewer rows of a class than folds are split as
evenly as their rows allow.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
from sklearn.model_selection import BaseCrossValidator, KFold, StratifiedKFold

from clusterednb.exceptions import DataError


class WithinTaskKFold(BaseCrossValidator):
    """K folds inside every task: each task's rows appear in training and in testing.

    Parameters
    ----------
    n_splits : int, default=5
    shuffle : bool, default=True
    random_state : int or None
        Seed of the shuffles (used only with ``shuffle=True``).

    Examples
    --------
    >>> import numpy as np
    >>> tasks = np.repeat(["ann", "bob"], 4)
    >>> y = np.array([0, 1, 0, 1, 0, 0, 1, 1])
    >>> folds = list(WithinTaskKFold(n_splits=2, random_state=0).split(y, y, groups=tasks))
    >>> [sorted(set(tasks[test].tolist())) for _, test in folds]
    [['ann', 'bob'], ['ann', 'bob']]
    """

    def __init__(
        self, n_splits: int = 5, shuffle: bool = True, random_state: int | None = None
    ) -> None:
        self.n_splits = n_splits
        self.shuffle = shuffle
        self.random_state = random_state

    def get_n_splits(self, X: Any = None, y: Any = None, groups: Any = None) -> int:
        """The number of folds.

        Examples
        --------
        >>> WithinTaskKFold(n_splits=3).get_n_splits()
        3
        """
        return self.n_splits

    def _iter_test_masks(
        self, X: Any = None, y: Any = None, groups: Any = None
    ) -> Iterator[np.ndarray]:
        if groups is None:
            raise DataError("WithinTaskKFold needs groups=tasks (the task id of every row)")
        groups = np.asarray(groups, dtype=object)
        y = np.asarray(y)
        fold_of = np.full(groups.size, -1, dtype=np.int64)
        seed = np.random.default_rng(self.random_state)
        for task in dict.fromkeys(groups.tolist()):
            rows = np.flatnonzero(groups == task)
            if rows.size < self.n_splits:
                raise DataError(
                    f"task {task!r} has {rows.size} rows, fewer than the {self.n_splits} folds"
                )
            state = int(seed.integers(2**31)) if self.shuffle else None
            labels = y[rows]
            _, counts = np.unique(labels, return_counts=True)
            splitter = (
                StratifiedKFold(self.n_splits, shuffle=self.shuffle, random_state=state)
                if counts.min() >= self.n_splits
                else KFold(self.n_splits, shuffle=self.shuffle, random_state=state)
            )
            for fold, (_, test) in enumerate(splitter.split(rows, labels)):
                fold_of[rows[test]] = fold
        for fold in range(self.n_splits):
            yield fold_of == fold

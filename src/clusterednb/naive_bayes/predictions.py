"""Prediction from a fitted posterior: encode the rows, then ask the
:class:`~clusterednb.inference.posterior.Posterior` for their predictive.

:class:`PredictsFromPosterior` is the prediction half of the estimator shell
(:class:`~clusterednb.naive_bayes.estimator.TaskNaiveBayes`): it reads the fitted ``posterior_``,
``observation_`` and held training data and nothing else, so a model's predictions are made
in one place whichever engine fitted it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from clusterednb.data.dataset import factorize_tasks
from clusterednb.estimation.decisions import check_fitted, check_new_tasks
from clusterednb.estimation.prediction_rows import prediction_rows
from clusterednb.estimation.training_table import split_tasks
from clusterednb.naive_bayes.training_data import Chunk


class PredictsFromPosterior:
    """``predict_log_proba`` and ``predict_proba`` of a fitted multi-task naive-Bayes model.

    The host class holds ``posterior_``, ``observation_``, ``task_column``, ``observation``,
    ``handle_unknown`` and ``n_words_``, and gives its training data by ``_held()``.

    Examples
    --------
    >>> from clusterednb import NoSharingNB
    >>> from clusterednb.examples import naive_bayes as toy
    >>> isinstance(NoSharingNB().fit(*toy.colour_rows()), PredictsFromPosterior)
    True
    """

    def predict_log_proba(self, X: Any, tasks: Any = None, new_tasks: str = "pooled") -> np.ndarray:
        """Log posterior predictive ``log P(y | x, D)``: shape (n_rows, n_classes) in
        ``classes_`` order; a task never seen in training gets the cold-start predictive.

        Parameters
        ----------
        X : DataFrame or array-like of shape (n_rows, n_features)
        tasks : array-like of shape (n_rows,), optional
            Each row's task (or ``task_column`` of ``X``).
        new_tasks : {"pooled", "each-row"}, default="pooled"
            Rows of a task never seen in training: passed together they are that task's data
            and choose its clusters together ("pooled"), or each row is predicted as if it
            were its task's only row ("each-row"), as a row-by-row classifier would.

        Examples
        --------
        >>> from clusterednb import NoSharingNB
        >>> from clusterednb.examples import naive_bayes as toy
        >>> model = NoSharingNB().fit(*toy.colour_rows())
        >>> log_proba = model.predict_log_proba([["red"]], ["ann"])
        >>> bool(np.isclose(np.logaddexp.reduce(log_proba[0]), 0.0))
        True
        """
        X_codes, task_index, cold_group = self._encode_for_prediction(X, tasks, new_tasks)
        return self.posterior_.predict_log_proba(self.observation_, X_codes, task_index, cold_group)

    def predict_proba(self, X: Any, tasks: Any = None, new_tasks: str = "pooled") -> np.ndarray:
        """Posterior predictive ``P(y | x, D)``; shape (n_rows, n_classes), rows sum to 1;
        ``new_tasks`` as in :meth:`predict_log_proba`.

        Examples
        --------
        >>> from clusterednb import NoSharingNB
        >>> from clusterednb.examples import naive_bayes as toy
        >>> model = NoSharingNB().fit(*toy.colour_rows())
        >>> proba = model.predict_proba([["red"], ["red"]], ["ann", "cy"])  # columns: no, yes
        >>> proba.round(3).tolist()  # ann: 2/5·1/3 : 3/5·3/4; cy: 2/5·2/3 : 3/5·1/4
        [[0.229, 0.771], [0.64, 0.36]]
        """
        if new_tasks == "pooled":  # a subclass's predict_log_proba(X, tasks) serves it
            return np.exp(self.predict_log_proba(X, tasks))
        return np.exp(self.predict_log_proba(X, tasks, new_tasks))

    def _encode_for_prediction(
        self, X: Any, tasks: Any, new_tasks: str = "pooled"
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The rows' value codes (n_rows, n_features), their tasks' positions among the fitted
        tasks (n_rows,; -1 for a new task) and each new task's cold-start group."""
        check_fitted(self, "posterior_")
        X, tasks = split_tasks(X, tasks, self.task_column)
        n_words = self.n_words_ if self.observation != "categorical" else 0
        return prediction_inputs(
            X,
            tasks,
            self._held(),
            self.observation,
            n_words,
            self.handle_unknown,
            type(self).__name__,
            new_tasks,
        )


def prediction_inputs(
    X: Any,
    tasks: Any,
    held: Chunk,
    observation: str,
    n_words: int,
    handle_unknown: str,
    who: str,
    new_tasks: str = "pooled",
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Encode rows to predict: feature codes (or a document–term matrix), each row's task
    position (-1: a task never seen) and, for unseen tasks, a cold-start group: one per
    distinct task (``new_tasks="pooled"``) or one per row (``"each-row"``).

    Examples
    --------
    >>> import pandas as pd
    >>> from clusterednb.naive_bayes.training_data import Context, rows_chunk
    >>> frame = pd.DataFrame({"room": ["a", "b", "a"]})
    >>> first = rows_chunk(frame, [1, 0, None], ["u", "u", "v"], Context(None, None, None),
    ...                    "warn", "demo")
    >>> codes, task, cold = prediction_inputs(pd.DataFrame({"room": ["b", "a"]}), ["v", "new"],
    ...                                       first, "categorical", 0, "warn", "demo")
    >>> codes.tolist(), task.tolist(), cold.tolist()
    ([[1], [0]], [1, -1], [-1, 0])
    >>> prediction_inputs(pd.DataFrame({"room": ["b", "a"]}), ["new", "new"], first,
    ...                   "categorical", 0, "warn", "demo", new_tasks="each-row")[2].tolist()
    [0, 1]
    """
    check_new_tasks(new_tasks)
    rows = prediction_rows(
        X,
        tasks,
        held.schema,
        held.task_ids,
        who,
        n_words=None if observation == "categorical" else n_words,
        handle_unknown=handle_unknown,
    )
    X_codes, task_values, task_index = rows.codes, rows.task_values, rows.task_index
    cold_group = np.full(task_index.size, -1, dtype=np.int64)
    cold = task_index < 0
    if cold.any():
        each_row = new_tasks == "each-row"
        cold_group[cold] = (
            np.arange(cold.sum()) if each_row else factorize_tasks(task_values[cold])[0]
        )
    return X_codes, task_index, cold_group

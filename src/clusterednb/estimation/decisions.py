"""Decisions and accuracy for any multi-task classifier that gives ``predict_proba(X, tasks)``.

:class:`BayesDecisions` turns posterior predictive probabilities into Bayes decisions under a
loss (:mod:`clusterednb.decision`) and scores them, the same way for every estimator of the
package.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from sklearn.base import ClassifierMixin

from clusterednb.data.values import as_vector
from clusterednb.decision import LossMatrix, as_loss_matrix, bayes_decision
from clusterednb.exceptions import CNBError, NotFittedError, check_choice


class BayesDecisions(ClassifierMixin):
    """``predict`` and ``score`` from ``predict_proba(X, tasks)`` and ``classes_``.

    Examples
    --------
    >>> import numpy as np
    >>> class Fixed(BayesDecisions):
    ...     classes_ = np.array(["no", "yes"])
    ...     def predict_proba(self, X, tasks=None):
    ...         return np.array([[0.7, 0.3], [0.2, 0.8]])
    >>> Fixed().predict([[0], [1]]).tolist()
    ['no', 'yes']
    >>> Fixed().predict([[0], [1]], loss=[[0, 1], [9, 0]]).tolist()  # missing a "yes" costs 9
    ['yes', 'yes']
    >>> Fixed().score([[0], [1]], ["no", None])  # unlabelled rows are not scored
    1.0
    """

    def predict(
        self, X: Any, tasks: Any = None, loss: LossMatrix | Any = None, new_tasks: str = "pooled"
    ) -> np.ndarray:
        """Bayes decisions, shape (n_rows,): the class of least posterior expected loss under
        ``loss`` (a :class:`~clusterednb.decision.LossMatrix` or an array in ``classes_``
        order; default 0-1 loss, the most probable class). ``new_tasks``: how rows of tasks
        never seen are predicted ("pooled" or "each-row", see ``predict_proba``).

        Examples
        --------
        A false "yes" costing five times a false "no" turns ann's 0.67 "yes" into a "no":

        >>> from clusterednb import CompleteSharingNB, LossMatrix
        >>> from clusterednb.examples import naive_bayes as toy
        >>> model = CompleteSharingNB().fit(*toy.colour_rows())
        >>> careful = LossMatrix.binary(cost_false_positive=5.0, cost_false_negative=1.0,
        ...                             pos_label="yes")
        >>> model.predict([["red"]], ["ann"]).tolist(), model.predict([["red"]], ["ann"], careful)
        (['yes'], array(['no'], dtype='<U3'))
        """
        # A classifier that only gives predict_proba(X, tasks) serves the default.
        pooled = new_tasks == "pooled"
        proba = self.predict_proba(X, tasks) if pooled else self.predict_proba(X, tasks, new_tasks)
        if loss is None:
            return self.classes_[np.argmax(proba, axis=1)]
        return self.classes_[bayes_decision(proba, as_loss_matrix(loss, self.classes_))]

    def score(self, X: Any, y: Any, tasks: Any = None, sample_weight: Any = None) -> float:
        """Mean accuracy of :meth:`predict` on labelled rows (``sample_weight`` is refused:
        the models count rows, and a differently weighted score would mislead).

        Examples
        --------
        >>> from clusterednb import CompleteSharingNB
        >>> from clusterednb.examples import naive_bayes as toy
        >>> X, y, tasks = toy.colour_rows()
        >>> CompleteSharingNB().fit(X, y, tasks).score(X, y, tasks)  # pooled: cy is wrong
        0.6666666666666666
        """
        refuse_sample_weight(sample_weight)
        y = as_vector(y)
        predicted = self.predict(X, tasks)
        labelled = ~pd.isna(y)
        return float(np.mean(predicted[labelled].astype(object) == y[labelled]))


def refuse_sample_weight(sample_weight: Any) -> None:
    """Refuse row weights with a clear error rather than ignore them: the models are fitted
    on counts of rows (docs/sklearn.md).

    Examples
    --------
    >>> refuse_sample_weight(None)
    >>> refuse_sample_weight([1.0, 2.0])
    Traceback (most recent call last):
    ...
    clusterednb.exceptions.CNBError: sample_weight is not supported: the models count rows; ...
    """
    if sample_weight is not None:
        raise CNBError(
            "sample_weight is not supported: the models count rows; repeat or drop rows "
            "instead of weighting them"
        )


NEW_TASKS = ("pooled", "each-row")
"""How rows of tasks never seen in training are predicted: a new task's rows passed together
are that task's data and choose its clusters together (``"pooled"``, the default: the Bayesian
answer when they are one person's rows), or every row is predicted as if it were its task's
only row (``"each-row"``: what a row-by-row classifier does)."""


def check_new_tasks(new_tasks: str) -> None:
    """Refuse a ``new_tasks`` that is not one of :data:`NEW_TASKS`.

    Examples
    --------
    >>> check_new_tasks("pooled")
    >>> check_new_tasks("each")
    Traceback (most recent call last):
    ...
    clusterednb.exceptions.CNBError: new_tasks ... ('pooled', 'each-row'), got 'each'
    """
    check_choice("new_tasks", new_tasks, NEW_TASKS)


def check_fitted(estimator: Any, attribute: str) -> None:
    """Raise :class:`~clusterednb.exceptions.NotFittedError` when ``estimator`` lacks the
    fitted ``attribute`` (every estimator of the package says it the same way).

    Examples
    --------
    >>> from clusterednb import NoSharingNB
    >>> check_fitted(NoSharingNB(), "posterior_")
    Traceback (most recent call last):
    ...
    clusterednb.exceptions.NotFittedError: this NoSharingNB is not fitted yet; call fit first
    """
    if not hasattr(estimator, attribute):
        raise NotFittedError(f"this {type(estimator).__name__} is not fitted yet; call fit first")


AUTO_JUDGED = "auto: judged (a column looked irrelevant)"
AUTO_HELD = "auto: the columns that looked irrelevant held shared, the others kept"
AUTO_NOT_JUDGED = "auto: not judged (no column that could move the clusters looked irrelevant)"
AUTO_RELEASED = "auto: none held (the columns that looked irrelevant separate the clusters)"
"""``fit_summary()["relevance"]`` of a fit with ``relevance="auto"``: judged (the
regression), held shared (naive Bayes: the screen's verdict, 1 or 0 a column), every column
the screen held released by its evidence on the clusters (naive Bayes), or neither."""


def relevance_summary(estimator: Any) -> dict[str, Any]:
    """``{"feature_relevance": {column: P(relevant to the clusters)}}`` of an estimator fitted
    with feature relevance, else ``{}``: what ``fit_summary`` adds for ``cnb fit``. An
    estimator that also judged the columns' relevance to the label adds
    ``"label_relevance"`` alike, ``"columns_left_out"``, the columns its regressions do
    not read, and ``"label_weights_shared"``, those whose label weights its partition's score
    held shared by every cluster, and where the label evidence fitted it again
    ``"columns_first_left_out"``, those its first fit left out; one whose screen held
    columns shared before judging the rest
    (:mod:`~clusterednb.inference.relevance_screen`) adds ``"columns_held_shared"`` (and
    ``"columns_released"``, those it held that the clusters' evidence then released), and
    ``"columns_designed"`` where it found columns every task holds alike (kept relevant).
    With ``relevance="auto"``, ``"relevance"`` says whether the columns were judged, or (naive
    Bayes) the screen's irrelevant columns held shared.

    Examples
    --------
    >>> import numpy as np
    >>> class Fitted:
    ...     feature_names_in_, feature_relevance_ = np.array(["a", "b"]), np.array([0.9, 0.0])
    >>> relevance_summary(Fitted()), relevance_summary(object())
    ({'feature_relevance': {'a': 0.9, 'b': 0.0}}, {})
    >>> class Quiet:
    ...     relevance = "auto"
    >>> relevance_summary(Quiet()) == {"relevance": AUTO_NOT_JUDGED}
    True
    """
    judged = hasattr(estimator, "feature_relevance_")
    summary = {}
    extras = getattr(getattr(estimator, "result_", None), "extras", {})
    released = extras.get("released")
    if getattr(estimator, "relevance", None) == "auto":
        said = AUTO_HELD if extras.get("screen_only") else AUTO_JUDGED
        quiet = AUTO_RELEASED if released is not None else AUTO_NOT_JUDGED
        summary["relevance"] = said if judged else quiet
    if released is not None:
        names = np.asarray(estimator.feature_names_in_)
        summary["columns_released"] = [str(name) for name in names[np.asarray(released, bool)]]
    if not judged:
        return summary
    names = estimator.feature_names_in_
    summary["feature_relevance"] = _by_name(names, estimator.feature_relevance_)
    if hasattr(estimator, "label_relevance_"):
        summary["label_relevance"] = _by_name(names, estimator.label_relevance_)
        summary["columns_left_out"] = [str(name) for name in estimator.columns_left_out_]
        shared = getattr(estimator, "label_weights_shared_", ())
        summary["label_weights_shared"] = [str(name) for name in shared]
    if hasattr(estimator, "columns_first_left_out_"):  # the label evidence fitted again
        first = estimator.columns_first_left_out_
        summary["columns_first_left_out"] = [str(name) for name in first]
    for key, entry in (("held_shared", "columns_held_shared"), ("designed", "columns_designed")):
        if extras.get(key) is not None:
            summary[entry] = [str(name) for name in names[np.asarray(extras[key], bool)]]
    return summary


def _by_name(names: np.ndarray, values: np.ndarray) -> dict[str, float]:
    return {str(n): float(v) for n, v in zip(names, values, strict=True)}

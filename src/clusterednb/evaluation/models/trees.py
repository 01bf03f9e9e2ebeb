"""The gradient-boosted trees a practitioner reaches for first, as baselines of the protocols:
scikit-learn's ``HistGradientBoostingClassifier`` and LightGBM (the optional extra
``[trees]``), each pooled over every task (``*-pooled``) and with the task id as a categorical
feature (``*-task``), with their default settings.

They see what the other models see, in the form trees take best: a discretised feature whose
raw values are kept (:func:`~clusterednb.evaluation.models.baselines.raw_column`) as its raw
number, every other feature as a category (unseen or missing: missing). The task id is a
category too; scikit-learn's trees take at most 254 categories a feature, so above that it is
passed as its code, a number (LightGBM takes any number of categories). On documents only
LightGBM runs (:func:`fit_predict_tree_documents`: the word counts as a sparse matrix).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from scipy import sparse

from clusterednb.evaluation.models.baselines import class_frequency, raw_column
from clusterednb.exceptions import CNBError, MissingExtraError

TREE_MODELS = ("hgb-pooled", "hgb-task", "lgbm-pooled", "lgbm-task")
"""The tree baselines by name."""
HGB_MAX_CATEGORIES = 254
"""The most categories scikit-learn's ``HistGradientBoostingClassifier`` takes in a feature."""


def tree_inputs(
    train: pd.DataFrame, test: pd.DataFrame, features: list[str], with_task: bool
) -> tuple[pd.DataFrame, pd.DataFrame, list[str]]:
    """The training and test tables as the trees read them, and the categorical columns.

    Categories are coded on the training rows (a test value never seen there is missing:
    NaN); raw numbers are kept as they are.

    Examples
    --------
    >>> train = pd.DataFrame({"task": ["a", "b"], "label": [1, 0], "colour": ["red", "blue"]})
    >>> test = pd.DataFrame({"task": ["a", "c"], "colour": ["green", "red"]})
    >>> X, Xt, categorical = tree_inputs(train, test, ["colour"], with_task=True)
    >>> Xt.to_dict("list"), categorical
    ({'colour': [nan, 1.0], 'task': [0.0, nan]}, ['colour', 'task'])
    """
    columns = [*features, "task"] if with_task else list(features)
    X, X_test, categorical = {}, {}, []
    for column in columns:
        raw = raw_column(column)
        if raw in train.columns:
            X[column] = train[raw].to_numpy(dtype=float)
            X_test[column] = test[raw].to_numpy(dtype=float)
            continue
        values = train[column].astype(str).where(train[column].notna())
        levels = pd.Index(sorted(values.dropna().unique()))
        X[column] = levels.get_indexer(values).astype(float)
        X[column][X[column] < 0] = np.nan
        coded = levels.get_indexer(test[column].astype(str).where(test[column].notna()))
        X_test[column] = np.where(coded >= 0, coded, np.nan).astype(float)
        categorical.append(column)
    return pd.DataFrame(X), pd.DataFrame(X_test), categorical


def fit_predict_trees(
    name: str, train: pd.DataFrame, test: pd.DataFrame, features: list[str], seed: int
) -> np.ndarray:
    """Train tree model ``name`` (one of :data:`TREE_MODELS`) on ``train`` and return
    ``P(y = 1)`` of each row of ``test``, shape (len(test),).

    Examples
    --------
    >>> from clusterednb.examples import evaluation as toy
    >>> train, test = toy.transfer_split()
    >>> p = fit_predict_trees("hgb-task", train, test, ["colour"], seed=0)
    >>> p.shape == (len(test),) and bool(((0 < p) & (p < 1)).all())
    True
    """
    y_train = train["label"].to_numpy()
    if (constant := class_frequency(y_train, len(test))) is not None:
        return constant
    with_task = name.endswith("-task")
    X, X_test, categorical = tree_inputs(train, test, features, with_task)
    if name.startswith("hgb-"):
        return _histogram_boosting(X, y_train, X_test, categorical, seed)
    return _lightgbm(X, y_train, X_test, categorical, seed)


def fit_predict_tree_documents(
    name: str,
    X_train: Any,
    y_train: np.ndarray,
    train_tasks: np.ndarray,
    X_test: Any,
    test_tasks: np.ndarray,
    seed: int,
) -> np.ndarray:
    """LightGBM on documents' word counts (sparse, as they are), with the task as a
    categorical column for ``lgbm-task``; ``P(y = 1)`` of each test document. scikit-learn's
    trees take no sparse matrix (a dense one of every word is gigabytes): ``hgb-*`` refuse.

    Examples
    --------
    >>> from scipy import sparse
    >>> X = sparse.csr_matrix(np.eye(2)[[0, 1] * 20])
    >>> y, tasks = np.array([1, 0] * 20), np.repeat(["a", "b"], 20)
    >>> p = fit_predict_tree_documents("lgbm-task", X, y, tasks, X[:2], tasks[:2], seed=0)
    >>> bool(p[0] > 0.5 > p[1])
    True
    """
    if name.startswith("hgb-"):
        raise CNBError(
            f"{name} reads tables: scikit-learn's trees take no sparse word counts "
            "(use lgbm-pooled or lgbm-task on documents)"
        )
    if (constant := class_frequency(y_train, X_test.shape[0])) is not None:
        return constant
    categorical: list[int] = []
    if name.endswith("-task"):
        levels = pd.Index(pd.unique(train_tasks))
        code = levels.get_indexer(train_tasks).astype(float)
        test_code = levels.get_indexer(test_tasks).astype(float)
        test_code[test_code < 0] = np.nan
        X_train = sparse.hstack([X_train, sparse.csr_matrix(code[:, None])]).tocsr()
        X_test = sparse.hstack([X_test, sparse.csr_matrix(test_code[:, None])]).tocsr()
        categorical = [X_train.shape[1] - 1]
    lightgbm = _lightgbm_module()
    model = lightgbm.LGBMClassifier(random_state=seed, verbose=-1, n_jobs=1)
    model.fit(X_train.astype(np.float64), y_train, categorical_feature=categorical or "auto")
    return model.predict_proba(X_test.astype(np.float64))[:, 1]


def _lightgbm_module() -> Any:
    try:
        import lightgbm
    except ImportError as error:
        raise MissingExtraError("the LightGBM baselines", "trees", "lightgbm") from error
    return lightgbm


def _histogram_boosting(
    X: pd.DataFrame, y: np.ndarray, X_test: pd.DataFrame, categorical: list[str], seed: int
) -> np.ndarray:
    from sklearn.ensemble import HistGradientBoostingClassifier

    kept = [c for c in categorical if X[c].nunique() <= HGB_MAX_CATEGORIES]
    mask = [column in kept for column in X.columns]
    model = HistGradientBoostingClassifier(
        categorical_features=mask if any(mask) else None, random_state=seed
    )
    return model.fit(X, y).predict_proba(X_test)[:, 1]


def _lightgbm(
    X: pd.DataFrame, y: np.ndarray, X_test: pd.DataFrame, categorical: list[str], seed: int
) -> np.ndarray:
    model = _lightgbm_module().LGBMClassifier(random_state=seed, verbose=-1, n_jobs=1)
    model.fit(X, y, categorical_feature=categorical or "auto")
    return model.predict_proba(X_test)[:, 1]

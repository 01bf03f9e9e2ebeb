"""Models by name for the protocols: the library's models and practitioners' baselines.

Every model is used through :func:`fit_predict`, which trains on one split and returns
``P(y = 1)`` for the target task's test rows. All models see the same (discretised) features.
The generative models live in :mod:`clusterednb.evaluation.models.generative`, the protocols on
documents in :mod:`clusterednb.evaluation.models.documents`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from sklearn.linear_model import LogisticRegression
from sklearn.preprocessing import OneHotEncoder

from clusterednb.evaluation.models.baselines import (
    class_frequency,
    one_hot_logistic,
    pooled_logistic_with_raw,
    raw_column,
)
from clusterednb.evaluation.models.cluster_weights import CLUSTER_WEIGHT_FLOOR, cluster_row_weights
from clusterednb.evaluation.models.collaborative import als, user_knn
from clusterednb.evaluation.models.documents import document_matrices, fit_predict_documents
from clusterednb.evaluation.models.generative import (
    GENERATIVE,
    fit_generative,
    fit_selecting,
    select_transductive,
    with_unlabelled,
)
from clusterednb.evaluation.models.learner_kinds import LEARNER_KINDS, learner_model
from clusterednb.evaluation.models.partial_pooling import (
    hierarchical_logistic,
    tuned_hierarchical_logistic,
)
from clusterednb.evaluation.models.trees import TREE_MODELS, fit_predict_trees
from clusterednb.exceptions import CNBError
from clusterednb.logistic.estimator import ClusteredLogisticRegression
from clusterednb.naive_bayes.transductive import transductive_coclustering

__all__ = [
    "BASELINES",
    "MODEL_NAMES",
    "check_models",
    "cluster_weighted_logistic",
    "clustered_logistic",
    "document_matrices",
    "fit_predict",
    "fit_predict_documents",
]

BASELINES = (
    "lr-task",
    "lr-pooled",
    "lr-pooled+raw",
    "lr-hier",
    "lr-hier-fixed",
    "cnb-lr",
    "cnb-logistic",
    "cnb-logistic+dev",
    "cnb-logistic+relevance",
    *LEARNER_KINDS,
    "user-knn",
    "als",
    *TREE_MODELS,
)
MODEL_NAMES = (*GENERATIVE, *BASELINES)


def check_models(names: tuple[str, ...]) -> None:
    """Raise :class:`CNBError` naming any unknown model.

    Examples
    --------
    >>> check_models(("lr-pooled", "cnb-gibbs"))
    >>> check_models(("lr-pooled", "random-forest"))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    clusterednb.exceptions.CNBError: unknown model(s) ['random-forest']; known: ['ns', ...]
    """
    unknown = [n for n in names if n not in MODEL_NAMES]
    if unknown:
        raise CNBError(f"unknown model(s) {unknown}; known: {list(MODEL_NAMES)}")


def fit_predict(
    name: str,
    train: pd.DataFrame,
    test: pd.DataFrame,
    features: list[str],
    seed: int,
    transductive: bool = False,
    text: str | None = None,
    documents: tuple[Any, Any] | None = None,
    n_bins: int | None = None,
) -> np.ndarray:
    """Train model ``name`` on ``train`` and return ``P(y = 1)`` for each row of ``test``.

    Parameters
    ----------
    train : DataFrame
        Labelled training rows (columns ``task``, ``label`` and the features).
    test : DataFrame
        Rows to predict (of any tasks).
    transductive : bool
        Generative models also see the test rows' features as unlabelled training rows.
        The discriminative baselines cannot use them and ignore them.
    text : str, optional
        Column of documents: see :func:`fit_predict_documents`.
    documents : (train matrix, test matrix), optional
        The split's document–term matrices from :func:`document_matrices`, when several
        models share one split (computed here otherwise).
    n_bins : int, optional
        The bins per continuous feature that the split was discretised with (default 5);
        ``cnb-logistic`` bins the raw values itself with as many.

    Returns
    -------
    ndarray of shape (len(test),)

    Examples
    --------
    Target ``ann`` has one training row (red, liked); her test rows are red and blue:

    >>> from clusterednb.examples import evaluation as toy
    >>> train, test = toy.transfer_split()
    >>> p_red, p_blue = fit_predict("cs", train, test, ["colour"], seed=0)
    >>> bool(p_red > p_blue)
    True
    """
    if text is not None:
        return fit_predict_documents(name, train, test, text, seed, documents, transductive)
    if name in GENERATIVE:
        if transductive and name.startswith("cnb-"):
            return select_transductive(name, train, test, features, seed)
        if transductive:
            train = with_unlabelled(train, test)
        model = fit_generative(name, train, features, seed)
        positive = list(model.classes_).index(1)
        if transductive and hasattr(model, "unlabelled_proba_"):
            # The sampler's Rao-Blackwellised label marginals of exactly these rows (appended
            # last); predict_proba would count each row's own imputed label a second time.
            return model.unlabelled_proba_[-len(test) :, positive]
        proba = model.predict_proba(test[features], test["task"].to_numpy())
        return proba[:, positive]
    if name == "lr-task":
        out = np.empty(len(test))
        for task, rows in test.groupby("task").indices.items():
            own = train[train["task"] == task]
            out[rows] = one_hot_logistic(
                own[features], own["label"].to_numpy(), test.iloc[rows][features]
            )
        return out
    if name == "lr-pooled":
        columns = [*features, "task"]
        return one_hot_logistic(
            train[columns].astype(str), train["label"].to_numpy(), test[columns].astype(str)
        )
    if name == "lr-pooled+raw":
        return pooled_logistic_with_raw(train, test, features)
    if name == "lr-hier":
        return tuned_hierarchical_logistic(train, test, features, seed)
    if name == "lr-hier-fixed":
        return hierarchical_logistic(train, test, features)
    if name == "cnb-lr":
        return cluster_weighted_logistic(train, test, features, seed, transductive=transductive)
    if name in ("cnb-logistic", "cnb-logistic+dev", "cnb-logistic+relevance"):
        scale = "auto" if name == "cnb-logistic+dev" else 0.0
        relevance = True if name == "cnb-logistic+relevance" else "auto"
        return clustered_logistic(
            train, test, features, seed, transductive, n_bins or 5, scale, relevance
        )
    if name in LEARNER_KINDS:
        return clustered_learner(train, test, features, seed, name, n_bins or 5)
    if name == "user-knn":
        return user_knn(train, test)
    if name == "als":
        return als(train, test, seed)
    if name in TREE_MODELS:
        return fit_predict_trees(name, train, test, features, seed)
    raise CNBError(f"unknown model {name!r}")


def cluster_weighted_logistic(
    train: pd.DataFrame,
    test: pd.DataFrame,
    features: list[str],
    seed: int,
    floor: float = CLUSTER_WEIGHT_FLOOR,
    transductive: bool = False,
) -> np.ndarray:
    """Pooled logistic regression whose rows count as much as their task resembles the target.

    Clustered NB (Gibbs) is fitted on the labelled training rows; for a target task ``v``,
    every row of task ``u`` gets the weight ``floor + (1 − floor) · P(u and v share a cluster
    | D)`` (``v``'s own rows weight 1), and the pooled one-hot regression of ``lr-pooled`` is
    fitted with those weights. Naive Bayes' predictions rank worse than a logistic
    regression's (correlated features are counted twice), but its clustering carries what a
    pooled model ignores: whose data to trust. A task never seen in training gets the
    unweighted pooled model. Transductively the target's unlabelled test rows choose among
    the clusters of the labelled fit (``transductive="select"``), and ``P(u and v share a
    cluster)`` is their selection's
    (:func:`clusterednb.naive_bayes.transductive.selected_coclustering`);
    the regression still sees labelled rows only. Returns ``P(y = 1)`` of each test row,
    shape (len(test),).

    Examples
    --------
    >>> from clusterednb.examples import evaluation as toy
    >>> train, test = toy.transfer_split()
    >>> p_red, p_blue = cluster_weighted_logistic(train, test, ["colour"], seed=0)
    >>> bool(p_red > p_blue)
    True
    """
    y_train = train["label"].to_numpy()
    if (constant := class_frequency(y_train, len(test))) is not None:
        return constant
    if transductive:
        clustered = fit_selecting("cnb-gibbs", train, test, features, seed)
    else:
        clustered = fit_generative("cnb-gibbs", train, features, seed)
    together = transductive_coclustering(clustered)
    task_ids = pd.Index(clustered.task_ids_)
    row_task = task_ids.get_indexer(train["task"])
    columns = [*features, "task"]
    encoder = OneHotEncoder(handle_unknown="ignore")
    design = encoder.fit_transform(train[columns].astype(str))
    out = np.empty(len(test))
    for target, rows in test.groupby("task").indices.items():
        weights = cluster_row_weights(together, row_task, task_ids.get_indexer([target])[0], floor)
        model = LogisticRegression(C=1.0, max_iter=1000)
        model.fit(design, y_train, sample_weight=weights)
        query = encoder.transform(test.iloc[rows][columns].astype(str))
        out[rows] = model.predict_proba(query)[:, 1]
    return out


def clustered_logistic(
    train: pd.DataFrame,
    test: pd.DataFrame,
    features: list[str],
    seed: int,
    transductive: bool = False,
    n_bins: int = 5,
    deviation_scale: float | str = 0.0,
    relevance: bool | str = "auto",
) -> np.ndarray:
    """:class:`~clusterednb.ClusteredLogisticRegression` (effective rows and floor chosen on the
    training tasks; ``cnb-logistic+dev`` chooses the tasks' deviation scale there too, with
    ``deviation_scale="auto"``; by default there are none; each column's relevance judged
    where a column looks irrelevant, the default ``relevance="auto"``, and always with
    ``cnb-logistic+relevance``, ``relevance=True``); transductively the
    test rows join the fit unlabelled, so their features help choose their task's cluster. A
    discretised feature whose raw values are kept (:func:`raw_column`) is passed raw, as a
    numeric column that the model bins into ``n_bins`` training quantiles and its regressions
    also read as a number. Returns ``P(y = 1)`` of each test row.

    Examples
    --------
    >>> from clusterednb.examples import evaluation as toy
    >>> train, test = toy.transfer_split()
    >>> p_red, p_blue = clustered_logistic(train, test, ["colour"], seed=0)
    >>> bool(p_red > p_blue)
    True
    """
    if transductive:
        train = with_unlabelled(train, test)
    numeric = [f for f in features if raw_column(f) in train.columns]
    model = ClusteredLogisticRegression(
        classes=[0, 1],
        handle_unknown="ignore",
        random_state=seed,
        numeric=numeric or None,
        n_bins=n_bins,
        deviation_scale=deviation_scale,
        relevance=relevance,
    )
    return _fit_predict_raw(model, train, test, features, numeric)


def clustered_learner(
    train: pd.DataFrame,
    test: pd.DataFrame,
    features: list[str],
    seed: int,
    name: str,
    n_bins: int = 5,
) -> np.ndarray:
    """:class:`~clusterednb.ClusteredLearner` or :class:`~clusterednb.ClusteredBoosting` of kind
    ``name`` (one of :data:`~clusterednb.evaluation.models.learner_kinds.LEARNER_KINDS`): the
    clustering of ``cnb-logistic`` with trees inside its clusters or started from its
    regressions (raw numbers as ``cnb-logistic`` reads them). Returns ``P(y = 1)`` of each test
    row.

    Examples
    --------
    >>> from clusterednb.examples import evaluation as toy
    >>> train, test = toy.transfer_split()
    >>> clustered_learner(train, test, ["colour"], 0, "cnb-hgb").shape == (len(test),)
    True
    """
    y_train = train["label"].to_numpy()
    if (constant := class_frequency(y_train, len(test))) is not None:
        return constant
    numeric = [f for f in features if raw_column(f) in train.columns]
    clustering = {"classes": [0, 1], "handle_unknown": "ignore", "numeric": numeric or None}
    model = learner_model(name, clustering | {"n_bins": n_bins}, seed)
    return _fit_predict_raw(model, train, test, features, numeric)


def _fit_predict_raw(
    model: Any, train: pd.DataFrame, test: pd.DataFrame, features: list[str], numeric: list[str]
) -> np.ndarray:
    """Fit ``model`` on ``train`` and return ``P(y = 1)`` of ``test``, a discretised feature
    whose raw values are kept (:func:`raw_column`) passed as its raw number."""

    def raw(frame: pd.DataFrame) -> pd.DataFrame:
        return frame[features].assign(**{f: frame[raw_column(f)] for f in numeric})

    model.fit(raw(train), train["label"].to_numpy(dtype=float), train["task"].to_numpy())
    return model.predict_proba(raw(test), test["task"].to_numpy())[:, 1]

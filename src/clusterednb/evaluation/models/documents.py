"""The protocols on documents: each split's vocabulary from its training documents only, and
every model that takes word counts (the multinomial event model for the naive-Bayes ones).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from scipy import sparse

from clusterednb.data.text import Vocabulary
from clusterednb.evaluation.models.baselines import sparse_logistic, with_task_one_hot
from clusterednb.evaluation.models.cluster_weights import cluster_weighted_documents
from clusterednb.evaluation.models.generative import GENERATIVE, make_generative
from clusterednb.evaluation.models.learner_kinds import learner_model
from clusterednb.evaluation.models.partial_pooling import TaskRows, augment, tuned_partial_pooling
from clusterednb.evaluation.models.trees import TREE_MODELS, fit_predict_tree_documents
from clusterednb.exceptions import CNBError
from clusterednb.inference.exact import MAX_EXACT_TASKS
from clusterednb.logistic.estimator import ClusteredLogisticRegression
from clusterednb.naive_bayes.transductive import transductive_coclustering

DOCUMENT_VOCABULARY = {"min_df": 2, "max_features": 20_000}
DOCUMENT_OBSERVATION = "multinomial"


def document_matrices(train: pd.DataFrame, test: pd.DataFrame, text: str) -> tuple[Any, Any]:
    """Word counts of the training and test documents over the TRAINING documents' words.

    Words in at least 2 training documents, the 20 000 most frequent.

    Examples
    --------
    >>> train = pd.DataFrame({"text": ["cheap pills now", "cheap flights", "team meeting"]})
    >>> test = pd.DataFrame({"text": ["cheap meeting room"]})
    >>> X_train, X_test = document_matrices(train, test, "text")
    >>> X_train.shape, X_test.toarray().tolist()  # "cheap" is the only word in two documents
    ((3, 1), [[1]])
    """
    vocabulary = Vocabulary(**DOCUMENT_VOCABULARY).fit(train[text].tolist())
    return vocabulary.transform(train[text].tolist()), vocabulary.transform(test[text].tolist())


def fit_predict_documents(
    name: str,
    train: pd.DataFrame,
    test: pd.DataFrame,
    text: str,
    seed: int,
    documents: tuple[Any, Any] | None = None,
    transductive: bool = False,
) -> np.ndarray:
    """``P(y = 1)`` for test documents (vocabulary from the training documents only).

    Generative models use the multinomial event model; the logistic regressions see the same
    word counts (plus the user one-hot for ``lr-pooled``; augmented per user for
    ``lr-hier``, its ``C`` and deviation scale tuned on the training tasks as on tables, and
    for ``lr-hier-fixed`` at ``C = s = 1``); ``cnb-lr`` weights ``lr-pooled``'s rows by a
    multinomial Clustered NB's co-clustering (exact enumeration up to 10 tasks, else Gibbs;
    :mod:`clusterednb.evaluation.models.cluster_weights`); ``cnb-logistic`` is
    :func:`clustered_logistic_documents`; ``cnb-lgbm`` its clustering with LightGBM inside the
    clusters, on the same word counts (:class:`~clusterednb.ClusteredLearner`), ``cnb-blend``
    both blended, ``cnb-boost`` one booster from its regressions
    (:class:`~clusterednb.ClusteredBoosting`).

    Transductively (``transductive=True``) the test documents join the fit of the clustered
    naive-Bayes models unlabelled and choose their task's cluster among those of the labelled
    documents (``transductive="select"``); ``cnb-lr`` weighs rows by that selection;
    ``cnb-logistic`` fits with them unlabelled (their words count in its clustering). The
    regressions, ``ns`` and ``cs`` do not learn from unlabelled documents and give their
    inductive predictions.

    Examples
    --------
    >>> train = pd.DataFrame({"task": ["ann", "ann", "bob", "bob"], "label": [1, 0, 1, 0],
    ...                       "text": ["cheap pills", "team lunch", "cheap pills", "team"]})
    >>> test = pd.DataFrame({"task": ["ann", "ann"], "text": ["cheap pills", "team"]})
    >>> p_spam, p_ham = fit_predict_documents("ns", train, test, "text", seed=0)
    >>> bool(p_spam > 0.5 > p_ham)
    True
    """
    X_train, X_test = documents or document_matrices(train, test, text)
    y_train = train["label"].to_numpy(dtype=int)
    tasks = train["task"].to_numpy()
    if name in GENERATIVE:
        model = make_generative(name, seed).set_params(observation=DOCUMENT_OBSERVATION)
        selects = transductive and name.startswith("cnb-")
        _fit_documents(model, X_train, y_train, tasks, (X_test, test) if selects else None)
        proba = model.predict_proba(X_test, test["task"].to_numpy())
        return proba[:, list(model.classes_).index(1)]
    if name == "lr-task":
        out = np.empty(len(test))
        for task, rows in test.groupby("task").indices.items():
            own = tasks == task
            out[rows] = sparse_logistic(X_train[own], y_train[own], X_test[rows])
        return out
    if name in ("lr-pooled", "lr-hier", "lr-hier-fixed"):
        task_ids = pd.Index(pd.unique(train["task"]))  # in order of appearance, as always
        train_task = task_ids.get_indexer(train["task"])
        test_task = task_ids.get_indexer(test["task"])
        if name == "lr-hier":
            return tuned_partial_pooling(
                TaskRows(X_train, train_task, y_train),
                TaskRows(X_test, test_task),
                task_ids.size,
                seed,
            )
        if name == "lr-hier-fixed":
            design = augment(X_train, train_task, task_ids.size, 1.0)
            test_design = augment(X_test, test_task, task_ids.size, 1.0)
        else:
            design = with_task_one_hot(X_train, train_task, task_ids.size)
            test_design = with_task_one_hot(X_test, test_task, task_ids.size)
        return sparse_logistic(design, y_train, test_design)
    if name == "cnb-lr":  # the clustering: exact when every partition can be enumerated
        n_tasks = train["task"].nunique()
        clustered = make_generative(
            "cnb-exact" if n_tasks <= MAX_EXACT_TASKS else "cnb-gibbs", seed
        )
        clustered.set_params(observation=DOCUMENT_OBSERVATION)
        _fit_documents(clustered, X_train, y_train, tasks, (X_test, test) if transductive else None)
        return cluster_weighted_documents(
            X_train,
            y_train,
            tasks,
            X_test,
            test["task"].to_numpy(),
            clustered.task_ids_,
            transductive_coclustering(clustered),
        )
    if name in ("cnb-logistic", "cnb-logistic+dev"):
        scale = "auto" if name == "cnb-logistic+dev" else 0.0
        return clustered_logistic_documents(
            X_train, y_train, tasks, X_test, test, seed, transductive, scale
        )
    if name in ("cnb-lgbm", "cnb-blend", "cnb-boost", "cnb-boost+auto"):
        clustering = {"observation": "multinomial", "classes": [0, 1]}
        model = learner_model(name, clustering, seed)
        model.fit(X_train, y_train, tasks)
        return model.predict_proba(X_test, test["task"].to_numpy())[:, 1]
    if name in TREE_MODELS:
        test_tasks = test["task"].to_numpy()
        return fit_predict_tree_documents(name, X_train, y_train, tasks, X_test, test_tasks, seed)
    raise CNBError(f"model {name!r} does not take documents")


def clustered_logistic_documents(
    X_train: Any,
    y_train: np.ndarray,
    tasks: np.ndarray,
    X_test: Any,
    test: pd.DataFrame,
    seed: int,
    transductive: bool = False,
    deviation_scale: float | str = 0.0,
) -> np.ndarray:
    """``cnb-logistic`` (``cnb-logistic+dev``: ``deviation_scale="auto"``) on word counts:
    :class:`~clusterednb.ClusteredLogisticRegression` with ``observation="multinomial"``
    (transductively the test documents join the fit unlabelled, so their words help choose their
    task's cluster); ``P(y = 1)`` of each test document.

    Examples
    --------
    >>> from scipy import sparse
    >>> X = sparse.csr_matrix(np.tile([[3, 0], [0, 3]], (4, 1)))
    >>> p1 = clustered_logistic_documents(X, np.tile([1, 0], 4), np.repeat(["a", "b"], 4),
    ...                                   X[:2], pd.DataFrame({"task": ["a", "a"]}), seed=0)
    >>> bool(p1[0] > 0.5 > p1[1])
    True
    """
    model = ClusteredLogisticRegression(
        observation="multinomial",
        classes=[0, 1],
        random_state=seed,
        deviation_scale=deviation_scale,
    )
    if transductive:
        model.fit(*_with_unlabelled(X_train, y_train, tasks, X_test, test))
    else:
        model.fit(X_train, y_train, tasks)
    return model.predict_proba(X_test, test["task"].to_numpy())[:, 1]


def _fit_documents(
    model: Any,
    X_train: Any,
    y_train: np.ndarray,
    tasks: np.ndarray,
    unlabelled: tuple[Any, pd.DataFrame] | None,
) -> None:
    """Fit ``model`` on the labelled documents, and with ``unlabelled`` = (matrix, test rows)
    also on those documents without labels, in ``transductive="select"`` mode."""
    if unlabelled is None:
        model.fit(X_train, y_train, tasks)
        return
    model.set_params(transductive="select").fit(
        *_with_unlabelled(X_train, y_train, tasks, *unlabelled)
    )


def _with_unlabelled(
    X_train: Any, y_train: np.ndarray, tasks: np.ndarray, X_test: Any, test: pd.DataFrame
) -> tuple[Any, np.ndarray, np.ndarray]:
    """The training documents followed by the test documents without labels (NaN): the
    matrix, labels and tasks a transductive fit reads."""
    return (
        sparse.vstack([X_train, X_test], format="csr"),
        np.concatenate([y_train.astype(float), np.full(X_test.shape[0], np.nan)]),
        np.concatenate([tasks, test["task"].to_numpy()]),
    )

"""Models by name for the protocols: the library's models and practitioners' baselines.

Every model is used through :func:`fit_predict`, which trains on one split and returns
``P(y = 1)`` for the target task's test rows. All models see the same (discretised) features.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
from sklearn.linear_model import LogisticRegression
from sklearn.preprocessing import OneHotEncoder

from clusterednb.clustered import ClusteredNB
from clusterednb.clustered_logistic import ClusteredLogisticRegression
from clusterednb.data.text import Vocabulary
from clusterednb.estimator import TaskNaiveBayes
from clusterednb.evaluation.baselines import (
    augment,
    class_frequency,
    hierarchical_logistic,
    one_hot_logistic,
    pooled_logistic_with_raw,
    raw_column,
    sparse_logistic,
    tuned_hierarchical_logistic,
    with_task_one_hot,
)
from clusterednb.evaluation.cluster_weights import (
    CLUSTER_WEIGHT_FLOOR,
    cluster_row_weights,
    cluster_weighted_documents,
)
from clusterednb.evaluation.collaborative import als, user_knn
from clusterednb.exceptions import CNBError
from clusterednb.inference.exact import MAX_EXACT_TASKS
from clusterednb.models import CompleteSharingNB, NoSharingNB
from clusterednb.prototype import PrototypeNB

RESEED_OFFSET = 7919


def gibbs_model(seed: int) -> ClusteredNB:
    """The harness's collapsed Gibbs sampler (100 sweeps, 30 of them burn-in) seeded by ``seed``.

    ``cnb-gibbs-reseeded`` is the same sampler on the same splits from the seed
    ``seed + RESEED_OFFSET``: its difference to ``cnb-gibbs`` is the Monte Carlo noise floor
    against which another engine's difference to Gibbs is judged.

    Examples
    --------
    >>> gibbs_model(3).get_params()["random_state"], gibbs_model(3).get_params()["n_sweeps"]
    (3, 100)
    """
    return ClusteredNB(
        inference="gibbs",
        n_sweeps=100,
        burn_in=30,
        random_state=seed,
        progress=False,
        handle_unknown="ignore",
    )


GENERATIVE: dict[str, Callable[[int], TaskNaiveBayes]] = {
    "ns": lambda seed: NoSharingNB(handle_unknown="ignore"),
    "cs": lambda seed: CompleteSharingNB(handle_unknown="ignore"),
    "cnb-bhc": lambda seed: ClusteredNB(inference="bhc", handle_unknown="ignore"),
    "prototype": lambda seed: PrototypeNB(
        n_samples=60, burn_in=20, random_state=seed, handle_unknown="ignore"
    ),
    "cnb-exact": lambda seed: ClusteredNB(inference="exact", handle_unknown="ignore"),
    "cnb-variational": lambda seed: ClusteredNB(
        inference="variational", random_state=seed, handle_unknown="ignore"
    ),
    "cnb-gibbs": lambda seed: gibbs_model(seed),
    "cnb-gibbs-reseeded": lambda seed: gibbs_model(seed + RESEED_OFFSET),
    "cnb-gibbs+sigmoid": lambda seed: gibbs_model(seed).set_params(calibration="sigmoid"),
    "cnb-bhc+sigmoid": lambda seed: ClusteredNB(
        inference="bhc", handle_unknown="ignore", calibration="sigmoid"
    ),
}
BASELINES = (
    "lr-task",
    "lr-pooled",
    "lr-pooled+raw",
    "lr-hier",
    "lr-hier-fixed",
    "cnb-lr",
    "cnb-logistic",
    "user-knn",
    "als",
)
MODEL_NAMES = (*GENERATIVE, *BASELINES)


HARNESS_ALPHA = "auto"


def make_generative(name: str, seed: int) -> TaskNaiveBayes:
    """The unfitted generative model ``name`` with binary classes declared and the label
    pseudo-counts chosen by the labels' evidence (``alpha="auto"``, since 2026-11-24: with
    ``α = 1`` a target with one label started from a label prior of 1/3 or 2/3).

    Examples
    --------
    >>> model = make_generative("cnb-variational", seed=3)
    >>> params = model.get_params()
    >>> params["classes"], params["random_state"], params["alpha"]
    ([0, 1], 3, 'auto')
    """
    return GENERATIVE[name](seed).set_params(classes=[0, 1], alpha=HARNESS_ALPHA)


def fit_generative(
    name: str, train: pd.DataFrame, features: list[str], seed: int
) -> TaskNaiveBayes:
    """Fit generative model ``name`` on ``train`` (a missing label marks an unlabelled row).

    Examples
    --------
    >>> from clusterednb import toy
    >>> train, _ = toy.transfer_split()
    >>> fit_generative("ns", train, ["colour"], seed=0).task_ids_.tolist()
    ['ann', 'bob', 'cy']
    """
    return make_generative(name, seed).fit(
        train[features], train["label"].to_numpy(dtype=float), train["task"].to_numpy()
    )


def with_unlabelled(train: pd.DataFrame, test: pd.DataFrame) -> pd.DataFrame:
    """The training rows followed by the test rows with their labels hidden (transductive).

    Examples
    --------
    >>> from clusterednb import toy
    >>> train, test = toy.transfer_split()
    >>> with_unlabelled(train, test)["label"].tolist()[-3:]
    [1.0, nan, nan]
    """
    return pd.concat([train, test.assign(label=np.nan)], ignore_index=True)


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

    >>> from clusterednb import toy
    >>> train, test = toy.transfer_split()
    >>> p_red, p_blue = fit_predict("cs", train, test, ["colour"], seed=0)
    >>> bool(p_red > p_blue)
    True
    """
    if text is not None:
        if transductive:
            raise CNBError("transductive fitting is not available for documents yet")
        return fit_predict_documents(name, train, test, text, seed, documents)
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
        return cluster_weighted_logistic(train, test, features, seed)
    if name == "cnb-logistic":
        return clustered_logistic(train, test, features, seed, transductive, n_bins or 5)
    if name == "user-knn":
        return user_knn(train, test)
    if name == "als":
        return als(train, test, seed)
    raise CNBError(f"unknown model {name!r}")


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
) -> np.ndarray:
    """``P(y = 1)`` for test documents (vocabulary from the training documents only).

    Generative models use the multinomial event model; the logistic regressions see the same
    word counts (plus the user one-hot for ``lr-pooled``; augmented per user for
    ``lr-hier``); ``cnb-lr`` weights ``lr-pooled``'s rows by a multinomial Clustered NB's
    co-clustering (exact enumeration up to 10 tasks, else Gibbs;
    :mod:`clusterednb.evaluation.cluster_weights`).

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
    if name in GENERATIVE:
        model = make_generative(name, seed).set_params(observation=DOCUMENT_OBSERVATION)
        model.fit(X_train, y_train, train["task"].to_numpy())
        proba = model.predict_proba(X_test, test["task"].to_numpy())
        return proba[:, list(model.classes_).index(1)]
    tasks = train["task"].to_numpy()
    if name == "lr-task":
        out = np.empty(len(test))
        for task, rows in test.groupby("task").indices.items():
            own = tasks == task
            out[rows] = sparse_logistic(X_train[own], y_train[own], X_test[rows])
        return out
    if name in ("lr-pooled", "lr-hier"):
        task_ids = pd.Index(pd.unique(train["task"]))
        train_task = task_ids.get_indexer(train["task"])
        test_task = task_ids.get_indexer(test["task"])
        if name == "lr-hier":
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
        clustered.set_params(observation=DOCUMENT_OBSERVATION).fit(X_train, y_train, tasks)
        return cluster_weighted_documents(
            X_train, y_train, tasks, X_test, test["task"].to_numpy(), clustered
        )
    raise CNBError(f"model {name!r} does not take documents")


def select_transductive(
    name: str,
    train: pd.DataFrame,
    test: pd.DataFrame,
    features: list[str],
    seed: int,
) -> np.ndarray:
    """Transductive prediction by selection: the clustered model ``name`` with
    ``transductive="select"`` (:mod:`clusterednb.transductive`), fitted on the training rows
    and the test rows unlabelled; the clusters come from the labelled rows, and each target's
    unlabelled test rows choose among them. Returns ``P(y = 1)`` of each test row.

    Examples
    --------
    >>> from clusterednb import toy
    >>> train, test = toy.transfer_split()
    >>> p_red, p_blue = select_transductive("cnb-exact", train, test, ["colour"], seed=0)
    >>> bool(p_red > p_blue)
    True
    """
    model = make_generative(name, seed).set_params(transductive="select")
    both = with_unlabelled(train, test)
    model.fit(both[features], both["label"].to_numpy(dtype=float), both["task"].to_numpy())
    proba = model.predict_proba(test[features], test["task"].to_numpy())
    return proba[:, list(model.classes_).index(1)]


def cluster_weighted_logistic(
    train: pd.DataFrame,
    test: pd.DataFrame,
    features: list[str],
    seed: int,
    floor: float = CLUSTER_WEIGHT_FLOOR,
) -> np.ndarray:
    """Pooled logistic regression whose rows count as much as their task resembles the target.

    Clustered NB (Gibbs) is fitted on the labelled training rows; for a target task ``v``,
    every row of task ``u`` gets the weight ``floor + (1 − floor) · P(u and v share a cluster
    | D)`` (``v``'s own rows weight 1), and the pooled one-hot regression of ``lr-pooled`` is
    fitted with those weights. Naive Bayes' predictions rank worse than a logistic
    regression's (correlated features are counted twice), but its clustering carries what a
    pooled model ignores: whose data to trust. A task never seen in training gets the
    unweighted pooled model. Returns ``P(y = 1)`` of each test row, shape (len(test),).

    Examples
    --------
    >>> from clusterednb import toy
    >>> train, test = toy.transfer_split()
    >>> p_red, p_blue = cluster_weighted_logistic(train, test, ["colour"], seed=0)
    >>> bool(p_red > p_blue)
    True
    """
    y_train = train["label"].to_numpy()
    if (constant := class_frequency(y_train, len(test))) is not None:
        return constant
    clustered = fit_generative("cnb-gibbs", train, features, seed)
    together = clustered.coclustering_
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
) -> np.ndarray:
    """:class:`~clusterednb.ClusteredLogisticRegression` (effective rows and floor chosen on the
    training tasks); transductively the test rows join the fit unlabelled, so their features
    help choose their task's cluster. A discretised feature whose raw values are kept
    (:func:`raw_column`) is passed raw, as a numeric column that the model bins into
    ``n_bins`` training quantiles and its regressions also read as a number. Returns
    ``P(y = 1)`` of each test row.

    Examples
    --------
    >>> from clusterednb import toy
    >>> train, test = toy.transfer_split()
    >>> p_red, p_blue = clustered_logistic(train, test, ["colour"], seed=0)
    >>> bool(p_red > p_blue)
    True
    """
    if transductive:
        train = with_unlabelled(train, test)
    numeric = [f for f in features if raw_column(f) in train.columns]

    def raw(frame: pd.DataFrame) -> pd.DataFrame:
        return frame[features].assign(**{f: frame[raw_column(f)] for f in numeric})

    model = ClusteredLogisticRegression(
        classes=[0, 1],
        handle_unknown="ignore",
        random_state=seed,
        numeric=numeric or None,
        n_bins=n_bins,
    )
    model.fit(raw(train), train["label"].to_numpy(dtype=float), train["task"].to_numpy())
    return model.predict_proba(raw(test), test["task"].to_numpy())[:, 1]

"""Models by name for the protocols: the library's models and practitioners' baselines.

Every model is used through :func:`fit_predict`, which trains on one split and returns
``P(y = 1)`` for the target task's test rows. All models see the same (discretised) features.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
from scipy import sparse
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import log_loss
from sklearn.preprocessing import OneHotEncoder

from clusterednb.clustered import ClusteredNB
from clusterednb.clustered_logistic import ClusteredLogisticRegression
from clusterednb.data.text import Vocabulary
from clusterednb.estimator import TaskNaiveBayes
from clusterednb.evaluation.collaborative import als, user_knn
from clusterednb.exceptions import CNBError
from clusterednb.models import CompleteSharingNB, NoSharingNB
from clusterednb.prototype import PrototypeNB

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
    "cnb-gibbs": lambda seed: ClusteredNB(
        inference="gibbs",
        n_sweeps=100,
        burn_in=30,
        random_state=seed,
        progress=False,
        handle_unknown="ignore",
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
HIER_GRID = tuple((C, s) for C in (0.1, 1.0, 10.0) for s in (0.3, 1.0, 3.0))
RAW_SUFFIX = "__raw"


def raw_column(feature: str) -> str:
    """The column holding a discretised feature's raw values (see ``lr-pooled+raw``)."""
    return f"{feature}{RAW_SUFFIX}"


CLUSTER_WEIGHT_FLOOR = 0.2
MODEL_NAMES = (*GENERATIVE, *BASELINES)


def make_generative(name: str, seed: int) -> TaskNaiveBayes:
    """The unfitted generative model ``name`` with binary classes declared."""
    return GENERATIVE[name](seed).set_params(classes=[0, 1])


def fit_generative(
    name: str, train: pd.DataFrame, features: list[str], seed: int
) -> TaskNaiveBayes:
    """Fit generative model ``name`` on ``train`` (a missing label marks an unlabelled row)."""
    return make_generative(name, seed).fit(
        train[features], train["label"].to_numpy(dtype=float), train["task"].to_numpy()
    )


def with_unlabelled(train: pd.DataFrame, test: pd.DataFrame) -> pd.DataFrame:
    """The training rows followed by the test rows with their labels hidden (transductive)."""
    return pd.concat([train, test.assign(label=np.nan)], ignore_index=True)


def check_models(names: tuple[str, ...]) -> None:
    """Raise :class:`CNBError` naming any unknown model."""
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

    Returns
    -------
    ndarray of shape (len(test),)
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
            out[rows] = _logistic(own[features], own["label"].to_numpy(), test.iloc[rows][features])
        return out
    if name == "lr-pooled":
        columns = [*features, "task"]
        return _logistic(
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
        return clustered_logistic(train, test, features, seed, transductive)
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
    ``lr-hier``).
    """
    X_train, X_test = documents or document_matrices(train, test, text)
    y_train = train["label"].to_numpy(dtype=int)
    if name in GENERATIVE:
        model = make_generative(name, seed).set_params(observation=DOCUMENT_OBSERVATION)
        model.fit(X_train, y_train, train["task"].to_numpy())
        proba = model.predict_proba(X_test, test["task"].to_numpy())
        return proba[:, list(model.classes_).index(1)]
    if name == "lr-task":
        out = np.empty(len(test))
        tasks = train["task"].to_numpy()
        for task, rows in test.groupby("task").indices.items():
            own = tasks == task
            out[rows] = _sparse_logistic(X_train[own], y_train[own], X_test[rows])
        return out
    if name in ("lr-pooled", "lr-hier"):
        task_ids = pd.Index(pd.unique(train["task"]))
        train_task = task_ids.get_indexer(train["task"])
        test_task = task_ids.get_indexer(test["task"])
        if name == "lr-hier":
            design = _augment(X_train, train_task, task_ids.size, 1.0)
            test_design = _augment(X_test, test_task, task_ids.size, 1.0)
        else:
            design = sparse.hstack([X_train, _one_hot(train_task, task_ids.size)]).tocsr()
            test_design = sparse.hstack([X_test, _one_hot(test_task, task_ids.size)]).tocsr()
        return _sparse_logistic(design, y_train, test_design)
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
    unlabelled test rows choose among them. Returns ``P(y = 1)`` of each test row."""
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
    """
    y_train = train["label"].to_numpy()
    if (constant := _class_frequency(y_train, len(test))) is not None:
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
        position = task_ids.get_indexer([target])[0]
        weights = np.ones(len(train))
        if position >= 0:
            weights = floor + (1.0 - floor) * together[position, row_task]
            weights[row_task == position] = 1.0
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
) -> np.ndarray:
    """:class:`~clusterednb.ClusteredLogisticRegression` (effective rows and floor chosen on the
    training tasks); transductively the test rows join the fit unlabelled, so their features
    help choose their task's cluster. Returns ``P(y = 1)`` of each test row."""
    if transductive:
        train = with_unlabelled(train, test)
    model = ClusteredLogisticRegression(classes=[0, 1], handle_unknown="ignore", random_state=seed)
    model.fit(train[features], train["label"].to_numpy(dtype=float), train["task"].to_numpy())
    return model.predict_proba(test[features], test["task"].to_numpy())[:, 1]


def pooled_logistic_with_raw(
    train: pd.DataFrame, test: pd.DataFrame, features: list[str]
) -> np.ndarray:
    """``lr-pooled`` with each continuous feature's raw value (standardised on the training
    rows) beside its one-hot bins; without continuous features it is ``lr-pooled``."""
    y_train = train["label"].to_numpy()
    if (constant := _class_frequency(y_train, len(test))) is not None:
        return constant
    raw = [raw_column(f) for f in features if raw_column(f) in train.columns]
    columns = [*features, "task"]
    encoder = OneHotEncoder(handle_unknown="ignore")
    design = encoder.fit_transform(train[columns].astype(str))
    query = encoder.transform(test[columns].astype(str))
    if raw:
        values = train[raw].to_numpy(dtype=float)
        centre, scale = np.nanmean(values, axis=0), np.nanstd(values, axis=0)
        scale[~(scale > 0)] = 1.0

        def standardised(frame: pd.DataFrame) -> np.ndarray:
            return np.nan_to_num((frame[raw].to_numpy(dtype=float) - centre) / scale)

        design = sparse.hstack([design, standardised(train)]).tocsr()
        query = sparse.hstack([query, standardised(test)]).tocsr()
    model = LogisticRegression(C=1.0, max_iter=1000)
    return model.fit(design, y_train).predict_proba(query)[:, 1]


def tuned_hierarchical_logistic(
    train: pd.DataFrame, test: pd.DataFrame, features: list[str], seed: int
) -> np.ndarray:
    """``lr-hier`` with ``C`` and the deviation scale chosen by inner validation on the
    training tasks: every training task with at least 4 labelled rows that is not a test
    task lends half of them (drawn with ``seed``); each pair of :data:`HIER_GRID` is fitted
    on the rest and scored by log-loss on them; the best is refitted on all training rows."""
    y_train = train["label"].to_numpy()
    if (constant := _class_frequency(y_train, len(test))) is not None:
        return constant
    rng = np.random.default_rng([seed, 7])
    held = []
    test_tasks = set(pd.unique(test["task"]).tolist())
    for task, rows in train.groupby("task").indices.items():
        if task not in test_tasks and rows.size >= 4:
            held.append(rng.choice(rows, size=rows.size // 2, replace=False))
    best = (1.0, 1.0)
    if held:
        held_rows = np.sort(np.concatenate(held))
        inner_train = train.drop(train.index[held_rows])
        inner_test = train.iloc[held_rows]
        truth = inner_test["label"].to_numpy()
        if np.unique(truth).size == 2 and np.unique(inner_train["label"]).size == 2:
            losses = {}
            for C, scale in HIER_GRID:
                p1 = hierarchical_logistic(inner_train, inner_test, features, C, scale)
                losses[(C, scale)] = log_loss(truth, np.column_stack([1 - p1, p1]), labels=[0, 1])
            best = min(losses, key=losses.__getitem__)
    return hierarchical_logistic(train, test, features, *best)


def _class_frequency(y_train: np.ndarray, n_test: int) -> np.ndarray | None:
    """With one class only, the add-one frequency of class 1 for every test row; else None."""
    if np.unique(y_train).size >= 2:
        return None
    return np.full(n_test, (y_train.sum() + 1.0) / (y_train.size + 2.0))


def _one_hot(index: np.ndarray, size: int) -> sparse.csr_matrix:
    known = index >= 0
    return sparse.csr_matrix(
        (np.ones(known.sum()), (np.flatnonzero(known), index[known])), shape=(index.size, size)
    )


def _sparse_logistic(X_train: Any, y_train: np.ndarray, X_test: Any) -> np.ndarray:
    """Logistic regression on sparse counts; one class only: its add-one frequency."""
    if (constant := _class_frequency(y_train, X_test.shape[0])) is not None:
        return constant
    model = LogisticRegression(C=1.0, max_iter=2000)
    return model.fit(X_train, y_train).predict_proba(X_test)[:, 1]


def hierarchical_logistic(
    train: pd.DataFrame,
    test: pd.DataFrame,
    features: list[str],
    C: float = 1.0,
    deviation_scale: float = 1.0,
) -> np.ndarray:
    """Partial-pooling logistic regression: shared weights plus each task's deviations.

    ``logit P(y = 1 | x, u) = b + (w + δ_u) · z(x) + c_u`` with ``z`` the one-hot features.
    The MAP fit under ``w ~ N(0, C I)``, ``(δ_u, c_u) ~ N(0, s² C I)`` is an L2-penalised
    logistic regression on the augmented design ``[z, s · z ⊗ e_u, s · e_u]`` (Daumé's
    feature augmentation), fitted by scikit-learn; ``s = deviation_scale``. A task with no
    training rows gets the shared part only. It is the point-estimate counterpart of a
    mixed-effects logistic regression with random intercepts and slopes (statsmodels'
    ``BinomialBayesMixedGLM`` took 260 s per landmine split; this takes well under 1 s).

    Returns
    -------
    ndarray of shape (len(test),)
        ``P(y = 1)`` of each test row.
    """
    y_train = train["label"].to_numpy()
    if (constant := _class_frequency(y_train, len(test))) is not None:
        return constant
    encoder = OneHotEncoder(handle_unknown="ignore")
    shared_train = encoder.fit_transform(train[features].astype(str))
    shared_test = encoder.transform(test[features].astype(str))
    task_ids = pd.Index(pd.unique(train["task"]))
    model = LogisticRegression(C=C, max_iter=2000)
    model.fit(
        _augment(shared_train, task_ids.get_indexer(train["task"]), task_ids.size, deviation_scale),
        y_train,
    )
    design = _augment(
        shared_test, task_ids.get_indexer(test["task"]), task_ids.size, deviation_scale
    )
    return model.predict_proba(design)[:, 1]


def _augment(
    shared: sparse.spmatrix, task: np.ndarray, n_tasks: int, scale: float
) -> sparse.csr_matrix:
    """``[z, s · z ⊗ e_u, s · e_u]`` as a sparse matrix; rows of unknown tasks (-1) get zeros."""
    with_bias = sparse.hstack([shared, np.ones((shared.shape[0], 1))]).tocoo()
    width = with_bias.shape[1]
    known = task[with_bias.row] >= 0
    own = sparse.csr_matrix(
        (
            scale * with_bias.data[known],
            (with_bias.row[known], task[with_bias.row[known]] * width + with_bias.col[known]),
        ),
        shape=(shared.shape[0], n_tasks * width),
    )
    return sparse.hstack([shared, own]).tocsr()


def _logistic(X_train: pd.DataFrame, y_train: np.ndarray, X_test: pd.DataFrame) -> np.ndarray:
    """One-hot logistic regression; with one class only, the add-one class frequency."""
    if (constant := _class_frequency(y_train, len(X_test))) is not None:
        return constant
    encoder = OneHotEncoder(handle_unknown="ignore")
    model = LogisticRegression(C=1.0, max_iter=1000)
    model.fit(encoder.fit_transform(X_train.astype(str)), y_train)
    return model.predict_proba(encoder.transform(X_test.astype(str)))[:, 1]

"""Models by name for the protocols: the library's models and practitioners' baselines.

Every model is used through :func:`fit_predict`, which trains on one split and returns
``P(y = 1)`` for the target task's test rows. All models see the same (discretised) features.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd
from sklearn.linear_model import LogisticRegression
from sklearn.preprocessing import OneHotEncoder

from clusterednb.clustered import ClusteredNB
from clusterednb.exceptions import CNBError
from clusterednb.models import CompleteSharingNB, NoSharingNB, TaskNaiveBayes
from clusterednb.prototype import PrototypeNB

GENERATIVE: dict[str, Callable[[int], TaskNaiveBayes]] = {
    "ns": lambda seed: NoSharingNB(handle_unknown="ignore"),
    "cs": lambda seed: CompleteSharingNB(handle_unknown="ignore"),
    "cnb-bhc": lambda seed: ClusteredNB(inference="bhc", handle_unknown="ignore"),
    "prototype": lambda seed: PrototypeNB(
        n_samples=60, burn_in=20, random_state=seed, handle_unknown="ignore"
    ),
    "cnb-exact": lambda seed: ClusteredNB(inference="exact", handle_unknown="ignore"),
    "cnb-gibbs": lambda seed: ClusteredNB(
        inference="gibbs",
        n_sweeps=100,
        burn_in=30,
        random_state=seed,
        progress=False,
        handle_unknown="ignore",
    ),
}
BASELINES = ("lr-task", "lr-pooled")
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

    Returns
    -------
    ndarray of shape (len(test),)
    """
    if name in GENERATIVE:
        if transductive:
            train = pd.concat([train, test.assign(label=np.nan)], ignore_index=True)
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
    raise CNBError(f"unknown model {name!r}")


def _logistic(X_train: pd.DataFrame, y_train: np.ndarray, X_test: pd.DataFrame) -> np.ndarray:
    """One-hot logistic regression; with one class only, the add-one class frequency."""
    if np.unique(y_train).size < 2:
        return np.full(len(X_test), (y_train.sum() + 1.0) / (y_train.size + 2.0))
    encoder = OneHotEncoder(handle_unknown="ignore")
    model = LogisticRegression(C=1.0, max_iter=1000)
    model.fit(encoder.fit_transform(X_train.astype(str)), y_train)
    return model.predict_proba(encoder.transform(X_test.astype(str)))[:, 1]

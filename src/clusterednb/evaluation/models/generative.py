"""The harness's generative models by name: naive-Bayes models with binary classes and the
label pseudo-counts chosen by the labels' evidence, fitted on one split's rows.

Transductively (:func:`select_transductive`) the clustered ones fit their clusters on the
labelled rows and let each target's unlabelled test rows choose among them.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd

from clusterednb.naive_bayes.clustered import ClusteredNB
from clusterednb.naive_bayes.estimator import TaskNaiveBayes
from clusterednb.naive_bayes.prototype import PrototypeNB
from clusterednb.naive_bayes.sharing import CompleteSharingNB, NoSharingNB

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
    "cnb-exact+relevance": lambda seed: ClusteredNB(
        inference="exact", relevance=True, handle_unknown="ignore"
    ),
    "cnb-variational": lambda seed: ClusteredNB(
        inference="variational", random_state=seed, handle_unknown="ignore"
    ),
    "cnb-gibbs": lambda seed: gibbs_model(seed),
    "cnb-gibbs-reseeded": lambda seed: gibbs_model(seed + RESEED_OFFSET),
    "cnb-gibbs+sigmoid": lambda seed: gibbs_model(seed).set_params(calibration="sigmoid"),
    "cnb-bhc+sigmoid": lambda seed: ClusteredNB(
        inference="bhc", handle_unknown="ignore", calibration="sigmoid"
    ),
    "cnb-gibbs+tau": lambda seed: gibbs_model(seed).set_params(transductive_temperature="auto"),
    "cnb-gibbs+relevance": lambda seed: gibbs_model(seed).set_params(relevance=True),
    "cnb-variational+relevance": lambda seed: ClusteredNB(
        inference="variational", relevance=True, random_state=seed, handle_unknown="ignore"
    ),
}
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
    >>> from clusterednb.examples import evaluation as toy
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
    >>> from clusterednb.examples import evaluation as toy
    >>> train, test = toy.transfer_split()
    >>> with_unlabelled(train, test)["label"].tolist()[-3:]
    [1.0, nan, nan]
    """
    return pd.concat([train, test.assign(label=np.nan)], ignore_index=True)


def fit_selecting(
    name: str, train: pd.DataFrame, test: pd.DataFrame, features: list[str], seed: int
) -> ClusteredNB:
    """The clustered model ``name`` with ``transductive="select"``, fitted on the training
    rows and the test rows unlabelled (the clusters come from the labelled rows).

    Examples
    --------
    >>> from clusterednb.examples import evaluation as toy
    >>> train, test = toy.transfer_split()
    >>> model = fit_selecting("cnb-exact", train, test, ["colour"], seed=0)
    >>> model.unlabelled_X_.shape[0] == len(test)  # the test rows, unlabelled
    True
    """
    model = make_generative(name, seed).set_params(transductive="select")
    both = with_unlabelled(train, test)
    return model.fit(both[features], both["label"].to_numpy(dtype=float), both["task"].to_numpy())


def select_transductive(
    name: str,
    train: pd.DataFrame,
    test: pd.DataFrame,
    features: list[str],
    seed: int,
) -> np.ndarray:
    """Transductive prediction by selection: the clustered model ``name`` with
    ``transductive="select"`` (:mod:`clusterednb.naive_bayes.transductive`), fitted on the training
    rows
    and the test rows unlabelled; the clusters come from the labelled rows, and each target's
    unlabelled test rows choose among them. Returns ``P(y = 1)`` of each test row.

    Examples
    --------
    >>> from clusterednb.examples import evaluation as toy
    >>> train, test = toy.transfer_split()
    >>> p_red, p_blue = select_transductive("cnb-exact", train, test, ["colour"], seed=0)
    >>> bool(p_red > p_blue)
    True
    """
    model = fit_selecting(name, train, test, features, seed)
    proba = model.predict_proba(test[features], test["task"].to_numpy())
    return proba[:, list(model.classes_).index(1)]

"""The estimator each ``--kind`` of ``cnb fit`` and ``cnb evidence`` stands for."""

from __future__ import annotations

import argparse
from typing import Any

import numpy as np
import pandas as pd

from clusterednb.data.discretize import binned_schema_of, decimal_columns
from clusterednb.exceptions import CNBError
from clusterednb.naive_bayes.clustered import ClusteredNB
from clusterednb.naive_bayes.estimator import TaskNaiveBayes
from clusterednb.naive_bayes.prototype import PrototypeNB
from clusterednb.naive_bayes.sharing import CompleteSharingNB, NoSharingNB

LEARNER_KINDS = ("cnb-lgbm", "cnb-blend", "cnb-boost", "cnb-boost+auto")
"""The ``cnb fit`` kinds with LightGBM: a :class:`~clusterednb.ClusteredLearner` or a
:class:`~clusterednb.ClusteredBoosting`."""


def make_model(name: str, args: argparse.Namespace) -> TaskNaiveBayes | Any:
    """The estimator a model name stands for, with the command's hyperparameters.

    Examples
    --------
    >>> from clusterednb.cli.parser import build_parser
    >>> args = build_parser().parse_args(["fit", "data.csv", "--task", "user", "--label",
    ...                                   "liked", "--kind", "cnb-bhc", "-o", "model.cnb"])
    >>> model = make_model(args.kind, args)
    >>> type(model).__name__, model.inference, model.gamma
    ('ClusteredNB', 'bhc', 1.0)
    """
    if name in ("cnb-logistic", *LEARNER_KINDS):
        return _clustered_logistic(args, name)
    common = {"alpha": args.alpha, "beta": args.beta, "random_state": args.seed}
    semi = getattr(args, "semi_supervised", None)
    if semi is not None:
        common["semi_supervised"] = False if semi == "off" else semi
    transductive = getattr(args, "transductive", None)
    calibration = getattr(args, "calibration", None)
    for flag, value in (("--transductive", transductive), ("--calibration", calibration)):
        if value is not None and not name.startswith("cnb-"):
            raise CNBError(f"{flag} needs a clustered kind (cnb-...), got --kind {name}")
    relevance = getattr(args, "relevance", None)
    _check_relevance_kind(name, relevance)
    if name == "ns":
        return NoSharingNB(**common)
    if name == "cs":
        return CompleteSharingNB(**common)
    if name == "prototype":
        return PrototypeNB(**common)
    inference = name.removeprefix("cnb-")
    if transductive is not None:
        common["transductive"] = transductive
        common["transductive_temperature"] = args.transductive_temperature
    if calibration is not None:
        common["calibration"] = calibration
    if relevance is not None:
        common["relevance"] = relevance
    return ClusteredNB(inference=inference, gamma=args.gamma, **common)


def _check_relevance_kind(name: str, relevance: bool | None) -> None:
    """``--relevance`` needs a model that judges the columns; ``--no-relevance`` any clustered
    naive Bayes kind too (their default screens the columns)."""
    judging = ("cnb-gibbs", "cnb-variational")
    if relevance is None or name in judging or (not relevance and name.startswith("cnb-")):
        return
    if relevance:
        raise CNBError(
            "--relevance needs --kind cnb-gibbs, cnb-variational, cnb-logistic, cnb-lgbm, "
            "cnb-blend, cnb-boost or cnb-boost+auto (the models that judge each column's "
            f"relevance to the clusters), got --kind {name}"
        )
    raise CNBError(
        f"--no-relevance needs a clustered kind (cnb-...), got --kind {name}, which reads "
        "every column for every task alike"
    )


def with_bins(model: Any, kind: str, X: pd.DataFrame, y: np.ndarray, n_bins: int) -> None:
    """``cnb fit --bins N``: every decimal column of ``X`` binned into ``n_bins`` training
    quantiles (the logistic kinds also read its raw values; the naive-Bayes kinds its bins
    only), set on ``model``.

    Examples
    --------
    >>> from clusterednb import NoSharingNB
    >>> model = NoSharingNB()
    >>> with_bins(model, "ns", pd.DataFrame({"hour": [8.5, 9.25, 13.75]}), np.array([0, 1, 1]), 2)
    >>> len(model.schema.categories[0])  # two bins
    2
    """
    numeric = decimal_columns(X) or None
    if kind == "cnb-logistic":
        model.set_params(numeric=numeric, n_bins=n_bins)
    elif kind in LEARNER_KINDS:
        clustering = {"numeric": numeric, "n_bins": n_bins}
        model.set_params(clustering_params=(model.clustering_params or {}) | clustering)
    else:
        model.set_params(schema=binned_schema_of(X, y, n_bins))


def _clustered_logistic(args: argparse.Namespace, name: str = "cnb-logistic") -> Any:
    """``cnb-logistic``: :class:`~clusterednb.ClusteredLogisticRegression`; ``cnb-lgbm``: its
    clustering with LightGBM inside the clusters (:class:`~clusterednb.ClusteredLearner`; a
    model file keeps LightGBM's own text model); ``cnb-blend``: both, blended in log-odds by a
    share chosen on held-out rows; ``cnb-boost``: one LightGBM booster started from the
    clusters' regressions (:class:`~clusterednb.ClusteredBoosting`), ``cnb-boost+auto`` or
    from nothing when trees alone rank the tuning's held-out rows better. Options they have no use
    for are refused by name.

    Examples
    --------
    >>> from clusterednb.cli.parser import build_parser
    >>> args = build_parser().parse_args(["fit", "data.csv", "--task", "user", "--label",
    ...                                   "liked", "--kind", "cnb-logistic", "-o", "m.cnb"])
    >>> type(make_model(args.kind, args)).__name__
    'ClusteredLogisticRegression'
    >>> args.kind = "cnb-lgbm"
    >>> type(make_model(args.kind, args)).__name__
    'ClusteredLearner'
    """
    from clusterednb.learners.boosted import ClusteredBoosting
    from clusterednb.learners.estimator import ClusteredLearner
    from clusterednb.logistic.estimator import ClusteredLogisticRegression

    unused = {
        "--transductive": getattr(args, "transductive", None) is not None,
        "--calibration": getattr(args, "calibration", None) is not None,
        "--semi-supervised": getattr(args, "semi_supervised", None) is not None,
        "--alpha": args.alpha != 1.0,
    }
    if getattr(args, "text", None) and name in LEARNER_KINDS:
        raise CNBError(f"--text: --kind {name} reads tables; for documents use cnb-logistic")
    if getattr(args, "text", None) and args.observation != "multinomial":
        raise CNBError(
            f"--observation {args.observation}: --kind cnb-logistic reads documents as word "
            "counts (multinomial)"
        )
    given = [flag for flag, used in unused.items() if used]
    if given:
        raise CNBError(
            f"{', '.join(given)}: not for --kind {name} (its probabilities come from its "
            "clusters' learners, and rows with an empty label always count in its clustering)"
        )
    clustering = {"gamma": args.gamma, "beta": args.beta}
    if getattr(args, "relevance", None) is not None:
        clustering["relevance"] = args.relevance
    if name in ("cnb-boost", "cnb-boost+auto"):
        start = "auto" if name == "cnb-boost+auto" else "regressions"
        return ClusteredBoosting(clustering_params=clustering, start=start, random_state=args.seed)
    if name in LEARNER_KINDS:
        share = "auto" if name == "cnb-blend" else 0.0
        return ClusteredLearner(
            "lightgbm", clustering_params=clustering, regression_share=share, random_state=args.seed
        )
    return ClusteredLogisticRegression(**clustering, random_state=args.seed)

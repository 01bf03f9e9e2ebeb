"""The argument parser of ``cnb``: argparse only, so ``cnb --help`` answers at once.

Every command names its handler as ``"module:function"``; the module (and with it numpy,
pandas, scikit-learn, Numba) is imported only when that command runs.

Conventions, the same in every command: ``-o/--output`` for every output path (``-o -``
writes text, CSV or JSON to standard output), ``--task`` and ``--label`` for columns,
``--model`` for a model *file*, ``--kind`` for a model *kind*, lists comma-separated,
``--json`` for one JSON document on standard output.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from clusterednb.cli.options import (
    CommaList,
    add_calibration,
    add_json,
    add_output,
    alpha_value,
    comma_list,
    deprecated,
    temperature_value,
)
from clusterednb.version import __version__

MODEL_TITLES = {
    "ns": "No-Sharing",
    "cs": "Complete-Sharing",
    "cnb-bhc": "Clustered (BHC)",
    "cnb-gibbs": "Clustered (Gibbs)",
    "cnb-search": "Clustered (search)",
    "prototype": "Prototype",
}
"""Model kinds of ``cnb fit`` and ``cnb evidence``."""
FIT_TITLES = {
    **MODEL_TITLES,
    "cnb-variational": "Clustered (variational)",
    "cnb-logistic": "Clustered logistic regression",
    "cnb-lgbm": "LightGBM inside the clusters",
    "cnb-blend": "LightGBM and the regressions inside the clusters, blended",
    "cnb-boost": "LightGBM started from the clustered regressions",
    "cnb-boost+auto": "LightGBM started from the clustered regressions or from nothing",
}
"""Model kinds of ``cnb fit``: also ``cnb-variational`` (whose evidence is a bound),
``cnb-logistic``, ``cnb-lgbm``, ``cnb-blend``, ``cnb-boost`` and ``cnb-boost+auto`` (the
booster's start chosen on the tuning's held-out rows), which have no evidence to compare."""
FAST_EVIDENCE_KINDS = ("ns", "cs", "cnb-bhc", "cnb-gibbs", "cnb-search")
"""The default of ``cnb evidence``: each answers in seconds on thousands of rows."""
EVALUATE_KINDS = "ns,cs,cnb-bhc,cnb-gibbs,cnb-logistic,lr-task,lr-pooled,hgb-pooled"
"""The default models of ``cnb evaluate``: the naive-Bayes family, the best model, and what a
practitioner would use otherwise (regressions and gradient-boosted trees)."""
DECISION_KINDS = "ns,cs,cnb-bhc+sigmoid,cnb-gibbs+sigmoid,lr-task,lr-pooled"
"""The default of ``cnb evaluate --protocol loss``: protocol A thresholds probabilities at each
loss, so its clustered models are the calibrated ones (uncalibrated, naive Bayes' over-confident
probabilities cost 1.10–1.19 times No-Sharing's loss on landmine where false positives
dominate; calibrated, 0.08–0.98)."""
COMMANDS = "clusterednb.cli.commands"


def default_kinds(protocol: str) -> str:
    """The models ``cnb evaluate`` runs when ``--kind`` is not given.

    Examples
    --------
    >>> default_kinds("loss").split(",")[2]
    'cnb-bhc+sigmoid'
    >>> default_kinds("transfer") == EVALUATE_KINDS
    True
    """
    return DECISION_KINDS if protocol == "loss" else EVALUATE_KINDS


def _add_data_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("data", type=Path, help="CSV or Parquet file in long format")
    parser.add_argument("--task", required=True, help="task (user) column")
    parser.add_argument("--label", required=True, help="label column")
    parser.add_argument(
        "--features",
        nargs="+",
        action=CommaList,
        metavar="COLUMNS",
        help="comma-separated feature columns (default: all others)",
    )
    parser.add_argument(
        "--alpha",
        type=alpha_value,
        default=1.0,
        help="label pseudo-count, or 'auto': chosen by the labels' evidence over the tasks",
    )
    parser.add_argument("--beta", type=float, default=1.0, help="feature pseudo-count")
    parser.add_argument("--gamma", type=float, default=1.0, help="DP concentration (Clustered)")
    parser.add_argument("--seed", type=int, default=0, help="random seed")
    parser.add_argument(
        "--semi-supervised",
        choices=["off", "gibbs", "em"],
        help="use rows with an empty label: Gibbs over their labels or EM (default: the "
        "model's own default, which uses them only in the Clustered Gibbs sampler)",
    )


def _kind_list(
    parser: argparse.ArgumentParser, default: str | None, help_text: str, default_text: str = ""
) -> None:
    parser.add_argument(
        "--kind",
        default=None if default is None else comma_list(default),
        action=CommaList,
        metavar="KINDS",
        help=f"{help_text} (comma-separated; default {default_text or default})",
    )
    parser.add_argument(
        "--models",
        dest="kind",
        nargs="+",
        action=deprecated("--kind", CommaList),
        help=argparse.SUPPRESS,
    )


def _fit(commands: argparse._SubParsersAction) -> None:
    fit = commands.add_parser("fit", help="fit a model and save it")
    _add_data_arguments(fit)
    fit.add_argument(
        "--kind",
        choices=list(FIT_TITLES),
        default="ns",
        help="model kind (default ns); cnb-logistic is ClusteredLogisticRegression, cnb-lgbm "
        "its clustering with LightGBM inside the clusters (ClusteredLearner, extra [trees]), "
        "cnb-blend both blended, the share chosen on held-out rows, cnb-boost one LightGBM "
        "booster started from the clusters' regressions (ClusteredBoosting)",
    )
    fit.add_argument(
        "--model",
        dest="kind",
        choices=list(FIT_TITLES),
        action=deprecated("--kind"),
        help=argparse.SUPPRESS,
    )
    fit.add_argument("--text", help="a column of documents: fit a bag-of-words model")
    fit.add_argument(
        "--observation",
        choices=["multinomial", "bernoulli"],
        default="multinomial",
        help="event model of --text documents",
    )
    fit.add_argument("--min-df", type=int, default=2, help="--text: keep words in >= N documents")
    fit.add_argument("--max-words", type=int, default=20_000, help="--text: vocabulary size")
    fit.add_argument("--bins", type=int, help="bin every decimal feature into N quantile bins")
    fit.add_argument(
        "--transductive",
        choices=["select"],
        help="clustered kinds: a user's rows with an empty label choose among the clusters "
        "of the labelled rows, without refitting them",
    )
    fit.add_argument(
        "--transductive-temperature",
        type=temperature_value,
        default=1.0,
        metavar="TAU",
        help="with --transductive: the power in (0, 1] on the unlabelled rows' likelihood, "
        "or 'auto': chosen on training users that play targets with hidden labels",
    )
    add_calibration(
        fit,
        "none",
        "clustered kinds: learn a map of the log-odds on out-of-fold rows (Platt), "
        "for decisions that threshold the probabilities",
    )
    fit.add_argument(
        "--relevance",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="cnb-gibbs, cnb-variational, cnb-logistic, cnb-lgbm, cnb-blend, cnb-boost: each "
        "column either separates the users' clusters or is shared by every user (then it no "
        "longer moves them); cnb-gibbs and cnb-variational first hold shared the columns that "
        "neither differ between users nor follow the label within them beyond chance (the "
        "default of cnb-bhc and cnb-search too, which take --no-relevance but not --relevance); "
        "cnb-logistic also judges each column's relevance to the label within clusters and "
        "leaves the irrelevant ones out of its regressions where held-out rows say so, and "
        "holds shared by every cluster the label weights its clusters do not tell apart "
        "(then it fits again; kept unless held-out rows are predicted worse); prints "
        "each column's relevance and names what was held or left out. Default: judged only "
        "where a column looks irrelevant (relevance='auto'; cnb-logistic and the boosters: "
        "where such columns hold 5 %% of the features' likelihood); --no-relevance: never",
    )
    add_output(fit, "model file to write")
    add_json(fit)
    fit.set_defaults(run=f"{COMMANDS}:fit")


def _predict(commands: argparse._SubParsersAction) -> None:
    predict = commands.add_parser("predict", help="predict with a saved model")
    predict.add_argument("model", type=Path, help="model file written by `cnb fit`")
    predict.add_argument("data", type=Path, help="CSV or Parquet file with the rows to predict")
    predict.add_argument("--task", required=True, help="task (user) column")
    predict.add_argument("--text", help="the column of documents (for a bag-of-words model)")
    predict.add_argument(
        "--id",
        nargs="+",
        action=CommaList,
        metavar="COLUMNS",
        help="comma-separated columns copied into the output beside the task (row ids)",
    )
    add_output(predict, "CSV file to write (- for standard output)")
    predict.add_argument(
        "--cost-false-positive", type=float, help="cost of predicting --pos-label wrongly"
    )
    predict.add_argument("--cost-false-negative", type=float, help="cost of missing --pos-label")
    predict.add_argument(
        "--pos-label",
        help="the positive label of the costs (needed unless the labels are 0/1 or true/false)",
    )
    renamed = (("--cost-fp", "--cost-false-positive"), ("--cost-fn", "--cost-false-negative"))
    for old, new in renamed:
        predict.add_argument(
            old,
            dest=new[2:].replace("-", "_"),
            type=float,
            action=deprecated(new),
            help=argparse.SUPPRESS,
        )
    add_json(predict)
    predict.set_defaults(run=f"{COMMANDS}:predict")


def _evidence(commands: argparse._SubParsersAction) -> None:
    evidence = commands.add_parser("evidence", help="log evidence of every model")
    _add_data_arguments(evidence)
    _kind_list(
        evidence,
        ",".join(FAST_EVIDENCE_KINDS),
        "models to compare, the first the baseline of the Bayes factors; 'prototype' "
        "(annealed importance sampling, minutes on thousands of rows) only when named",
    )
    evidence.add_argument(
        "--conditional",
        action="store_true",
        help="also estimate log P(Y | X) by annealed importance sampling",
    )
    evidence.add_argument("--temperatures", type=int, default=1000, help="AIS temperatures")
    evidence.add_argument("--runs", type=int, default=10, help="AIS runs")
    add_json(evidence)
    evidence.set_defaults(run=f"{COMMANDS}:evidence")


def _evaluate(commands: argparse._SubParsersAction) -> None:
    evaluate = commands.add_parser("evaluate", help="run an evaluation protocol (protocols.md)")
    evaluate.add_argument("data", nargs="?", type=Path, help="CSV/Parquet file (or --dataset)")
    evaluate.add_argument("--task", help="task column of DATA")
    evaluate.add_argument("--label", help="binary label column of DATA")
    evaluate.add_argument(
        "--dataset",
        choices=["landmine", "computer-survey", "movielens", "enron-spam", "multidomain-sentiment"],
        help="one of the real multi-task data sets (read from --data-dir) instead of DATA",
    )
    evaluate.add_argument("--text", help="a column of DATA holding documents (bag of words)")
    evaluate.add_argument(
        "--data-dir",
        type=Path,
        default=Path("../shared/data"),
        help="folder of the data sets (default %(default)s)",
    )
    evaluate.add_argument(
        "--protocol",
        choices=["transfer", "curves", "loss", "evidence", "partitions"],
        default="transfer",
        help="which protocol of protocols.md to run (default %(default)s)",
    )
    _kind_list(
        evaluate,
        None,
        "models to evaluate",
        f"{EVALUATE_KINDS}; with --protocol loss {DECISION_KINDS}: decisions need calibrated "
        "probabilities",
    )
    evaluate.add_argument(
        "--k",
        default="1,2,4,8,16,32,64,128",
        help="comma-separated k (transfer: own rows; partitions: rows per task)",
    )
    evaluate.add_argument(
        "--repeats", type=int, default=5, help="repetitions of every split (default %(default)s)"
    )
    evaluate.add_argument("--targets", type=int, default=50, help="target tasks sampled")
    evaluate.add_argument("--seed", type=int, default=0, help="random seed of the splits")
    evaluate.add_argument("--jobs", type=int, default=1, help="worker processes")
    evaluate.add_argument(
        "--transductive",
        action="store_true",
        help="generative models also see the test rows, unlabelled",
    )
    evaluate.add_argument("--bins", type=int, help="quantile bins per continuous feature")
    evaluate.add_argument(
        "--temperatures", type=int, default=0, help="evidence: AIS steps for log P(Y|X) (0: skip)"
    )
    add_output(evaluate, "output folder", old="--out")
    add_image_format(evaluate)
    add_json(evaluate)
    evaluate.set_defaults(run=f"{COMMANDS}:evaluate", needs=("report",))


def _demo(commands: argparse._SubParsersAction) -> None:
    demo = commands.add_parser(
        "demo", help="the meeting assistant on a simulated organisation, with an HTML report"
    )
    demo.add_argument("--seed", type=int, default=0, help="seed of the simulated organisation")
    add_output(demo, "report folder", required=False, old="--out", default=Path("demo-output"))
    demo.add_argument("--jobs", type=int, default=2, help="worker processes")
    add_image_format(demo)
    demo.set_defaults(run=f"{COMMANDS}:demo", needs=("report",))


def add_image_format(parser: argparse.ArgumentParser) -> None:
    """``--format svg|png``: how the HTML report embeds its figures.

    Examples
    --------
    >>> parser = argparse.ArgumentParser()
    >>> add_image_format(parser)
    >>> parser.parse_args([]).format, parser.parse_args(["--format", "png"]).format
    ('svg', 'png')
    """
    parser.add_argument(
        "--format",
        choices=("svg", "png"),
        default="svg",
        help="figures embedded in report.html as SVG (default) or PNG; both files are written",
    )


def _warm_up(commands: argparse._SubParsersAction) -> None:
    warm = commands.add_parser(
        "warm-up",
        help="compile every kernel once (~10 s), so later processes start at once",
    )
    warm.set_defaults(run=f"{COMMANDS}:warm_up")


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``cnb`` (every command and option).

    Examples
    --------
    >>> args = build_parser().parse_args(["fit", "data.csv", "--task", "user", "--label", "liked",
    ...                                   "-o", "model.cnb"])
    >>> args.kind, args.run  # the default model and the handler, imported only when it runs
    ('ns', 'clusterednb.cli.commands:fit')
    """
    from clusterednb.cli.meeting_options import add_meeting_commands
    from clusterednb.cli.service_options import add_service_commands

    parser = argparse.ArgumentParser(
        prog="cnb",
        description="Clustered Naive Bayes: Bayesian multi-task classification. Exit status: "
        "0 success, 1 bad input (one line naming the file, column, row or value), 2 usage.",
    )
    parser.add_argument("--version", action="version", version=f"cnb {__version__}")
    parser.add_argument(
        "--debug", action="store_true", help="show the traceback of an error as well"
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for add in (_fit, _predict, _evidence, _evaluate, _demo, _warm_up):
        add(commands)
    add_meeting_commands(commands)
    add_service_commands(commands)
    return parser

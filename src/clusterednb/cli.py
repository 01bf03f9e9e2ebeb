"""The ``cnb`` command: a thin layer over the public API.

User mistakes print one line ``cnb: error: ...`` and exit with status 2, without a traceback.
"""

from __future__ import annotations

import argparse
import sys
import warnings
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd

from clusterednb.clustered import ClusteredNB
from clusterednb.data.io import check_columns_exist, read_table
from clusterednb.data.schema import FeatureSchema
from clusterednb.decision import LossMatrix, bayes_decision
from clusterednb.exceptions import CNBError, UnknownCategoryWarning
from clusterednb.meeting.cli import add_meeting_commands
from clusterednb.models import CompleteSharingNB, NoSharingNB, TaskNaiveBayes
from clusterednb.persistence import load
from clusterednb.prototype import PrototypeNB

MODEL_TITLES = {
    "ns": "No-Sharing",
    "cs": "Complete-Sharing",
    "cnb-bhc": "Clustered (BHC)",
    "cnb-gibbs": "Clustered (Gibbs)",
    "cnb-search": "Clustered (search)",
    "prototype": "Prototype",
}


def make_model(name: str, args: argparse.Namespace) -> TaskNaiveBayes:
    """The estimator a model name stands for, with the command's hyperparameters."""
    common = {"alpha": args.alpha, "beta": args.beta, "random_state": args.seed}
    semi = getattr(args, "semi_supervised", None)
    if semi is not None:
        common["semi_supervised"] = False if semi == "off" else semi
    if name == "ns":
        return NoSharingNB(**common)
    if name == "cs":
        return CompleteSharingNB(**common)
    if name == "prototype":
        return PrototypeNB(**common)
    inference = name.removeprefix("cnb-")
    return ClusteredNB(inference=inference, gamma=args.gamma, **common)


def _feature_columns(
    frame: pd.DataFrame, task: str, label: str | None, features: Sequence[str] | None
) -> list[str]:
    check_columns_exist(frame, [task] + ([label] if label else []), "task/label")
    if features:
        check_columns_exist(frame, features, "feature")
        return list(features)
    return [c for c in frame.columns if c not in (task, label)]


def _add_data_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("data", type=Path, help="CSV or Parquet file in long format")
    parser.add_argument("--task", required=True, help="task (user) column")
    parser.add_argument("--label", required=True, help="label column")
    parser.add_argument("--features", nargs="+", help="feature columns (default: all others)")
    parser.add_argument("--alpha", type=float, default=1.0, help="label pseudo-count")
    parser.add_argument("--beta", type=float, default=1.0, help="feature pseudo-count")
    parser.add_argument("--gamma", type=float, default=1.0, help="DP concentration (Clustered)")
    parser.add_argument("--seed", type=int, default=0, help="random seed")
    parser.add_argument(
        "--semi-supervised",
        choices=["off", "gibbs", "em"],
        help="use rows with an empty label: Gibbs over their labels or EM (default: the "
        "model's own default, which uses them only in the Clustered Gibbs sampler)",
    )


def _fit(args: argparse.Namespace) -> None:
    frame = read_table(args.data)
    model = make_model(args.model, args)
    if args.text:
        from clusterednb.data.text import Vocabulary

        check_columns_exist(frame, [args.task, args.label, args.text], "task/label/text")
        documents = frame[args.text].tolist()
        vocabulary = Vocabulary(min_df=args.min_df, max_features=args.max_words).fit(documents)
        words = vocabulary.transform(documents)
        model.set_params(observation=args.observation)
        model.fit(
            pd.DataFrame.sparse.from_spmatrix(words, columns=list(vocabulary.words_)),
            frame[args.label].to_numpy(),
            frame[args.task].to_numpy(),
        )
    else:
        features = _feature_columns(frame, args.task, args.label, args.features)
        if args.bins:
            model.set_params(schema=_binned_schema(frame, features, args.label, args.bins))
        model.fit(frame[features], frame[args.label].to_numpy(), frame[args.task].to_numpy())
    model.save(args.output)
    print(
        f"fitted {MODEL_TITLES[args.model]} on {len(frame)} rows of {model.task_ids_.size} "
        f"tasks; log evidence {model.log_evidence_:.4f}; saved to {args.output}"
    )


def _binned_schema(
    frame: pd.DataFrame, features: list[str], label: str, n_bins: int
) -> FeatureSchema:
    """The schema of ``frame`` with every decimal column binned by its quantiles."""
    from clusterednb.data.discretize import discretize

    if n_bins < 2:
        raise CNBError(f"--bins must be at least 2, got {n_bins}")
    continuous = [
        name
        for name in features
        if pd.api.types.is_float_dtype(frame[name])
        and not np.all(np.mod(frame[name].dropna().to_numpy(), 1) == 0)
    ]
    schema = FeatureSchema.infer(frame[features], frame[label].to_numpy())
    return discretize(schema, frame[features], continuous, n_bins) if continuous else schema


def _loss_from_args(args: argparse.Namespace, n_classes: int) -> LossMatrix | None:
    if args.cost_fp is None and args.cost_fn is None:
        return None
    if n_classes != 2:
        raise CNBError("--cost-fp/--cost-fn need a binary label")
    return LossMatrix.binary(
        cost_false_positive=1.0 if args.cost_fp is None else args.cost_fp,
        cost_false_negative=1.0 if args.cost_fn is None else args.cost_fn,
    )


def _predict(args: argparse.Namespace) -> None:
    model = load(args.model)
    frame = read_table(args.data)
    check_columns_exist(frame, [args.task], "task")
    if model.observation != "categorical":
        from clusterednb.data.text import Vocabulary

        if not args.text:
            raise CNBError("this model reads documents: pass --text COLUMN")
        check_columns_exist(frame, [args.text], "text")
        vocabulary = Vocabulary()
        vocabulary.words_ = tuple(model.feature_names_in_)
        inputs = vocabulary.transform(frame[args.text].tolist())
    else:
        features = list(model.schema_.feature_names)
        check_columns_exist(frame, features, "feature")
        inputs = frame[features]
    tasks = frame[args.task].to_numpy()
    _warn_unseen_tasks(model, tasks)
    proba = model.predict_proba(inputs, tasks)
    keep = list(dict.fromkeys([*(args.id or []), args.task]))
    check_columns_exist(frame, keep, "--id")
    out = frame[keep].copy()
    for j, cls in enumerate(model.classes_):
        out[f"p_{cls}"] = proba[:, j]
    loss = _loss_from_args(args, proba.shape[1])
    loss = loss if loss is not None else LossMatrix.zero_one(proba.shape[1])
    out["decision"] = model.classes_[bayes_decision(proba, loss)]
    out.to_csv(args.output, index=False)
    print(f"wrote {len(out)} predictions to {args.output}")


def _warn_unseen_tasks(model: TaskNaiveBayes, tasks: np.ndarray) -> None:
    """Say how many rows belong to tasks the model never saw (a typo is the usual cause)."""
    from clusterednb.data.dataset import index_tasks

    unseen = index_tasks(tasks, model.task_ids_) < 0
    if unseen.any():
        names = list(dict.fromkeys(str(t) for t in tasks[unseen]))
        shown = ", ".join(repr(n) for n in names[:5]) + (", ..." if len(names) > 5 else "")
        warnings.warn(
            f"{int(unseen.sum())} rows of {len(names)} tasks the model never saw ({shown}) "
            "get the new-user predictive; check the task ids if they should be known",
            UserWarning,
            stacklevel=2,
        )


def _evidence(args: argparse.Namespace) -> None:
    from clusterednb.evidence import compare_models

    frame = read_table(args.data)
    features = _feature_columns(frame, args.task, args.label, args.features)
    models = {name: make_model(name, args) for name in args.models}
    table = compare_models(
        frame[features],
        frame[args.label].to_numpy(),
        frame[args.task].to_numpy(),
        models,
        conditional=args.conditional,
        n_temperatures=args.temperatures,
        n_runs=args.runs,
        random_state=args.seed,
    )
    table.insert(0, "title", [MODEL_TITLES[m] for m in table["model"]])
    print(table.drop(columns="model").to_string(index=False, float_format=lambda v: f"{v:.4f}"))
    print(
        f"\nlog_bf: against {MODEL_TITLES[args.models[0]]}; posterior_probability: uniform "
        "prior over these models (indicative when some evidence is a lower bound)."
    )


def _comma_list(text: str) -> list[str]:
    return [item.strip() for item in text.split(",") if item.strip()]


def _evaluate(args: argparse.Namespace) -> None:
    from clusterednb import evaluation
    from clusterednb.evaluation.datasets import from_frame

    if args.dataset:
        dataset = evaluation.load_dataset(args.dataset, args.data_dir)
    elif args.data and args.task and args.label:
        dataset = from_frame(
            read_table(args.data), args.task, args.label, name=args.data.stem, text=args.text
        )
    else:
        raise CNBError("give --dataset NAME, or DATA with --task and --label")
    if args.bins:
        dataset = replace(dataset, n_bins=args.bins)
    try:
        ks = tuple(int(k) for k in _comma_list(args.k))
    except ValueError as exc:
        raise CNBError(f"--k takes whole numbers separated by commas, got {args.k!r}") from exc
    models = tuple(_comma_list(args.models))
    common = {"out_dir": args.out, "seed": args.seed, "jobs": args.jobs}
    if args.protocol == "transfer":
        settings = evaluation.TransferSettings(
            models=models,
            ks=ks,
            repeats=args.repeats,
            n_targets=args.targets,
            seed=args.seed,
            transductive=args.transductive,
            n_bins=args.bins,
        )
        summary = evaluation.run_transfer(dataset, settings, args.out, jobs=args.jobs)
    elif args.protocol == "loss":
        summary = evaluation.run_loss_sweep(dataset, models, repeats=args.repeats, **common)
    elif args.protocol == "curves":
        summary = evaluation.run_learning_curves(dataset, models, repeats=args.repeats, **common)
    elif args.protocol == "evidence":
        summary = evaluation.run_evidence(
            dataset, models, repeats=args.repeats, n_temperatures=args.temperatures, **common
        )
    else:
        summary = evaluation.run_partitions(dataset, ks=ks, **common)
    print(summary.to_string(index=False, float_format=lambda v: f"{v:.4f}"))
    report = evaluation.write_report(args.out, title=f"clusterednb evaluation: {dataset.name}")
    print(f"\nresults in {args.out}/; report: {report}")


def _demo(args: argparse.Namespace) -> None:
    from clusterednb.demo import run_demo

    run_demo(seed=args.seed, out=args.out, jobs=args.jobs)


def _show_warning(message: Warning | str, *_: object, **__: object) -> None:
    print(f"cnb: warning: {message}", file=sys.stderr)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``cnb``."""
    parser = argparse.ArgumentParser(
        prog="cnb", description="Clustered Naive Bayes: multi-task classification"
    )
    commands = parser.add_subparsers(dest="command", required=True)

    fit = commands.add_parser("fit", help="fit a model and save it")
    _add_data_arguments(fit)
    fit.add_argument("--model", choices=list(MODEL_TITLES), default="ns")
    fit.add_argument("--text", help="a column of documents: fit a bag-of-words model")
    fit.add_argument(
        "--observation",
        choices=["multinomial", "bernoulli"],
        default="multinomial",
        help="event model of --text documents",
    )
    fit.add_argument("--min-df", type=int, default=2, help="--text: keep words in >= N documents")
    fit.add_argument("--max-words", type=int, default=20_000, help="--text: vocabulary size")
    fit.add_argument(
        "--bins", type=int, help="bin every decimal feature column into N quantile bins"
    )
    fit.add_argument("-o", "--output", type=Path, required=True, help="model file to write")
    fit.set_defaults(run=_fit)

    predict = commands.add_parser("predict", help="predict with a saved model")
    predict.add_argument("model", type=Path, help="model file written by `cnb fit`")
    predict.add_argument("data", type=Path, help="CSV or Parquet file with the rows to predict")
    predict.add_argument("--task", required=True, help="task (user) column")
    predict.add_argument("--text", help="the column of documents (for a bag-of-words model)")
    predict.add_argument(
        "--id",
        type=_comma_list,
        help="comma-separated columns copied into the output beside the task (row ids)",
    )
    predict.add_argument("-o", "--output", type=Path, required=True, help="CSV file to write")
    predict.add_argument("--cost-fp", type=float, help="cost of a false positive (default 1)")
    predict.add_argument("--cost-fn", type=float, help="cost of a false negative (default 1)")
    predict.set_defaults(run=_predict)

    evidence = commands.add_parser("evidence", help="log evidence of every model")
    _add_data_arguments(evidence)
    evidence.add_argument(
        "--models",
        nargs="+",
        choices=list(MODEL_TITLES),
        default=list(MODEL_TITLES),
        help="models to compare; the first is the baseline of the Bayes factors",
    )
    evidence.add_argument(
        "--conditional",
        action="store_true",
        help="also estimate log P(Y | X) by annealed importance sampling",
    )
    evidence.add_argument("--temperatures", type=int, default=1000, help="AIS temperatures")
    evidence.add_argument("--runs", type=int, default=10, help="AIS runs")
    evidence.set_defaults(run=_evidence)

    evaluate = commands.add_parser("evaluate", help="run an evaluation protocol (protocols.md)")
    evaluate.add_argument("data", nargs="?", type=Path, help="CSV/Parquet file (or --dataset)")
    evaluate.add_argument("--task", help="task column of DATA")
    evaluate.add_argument("--label", help="binary label column of DATA")
    evaluate.add_argument(
        "--dataset",
        choices=["landmine", "computer-survey", "movielens", "enron-spam", "multidomain-sentiment"],
    )
    evaluate.add_argument("--text", help="a column of DATA holding documents (bag of words)")
    evaluate.add_argument("--data-dir", type=Path, default=Path("../shared/data"))
    evaluate.add_argument(
        "--protocol",
        choices=["transfer", "curves", "loss", "evidence", "partitions"],
        default="transfer",
    )
    evaluate.add_argument("--models", default="ns,cs,cnb-bhc,cnb-gibbs,lr-task,lr-pooled")
    evaluate.add_argument(
        "--k",
        default="1,2,4,8,16,32,64,128",
        help="comma-separated k (transfer: own rows; partitions: rows per task)",
    )
    evaluate.add_argument("--repeats", type=int, default=5)
    evaluate.add_argument("--targets", type=int, default=50, help="target tasks sampled")
    evaluate.add_argument("--seed", type=int, default=0)
    evaluate.add_argument("--jobs", type=int, default=1, help="worker processes")
    evaluate.add_argument(
        "--transductive",
        action="store_true",
        help="generative models also see the test rows, unlabelled",
    )
    evaluate.add_argument("--bins", type=int, help="quantile bins per continuous feature")
    evaluate.add_argument(
        "--temperatures",
        type=int,
        default=0,
        help="evidence protocol: AIS temperatures for log P(Y|X) (0: skip)",
    )
    evaluate.add_argument("--out", type=Path, required=True, help="output folder")
    evaluate.set_defaults(run=_evaluate)

    demo = commands.add_parser(
        "demo", help="the meeting assistant on a simulated organisation, with an HTML report"
    )
    demo.add_argument("--seed", type=int, default=0)
    demo.add_argument("--out", type=Path, default=Path("demo-output"), help="report folder")
    demo.add_argument("--jobs", type=int, default=2, help="worker processes")
    demo.set_defaults(run=_demo)
    add_meeting_commands(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``cnb``; returns the exit status."""
    args = build_parser().parse_args(argv)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("always", UnknownCategoryWarning)
            warnings.showwarning = _show_warning
            args.run(args)
    except (CNBError, OSError) as exc:
        print(f"cnb: error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())

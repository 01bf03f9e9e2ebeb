"""What each ``cnb`` command does (imported only when a command runs)."""

from __future__ import annotations

import argparse
import math
import sys
import time
import warnings
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd

from clusterednb.cli.estimators import make_model, with_bins
from clusterednb.cli.options import comma_list
from clusterednb.cli.output import emit_json, judgement_lines, say, write_text
from clusterednb.cli.parser import FIT_TITLES, MODEL_TITLES, default_kinds
from clusterednb.data.io import check_columns_exist, read_table
from clusterednb.data.schema import FeatureSchema
from clusterednb.decision import LossMatrix, bayes_decision
from clusterednb.exceptions import CNBError
from clusterednb.loading import load
from clusterednb.naive_bayes.estimator import TaskNaiveBayes
from clusterednb.naive_bayes.prototype import PrototypeNB


def _feature_columns(
    frame: pd.DataFrame, task: str, label: str | None, features: Sequence[str] | None
) -> list[str]:
    check_columns_exist(frame, [task] + ([label] if label else []), "task/label")
    if features:
        check_columns_exist(frame, features, "feature")
        return list(features)
    return [c for c in frame.columns if c not in (task, label)]


def fit(args: argparse.Namespace) -> None:
    """``cnb fit``: read the table, fit the ``--kind`` of model, save it to ``-o``.

    Examples
    --------
    >>> from clusterednb.examples import naive_bayes as toy
    >>> from clusterednb.cli.parser import build_parser
    >>> data = toy.colour_csv()
    >>> path = data.with_name("model.cnb")
    >>> fit(build_parser().parse_args(["fit", str(data), "--task", "user", "--label", "liked",
    ...                                "--kind", "cs", "-o", str(path)]))  # doctest: +ELLIPSIS
    fitted Complete-Sharing on 9 rows of 3 tasks; log evidence -14.2289; saved to ...
    """
    if str(args.output) == "-":
        raise CNBError("a model file is binary: give -o a file name, not -")
    frame = read_table(args.data)
    model = make_model(args.kind, args)
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
            with_bins(model, args.kind, frame[features], frame[args.label].to_numpy(), args.bins)
        model.fit(frame[features], frame[args.label].to_numpy(), frame[args.task].to_numpy())
    model.save(args.output)
    summary = {"kind": args.kind, "rows": len(frame), "output": str(args.output)}
    summary |= model.fit_summary()
    if args.json:
        emit_json(summary)
        return
    if "log_evidence" in summary:
        what = f"log evidence {summary['log_evidence']:.4f}"
    else:
        what = (
            f"{summary['clusters']} cluster{'s' * (summary['clusters'] != 1)} "
            f"(effective rows {float(summary['effective_rows']):g}, "
            f"floor {summary['floor']:g}"
            + (f", bins' prior {summary['bin_precision']:g}" if "bin_precision" in summary else "")
            + ")"
        )
        if summary.get("regression_share", 0.0) > 0.0:
            what += f", the regressions' share {summary['regression_share']:g}"
        if "trees" in summary:
            start = summary["learner"].removeprefix("lightgbm from ")
            what += f", {summary['trees']} trees from {start}"
    print(
        f"fitted {FIT_TITLES[args.kind]} on {len(frame)} rows of {summary['tasks']} "
        f"tasks; {what}; saved to {args.output}"
    )
    for line in judgement_lines(summary):
        print(line)


def _loss_from_args(args: argparse.Namespace, classes: np.ndarray) -> LossMatrix | None:
    """The binary loss of ``--cost-false-positive/--cost-false-negative`` in class order."""
    if args.cost_false_positive is None and args.cost_false_negative is None:
        return None
    if len(classes) != 2:
        raise CNBError("--cost-false-positive/--cost-false-negative need a binary label")
    pos_label = None
    if args.pos_label is not None:
        matches = [c for c in classes if str(c) == args.pos_label]
        if not matches:
            shown = [str(c) for c in classes]
            raise CNBError(f"--pos-label {args.pos_label!r} is not one of the labels {shown}")
        pos_label = matches[0]
    loss = LossMatrix.binary(
        cost_false_positive=1.0 if args.cost_false_positive is None else args.cost_false_positive,
        cost_false_negative=1.0 if args.cost_false_negative is None else args.cost_false_negative,
        pos_label=pos_label,
    )
    try:
        return loss.for_classes(list(classes))
    except CNBError as exc:
        raise CNBError(f"{exc} (give --pos-label)") from exc


def predict(args: argparse.Namespace) -> None:
    """``cnb predict``: probabilities and decisions of a saved model for the table's rows.

    Examples
    --------
    >>> from clusterednb import NoSharingNB
    >>> from clusterednb.examples import naive_bayes as toy
    >>> from clusterednb.cli.parser import build_parser
    >>> data = toy.colour_csv()
    >>> NoSharingNB().fit(*toy.colour_rows()).save(data.with_name("model.cnb"))
    >>> out = data.with_name("predictions.csv")
    >>> predict(build_parser().parse_args(["predict", str(data.with_name("model.cnb")),
    ...                                    str(data), "--task", "user", "-o", str(out)]))
    ... # doctest: +ELLIPSIS
    wrote 9 predictions to .../predictions.csv
    >>> pd.read_csv(out).columns.tolist()
    ['user', 'p_no', 'p_yes', 'decision']
    """
    model = load(args.model)
    frame = read_table(args.data)
    check_columns_exist(frame, [args.task], "task")
    if getattr(model, "observation", "categorical") != "categorical":  # a ClusteredLearner has none
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
    unseen = _warn_unseen_tasks(model, tasks)
    proba = model.predict_proba(inputs, tasks)
    keep = list(dict.fromkeys([*(args.id or []), args.task]))
    check_columns_exist(frame, keep, "--id")
    out = frame[keep].copy()
    for j, cls in enumerate(model.classes_):
        out[f"p_{cls}"] = proba[:, j]
    loss = _loss_from_args(args, model.classes_)
    loss = loss if loss is not None else LossMatrix.zero_one(proba.shape[1])
    out["decision"] = model.classes_[bayes_decision(proba, loss)]
    write_text(args.output, out.to_csv(index=False))
    counts = out["decision"].astype(str).value_counts()
    summary = {
        "rows": len(out),
        "output": str(args.output),
        "unseen_task_rows": unseen,
        "decisions": {str(k): int(v) for k, v in counts.items()},
    }
    if args.json:
        emit_json(summary)
    else:
        say(f"wrote {len(out)} predictions to {args.output}", args)


def _warn_unseen_tasks(model: TaskNaiveBayes, tasks: np.ndarray) -> int:
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
    return int(unseen.sum())


def _evidence_row(
    name: str, model: TaskNaiveBayes, frame: pd.DataFrame, args: argparse.Namespace
) -> dict[str, Any]:
    """One model's evidence; the Prototype AIS announces its cost and shows progress."""
    from clusterednb.evidence import (
        conditional_evidence,
        marginal_evidence,
        prototype_evidence_steps,
    )
    from clusterednb.progress import progress

    features = _feature_columns(frame, args.task, args.label, args.features)
    data = (frame[features], frame[args.label].to_numpy(), frame[args.task].to_numpy())
    ais = {"n_temperatures": args.temperatures, "n_runs": args.runs, "random_state": args.seed}
    reporter = None
    if isinstance(model, PrototypeNB):
        reporter = progress(
            prototype_evidence_steps(FeatureSchema.infer(data[0], data[1])),
            "prototype evidence (annealed importance sampling)",
        )
        ais_message = (
            f"prototype: annealed importance sampling, {args.temperatures} temperatures x "
            f"{args.runs} runs per (class, feature) pair; this takes minutes on thousands "
            "of rows (fewer --temperatures is faster and less precise)"
        )
        print(ais_message, file=sys.stderr)
    row: dict[str, Any] = {"model": name, "title": MODEL_TITLES[name]}
    try:
        evidence = marginal_evidence(
            model, *data, **ais, on_step=None if reporter is None else reporter.update
        )
        row |= {"log_evidence": evidence.value, "kind": evidence.kind, "stderr": evidence.stderr}
        if args.conditional:
            conditional = conditional_evidence(model, *data, **ais)
            row |= {
                "log_conditional": conditional.value,
                "conditional_stderr": conditional.stderr,
            }
    finally:
        if reporter is not None:
            reporter.close()
    numbers = [row.get("log_evidence"), row.get("log_conditional", 0.0)]
    if not all(math.isfinite(v) for v in numbers):
        row["note"] = (
            "not computed: the estimate is not a finite number (the annealing's weights "
            "under- or overflowed); try more --temperatures"
        )
        row["log_evidence"] = None
    return row


def evidence(args: argparse.Namespace) -> None:
    """``cnb evidence``: the log evidence of each ``--kind``, and the Bayes factor against
    the first.

    Examples
    --------
    >>> from clusterednb.examples import naive_bayes as toy
    >>> from clusterednb.cli.parser import build_parser
    >>> args = build_parser().parse_args(["evidence", str(toy.colour_csv()), "--task", "user",
    ...                                   "--label", "liked", "--kind", "ns,cs"])
    >>> evidence(args)  # doctest: +NORMALIZE_WHITESPACE +ELLIPSIS
               title log_evidence  kind stderr  log_bf posterior_probability
          No-Sharing     -12.8300 exact 0.0000  0.0000                0.8020
    Complete-Sharing     -14.2289 exact 0.0000 -1.3989                0.1980
    <BLANKLINE>
    log_bf: against No-Sharing; posterior_probability: uniform prior over the models ...
    """
    unknown = [k for k in args.kind if k not in MODEL_TITLES]
    if unknown or not args.kind:
        raise CNBError(f"--kind: unknown model kind(s) {unknown}; known: {list(MODEL_TITLES)}")
    frame = read_table(args.data)
    rows = [_evidence_row(name, make_model(name, args), frame, args) for name in args.kind]
    table = pd.DataFrame(rows)
    computed = table["log_evidence"].notna()
    baseline = table["log_evidence"].iloc[0]
    table["log_bf"] = table["log_evidence"] - baseline if computed.iloc[0] else None
    log_post = table.loc[computed, "log_evidence"].to_numpy(dtype=float)
    table["posterior_probability"] = None
    table.loc[computed, "posterior_probability"] = np.exp(log_post - np.logaddexp.reduce(log_post))
    if args.json:
        emit_json({"baseline": args.kind[0], "models": table.to_dict(orient="records")})
        return
    shown = table.drop(columns=["model", "note"], errors="ignore").copy()
    for column in shown.columns:
        shown[column] = [
            "—"
            if value is None or (isinstance(value, float) and not math.isfinite(value))
            else f"{value:.4f}"
            if isinstance(value, float)
            else value
            for value in shown[column]
        ]
    print(shown.to_string(index=False))
    for row in rows:
        if "note" in row:
            print(f"{row['title']}: {row['note']}")
    print(
        f"\nlog_bf: against {MODEL_TITLES[args.kind[0]]}; posterior_probability: uniform "
        "prior over the models computed (indicative when some evidence is a lower bound)."
    )


def evaluate(args: argparse.Namespace) -> None:
    """``cnb evaluate``: run one protocol, write its tables, figures and ``report.html``.

    Examples
    --------
    >>> import contextlib, io
    >>> from clusterednb.examples import naive_bayes as toy
    >>> from clusterednb.cli.parser import build_parser
    >>> data = toy.colour_csv()
    >>> with contextlib.redirect_stdout(io.StringIO()):
    ...     evaluate(build_parser().parse_args(["evaluate", str(data), "--task", "user",
    ...         "--label", "liked", "--protocol", "evidence", "--kind", "ns", "--repeats", "1",
    ...         "-o", str(data.with_name("out"))]))
    >>> (data.with_name("out") / "report.html").exists()
    True
    """
    from clusterednb import evaluation
    from clusterednb.evaluation.datasets import from_frame

    if args.output is None:
        raise CNBError("give the output folder with -o/--output")
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
        ks = tuple(int(k) for k in comma_list(args.k))
    except ValueError as exc:
        raise CNBError(f"--k takes whole numbers separated by commas, got {args.k!r}") from exc
    kinds = comma_list(default_kinds(args.protocol)) if args.kind is None else args.kind
    if not kinds:
        raise CNBError("--kind names no model; give one or more, comma-separated")
    models = tuple(kinds)
    out = args.output
    started = time.perf_counter()
    common = {"out_dir": out, "seed": args.seed, "jobs": args.jobs}
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
        summary = evaluation.run_transfer(dataset, settings, out, jobs=args.jobs)
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
    from clusterednb.evaluation.provenance import provenance

    report = evaluation.write_report(
        out,
        title=f"clusterednb evaluation: {dataset.name}",
        provenance=provenance(dataset.name, dataset.frame, args.seed, started),
        dataset=dataset.name,
        image_format=args.format,
    )
    if args.json:
        emit_json(
            {
                "protocol": args.protocol,
                "dataset": dataset.name,
                "output": str(out),
                "report": str(report),
                "summary": summary.to_dict(orient="records"),
            }
        )
        return
    print(summary.to_string(index=False, float_format=lambda v: f"{v:.4f}"))
    print(f"\nresults in {out}/; report: {report}")


def demo(args: argparse.Namespace) -> None:
    """``cnb demo``: the meeting assistant on a simulated organisation
    (:func:`clusterednb.cli.demo.run_demo`; a few minutes).

    Examples
    --------
    >>> from clusterednb.cli.parser import build_parser
    >>> build_parser().parse_args(["demo", "-o", "demo-out"]).run  # the handler it dispatches to
    'clusterednb.cli.commands:demo'
    """
    from clusterednb.cli.demo import run_demo

    run_demo(seed=args.seed, out=args.output, jobs=args.jobs, image_format=args.format)


def warm_up(args: argparse.Namespace) -> None:
    """``cnb warm-up``: compile (or load) every engine's kernels and print the time each took.

    Examples
    --------
    >>> import contextlib, io
    >>> from clusterednb.cli.parser import build_parser
    >>> printed = io.StringIO()
    >>> with contextlib.redirect_stdout(printed):
    ...     warm_up(build_parser().parse_args(["warm-up"]))
    >>> printed.getvalue().startswith("compiled-kernel cache:")
    True
    """
    from clusterednb.warmup import describe, warm_up

    print(describe(warm_up()))

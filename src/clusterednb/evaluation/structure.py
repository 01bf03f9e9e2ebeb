"""Protocols E (evidence against data size, thesis Fig. 4-5) and P (partitions, Table 4.1).

E fits the generative models on random subsets of every task's rows and records each
model's log evidence with its kind (exact, lower bound) and, on request, the conditional
evidence ``log P(Y | X)`` by annealed importance sampling.

P subsamples ``k`` rows per task and records the clustered models' MAP partition, the
posterior of the number of clusters, the co-clustering matrix (heat map) and the BHC tree, and
each column's posterior relevance to the clusters (``cnb-gibbs+relevance``), in
``relevance.csv``, and its relevance to the label within clusters
(``ClusteredLogisticRegression(relevance=True)``), in ``label_relevance.csv``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from clusterednb.evaluation.datasets import EvalDataset
from clusterednb.evaluation.models.generative import GENERATIVE, fit_generative, make_generative
from clusterednb.evaluation.plots import (
    plot_coclustering,
    plot_dendrogram,
    plot_evidence,
    plot_n_clusters,
)
from clusterednb.evaluation.result_store import CellStore
from clusterednb.evaluation.runner import run_cells
from clusterednb.evaluation.sweeps import per_task_training_mask
from clusterednb.evaluation.transfer import discretised
from clusterednb.exceptions import CNBError
from clusterednb.logistic.estimator import ClusteredLogisticRegression

EVIDENCE_COLUMNS = [
    "fraction",
    "repetition",
    "n_rows",
    "model",
    "log_evidence",
    "kind",
    "log_conditional",
    "conditional_stderr",
]
PARTITION_COLUMNS = ["k", "model", "task", "cluster"]
CLUSTERED = ("cnb-bhc", "cnb-gibbs")
RELEVANCE_MODEL = "cnb-gibbs+relevance"
"""The model whose ``feature_relevance_`` protocol P records."""
JUDGEMENTS = {"relevance": "feature_relevance_", "label_relevance": "label_relevance_"}
"""Protocol P's tables of each column's relevance, and the attribute each is read from."""


def _categorical_only(dataset: EvalDataset, protocol: str) -> None:
    if dataset.text is not None:
        raise CNBError(
            f"protocol {protocol!r} is not available for document data sets yet "
            "(use transfer, curves or loss)"
        )


def _subset(dataset: EvalDataset, fraction: float, rng: np.random.Generator) -> pd.DataFrame:
    frame = dataset.frame[dataset.frame["label"].notna()].reset_index(drop=True)
    mask = per_task_training_mask(frame["task"].to_numpy(), rng, fraction, min_test=0)
    subset, _ = discretised(dataset, frame[mask], frame[mask])
    return subset


def evidence_cell(
    dataset: EvalDataset,
    models: tuple[str, ...],
    seed: int,
    fraction: float,
    repetition: int,
    n_temperatures: int = 0,
    n_runs: int = 10,
) -> list[dict]:
    """Log evidence of each generative model on a random ``fraction`` of every task's rows.

    With ``n_temperatures > 0`` also the conditional evidence ``log P(Y | X)`` by annealed
    importance sampling (``n_runs`` runs) and its standard error.

    Examples
    --------
    >>> from clusterednb.examples import evaluation as toy
    >>> rows = evidence_cell(toy.eval_dataset(), ("ns", "cs"), seed=0, fraction=0.5,
    ...                      repetition=0)
    >>> [(row["model"], row["n_rows"], row["kind"]) for row in rows]
    [('ns', 60, 'exact'), ('cs', 60, 'exact')]
    """
    from clusterednb.evidence import conditional_evidence

    subset = _subset(dataset, fraction, np.random.default_rng([seed, repetition, 3]))
    rows = []
    for name in models:
        model = fit_generative(name, subset, dataset.features, seed + repetition)
        row = {
            "fraction": fraction,
            "repetition": repetition,
            "n_rows": len(subset),
            "model": name,
            "log_evidence": model.log_evidence_,
            "kind": model.evidence_kind_,
        }
        if n_temperatures > 0:
            conditional = conditional_evidence(
                make_generative(name, seed + repetition),
                subset[dataset.features],
                subset["label"].to_numpy(dtype=float),
                subset["task"].to_numpy(),
                n_temperatures=n_temperatures,
                n_runs=n_runs,
                random_state=np.random.default_rng([seed, repetition, 4]),
            )
            row.update(log_conditional=conditional.value, conditional_stderr=conditional.stderr)
        rows.append(row)
    return rows


def run_evidence(
    dataset: EvalDataset,
    models: tuple[str, ...],
    out_dir: str | Path,
    fractions: tuple[float, ...] = (0.1, 0.25, 0.5, 1.0),
    repeats: int = 3,
    seed: int = 0,
    jobs: int = 1,
    progress: bool = True,
    n_temperatures: int = 0,
    n_runs: int = 10,
) -> pd.DataFrame:
    """Protocol E (marginal evidence): ``evidence.csv`` with ``model, fraction, n_rows,
    log_evidence_mean, log_bf_vs_ns, kind`` and ``evidence.png``; with ``n_temperatures > 0``
    also ``log_conditional_mean`` (``log P(Y | X)`` by AIS) and its standard error.

    Examples
    --------
    >>> from clusterednb.examples import models as toy
    >>> from clusterednb.examples import evaluation as eval_toy
    >>> summary = run_evidence(eval_toy.eval_dataset(), ("ns", "cs"), toy.scratch_file("evidence"),
    ...                        fractions=(0.5, 1.0), repeats=1, progress=False)
    >>> summary[summary["model"] == "ns"]["log_bf_vs_ns"].tolist()  # the baseline: 0
    [0.0, 0.0]
    >>> summary["n_rows"].tolist()
    [60.0, 120.0, 60.0, 120.0]
    """
    _categorical_only(dataset, "evidence")
    models = tuple(m for m in models if m in GENERATIVE)
    if not models:
        raise CNBError(f"protocol E needs generative models, one of {list(GENERATIVE)}")
    settings = {
        "models": list(models),
        "fractions": list(fractions),
        "repeats": repeats,
        "seed": seed,
        "n_temperatures": n_temperatures,
        "n_runs": n_runs,
    }
    store = CellStore(out_dir, "evidence", settings, EVIDENCE_COLUMNS)
    done = store.done(["fraction", "repetition"])
    cells = [(f, r) for f in fractions for r in range(repeats) if (str(f), str(r)) not in done]
    run_cells(
        cells,
        lambda f, r: evidence_cell(dataset, models, seed, f, r, n_temperatures, n_runs),
        store,
        dataset,
        jobs,
        desc=f"evidence {dataset.name}",
        progress=progress,
        remote=lambda f, r: (evidence_cell, (models, seed, f, r, n_temperatures, n_runs)),
    )
    rows = store.rows()
    if "ns" in models:
        baseline = rows[rows["model"] == "ns"].set_index(["fraction", "repetition"])
        rows["log_bf_vs_ns"] = (
            rows["log_evidence"].to_numpy()
            - baseline.loc[
                list(zip(rows["fraction"], rows["repetition"], strict=True)), "log_evidence"
            ].to_numpy()
        )
    else:
        rows["log_bf_vs_ns"] = np.nan
    summary = (
        rows.groupby(["model", "fraction"])
        .agg(
            n_rows=("n_rows", "mean"),
            log_evidence_mean=("log_evidence", "mean"),
            log_bf_vs_ns=("log_bf_vs_ns", "mean"),
            kind=("kind", "first"),
        )
        .reset_index()
    )
    if n_temperatures > 0:
        conditional = rows.groupby(["model", "fraction"])
        summary["log_conditional_mean"] = conditional["log_conditional"].mean().to_numpy()
        summary["conditional_stderr"] = (
            np.sqrt(conditional["conditional_stderr"].apply(lambda e: (e**2).sum()))
            / conditional.size()
        ).to_numpy()
    summary.to_csv(Path(out_dir) / "evidence.csv", index=False)
    plot_evidence(summary, Path(out_dir) / "evidence.png", dataset.name)
    return summary


def partition_cell(dataset: EvalDataset, seed: int, k: int, out_dir: str) -> list[dict]:
    """MAP partitions of the clustered models on ``k`` rows per task (all rows of smaller
    tasks); figures to ``out_dir``.

    Examples
    --------
    >>> from clusterednb.examples import models as toy
    >>> from clusterednb.examples import evaluation as eval_toy
    >>> out = toy.scratch_file("partitions")
    >>> out.mkdir()
    >>> rows = partition_cell(eval_toy.eval_dataset(), seed=0, k=8, out_dir=str(out))
    >>> sorted({row["model"] for row in rows}) == sorted(CLUSTERED), len(rows) == 6 * len(CLUSTERED)
    (True, True)
    """
    frame = dataset.frame[dataset.frame["label"].notna()].reset_index(drop=True)
    rng = np.random.default_rng([seed, k, 4])
    keep = np.zeros(len(frame), dtype=bool)
    for _, rows in sorted(frame.groupby("task").indices.items()):
        keep[rng.choice(rows, size=min(k, rows.size), replace=False)] = True
    subset, _ = discretised(dataset, frame[keep], frame[keep])
    rows, extra = [], []
    for name in CLUSTERED:
        model = fit_generative(name, subset, dataset.features, seed)
        labels = [str(t) for t in model.task_ids_]
        rows += [
            {"k": k, "model": name, "task": t, "cluster": int(c)}
            for t, c in zip(model.task_ids_, model.partition_, strict=True)
        ]
        extra += [
            {"k": k, "model": name, "n_clusters": n, "probability": p}
            for n, p in enumerate(model.n_clusters_posterior_)
            if p > 0
        ]
        plot_coclustering(
            model.coclustering_,
            model.partition_,
            Path(out_dir) / f"partitions_cocluster_{name}_k{k}.png",
            f"{dataset.name}: {name}, {k} rows per task",
            labels=labels,
            tree=getattr(model, "tree_", None) if name == "cnb-bhc" else None,
        )
        if name == "cnb-bhc" and len(labels) > 1:
            plot_dendrogram(
                model.tree_,
                labels,
                Path(out_dir) / f"partitions_tree_k{k}.png",
                f"{dataset.name}: BHC tree, {k} rows per task",
            )
    n_clusters = pd.DataFrame(extra)
    n_clusters.to_csv(Path(out_dir) / f"partitions_nclusters_k{k}.csv", index=False)
    judges = {
        "relevance": fit_generative(RELEVANCE_MODEL, subset, dataset.features, seed),
        "label_relevance": fit_label_judge(subset, dataset.features, seed),
    }
    for table, model in judges.items():
        relevance_table(model, k, JUDGEMENTS[table]).to_csv(
            Path(out_dir) / f"partitions_{table}_k{k}.csv", index=False
        )
    plot_n_clusters(
        n_clusters,
        Path(out_dir) / f"partitions_nclusters_k{k}.png",
        f"{dataset.name}: P(number of clusters), {k} rows per task",
    )
    return rows


def fit_label_judge(train: pd.DataFrame, features: list[str], seed: int):
    """:class:`~clusterednb.ClusteredLogisticRegression` with ``relevance=True`` on the
    labelled rows of ``train``: the model whose ``label_relevance_`` (each column's relevance
    to the label within its clusters) protocol P records.

    Examples
    --------
    >>> from clusterednb.examples import evaluation as toy
    >>> train, _ = toy.transfer_split()
    >>> fit_label_judge(train, ["colour"], seed=0).label_relevance_.shape
    (1,)
    """
    labelled = train[train["label"].notna()]
    model = ClusteredLogisticRegression(
        classes=[0, 1], handle_unknown="ignore", random_state=seed, relevance=True
    )
    return model.fit(
        labelled[features], labelled["label"].to_numpy(dtype=int), labelled["task"].to_numpy()
    )


def relevance_table(model: object, k: int, attribute: str = "feature_relevance_") -> pd.DataFrame:
    """Each column's relevance as ``model`` judged it (its ``attribute``: by default the
    posterior relevance to the clusters), one row per column: ``k``, ``feature``,
    ``relevance``.

    Examples
    --------
    >>> from clusterednb import ClusteredNB
    >>> from clusterednb.examples import naive_bayes as toy
    >>> model = ClusteredNB(inference="gibbs", relevance=True, random_state=0)
    >>> relevance_table(model.fit(*toy.colour_rows()), k=3).columns.tolist()
    ['k', 'feature', 'relevance']
    """
    return pd.DataFrame(
        {
            "k": k,
            "feature": model.feature_names_in_,
            "relevance": np.round(getattr(model, attribute), 3),
        }
    )


def run_partitions(
    dataset: EvalDataset,
    out_dir: str | Path,
    ks: tuple[int, ...] = (16, 32, 64, 128),
    seed: int = 0,
    jobs: int = 1,
    progress: bool = True,
) -> pd.DataFrame:
    """Protocol P: ``partitions.csv`` (number of clusters of each model at each k) plus the
    per-task MAP clusters, the P(number of clusters) tables, ``relevance.csv`` (each column's
    relevance to the clusters at each k), ``label_relevance.csv`` (to the label within
    clusters) and the figures.

    Examples
    --------
    >>> from clusterednb.examples import models as toy
    >>> from clusterednb.examples import evaluation as eval_toy
    >>> out = toy.scratch_file("partitions")
    >>> summary = run_partitions(eval_toy.eval_dataset(), out, ks=(8,), progress=False)
    >>> summary.columns.tolist(), (out / "partitions_nclusters_k8.csv").exists()
    (['k', 'model', 'n_clusters_map'], True)
    """
    _categorical_only(dataset, "partitions")
    out_dir = Path(out_dir)
    store = CellStore(out_dir, "partitions", {"ks": list(ks), "seed": seed}, PARTITION_COLUMNS)
    done = store.done(["k"])
    cells = [(k,) for k in ks if (str(k),) not in done]
    run_cells(
        cells,
        lambda k: partition_cell(dataset, seed, k, str(out_dir)),
        store,
        dataset,
        jobs,
        desc=f"partitions {dataset.name}",
        progress=progress,
        remote=lambda k: (partition_cell, (seed, k, str(out_dir))),
    )
    rows = store.rows()
    summary = rows.groupby(["k", "model"])["cluster"].nunique().rename("n_clusters_map")
    summary = summary.reset_index()
    summary.to_csv(out_dir / "partitions.csv", index=False)
    for table in JUDGEMENTS:
        tables = [pd.read_csv(out_dir / f"partitions_{table}_k{k}.csv") for k in ks]
        relevance = pd.concat(tables).pivot(index="feature", columns="k", values="relevance")
        relevance.columns = [f"k = {k}" for k in relevance.columns]
        relevance.reset_index().to_csv(out_dir / f"{table}.csv", index=False)
    return summary

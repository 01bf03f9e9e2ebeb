"""Figures of the protocols (matplotlib, imported lazily, drawn off-screen). No computation."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


# One colour and marker per model in every figure (Okabe–Ito, safe for colour-blind readers).
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000")
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")
KNOWN_MODELS = (
    # The first eight get the eight colours: the models most often drawn together.
    "lr-pooled",
    "cnb-logistic",
    "cnb-gibbs",
    "lr-hier",
    "cnb-lr",
    "cnb-bhc",
    "ns",
    "cs",
    # Then each place's colour is chosen so that the default sets of `cnb evaluate` (protocol
    # T: ns, cs, cnb-bhc, cnb-gibbs, cnb-logistic, lr-task, lr-pooled, hgb-pooled; protocol A:
    # ns, cs, lr-task, lr-pooled and the calibrated clustered models) never repeat a colour; a
    # calibrated model shares its base's colour.
    "lr-pooled+raw",
    "cnb-variational",
    "cnb-gibbs+sigmoid",
    "cnb-exact",
    "lr-task",
    "cnb-bhc+sigmoid",
    "prototype",
    "lr-hier-fixed",
    "user-knn",
    "als",
    "cnb-gibbs-reseeded",
    "cnb-gibbs+tau",
    "cnb-logistic+dev",
    "cnb-gibbs+relevance",
    "cnb-logistic+relevance",
    # The trees and the learners inside clusters: hgb-pooled, of the default set of protocol
    # T, lands on the one colour that set leaves free.
    "hgb-task",
    "lgbm-pooled",
    "lgbm-task",
    "cnb-hgb",
    "hgb-pooled",
    "cnb-lgbm",
    "cnb-hgb+task",
    "cnb-lgbm+task",
    "cnb-blend",
    "cnb-boost",
    "cnb-variational+relevance",
    "cnb-boost+auto",
)


def model_style(model: str) -> dict[str, str]:
    """The fixed colour and marker of ``model`` (by its place in :data:`KNOWN_MODELS`; an
    unknown name gets one from a stable hash of it).

    Examples
    --------
    >>> model_style("lr-pooled")
    {'color': '#0072B2', 'marker': 'o'}
    >>> model_style("my-model") == model_style("my-model")  # stable across runs
    True
    """
    index = (
        KNOWN_MODELS.index(model) if model in KNOWN_MODELS else sum(map(ord, model)) % len(PALETTE)
    )
    return {
        "color": PALETTE[index % len(PALETTE)],
        "marker": MARKERS[(index // len(PALETTE) + index) % len(MARKERS)],
    }


def _save(fig: Any, path: Path) -> None:
    """Write the figure as PNG at ``path`` and as SVG beside it (what the report embeds)."""
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    fig.savefig(path.with_suffix(".svg"))
    _pyplot().close(fig)


def _lines(
    summary: pd.DataFrame,
    x: str,
    y: str,
    path: Path,
    *,
    xlabel: str,
    ylabel: str,
    title: str,
    yerr: str | None = None,
    log2: bool = False,
    reference: float | None = None,
    label: str | None = None,
) -> None:
    """One line per model of ``summary[y]`` against ``summary[x]``; with ``yerr`` a band of
    ±1 of that column (a standard error) around each line."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6.5, 4.2))
    for model, rows in summary.groupby("model"):
        rows = rows.sort_values(x)
        name = f"{model} ({rows[label].iloc[0]})" if label else model
        style = model_style(str(model))
        ax.plot(rows[x], rows[y], label=name, markersize=4, **style)
        if yerr:
            spread = rows[yerr].fillna(0.0)
            ax.fill_between(
                rows[x], rows[y] - spread, rows[y] + spread, color=style["color"], alpha=0.15
            )
    if reference is not None:
        ax.axhline(reference, color="grey", linewidth=0.8)
    if log2:
        ax.set_xscale("log", base=2)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    _save(fig, path)


def plot_transfer(summary: pd.DataFrame, path: Path, title: str = "") -> None:
    """Mean AUC against k (log scale) with ±1 standard-error bands, one line per model.

    Written as PNG at ``path`` and as SVG beside it; ``summary`` has columns ``model``,
    ``k``, ``auc_mean`` and ``auc_se``.

    Examples
    --------
    >>> from clusterednb.examples import models as toy
    >>> summary = pd.DataFrame({"model": ["cs", "cs"], "k": [1, 4], "auc_mean": [0.7, 0.8],
    ...                         "auc_se": [0.02, 0.01]})
    >>> path = toy.scratch_file("transfer.png")
    >>> plot_transfer(summary, path, "toy")
    >>> sorted(p.name for p in path.parent.iterdir())
    ['transfer.png', 'transfer.svg']
    >>> "<!-- Transfer: toy -->" in path.with_suffix(".svg").read_text()  # the title
    True
    """
    _lines(
        summary,
        "k",
        "auc_mean",
        path,
        yerr="auc_se",
        log2=True,
        title=f"Transfer: {title}",
        xlabel="labelled rows of the target task (k)",
        ylabel="mean AUC on the target's other rows",
    )


def plot_reliability(table: pd.DataFrame, path: Path, title: str = "") -> None:
    """Reliability diagrams: observed frequency against mean prediction, one panel per k
    (at most four: the smallest ks), one line per model, the diagonal for reference.

    ``table`` has columns ``model``, ``k``, ``mean_p``, ``frequency`` and ``ece``.

    Examples
    --------
    >>> from clusterednb.examples import models as toy
    >>> table = pd.DataFrame({"model": ["cs"] * 2, "k": [1, 1], "mean_p": [0.2, 0.8],
    ...                       "frequency": [0.25, 0.7], "ece": [0.07, 0.07]})
    >>> path = toy.scratch_file("reliability.png")
    >>> plot_reliability(table, path, "toy")
    >>> "<!-- cs (ECE 0.070) -->" in path.with_suffix(".svg").read_text()  # the legend
    True
    """
    plt = _pyplot()
    ks = sorted(table["k"].unique())[:4]
    fig, axes = plt.subplots(1, len(ks), figsize=(3.4 * len(ks), 3.6), squeeze=False)
    for ax, k in zip(axes[0], ks, strict=True):
        for model, rows in table[table["k"] == k].groupby("model"):
            ece = rows["ece"].iloc[0]
            ax.plot(
                rows["mean_p"],
                rows["frequency"],
                marker="o",
                markersize=3,
                label=f"{model} (ECE {ece:.3f})",
            )
        ax.plot([0, 1], [0, 1], color="grey", linewidth=0.8)
        ax.set_xlabel("mean predicted P(y = 1)")
        ax.set_ylabel("observed frequency of y = 1")
        ax.set_title(f"{title}: k = {k}")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=6)
    _save(fig, path)


def plot_loss_ratio(summary: pd.DataFrame, path: Path, title: str = "") -> None:
    """Each model's mean realised loss under ``L_n`` divided by No-Sharing's, against n
    (column ``ratio_to_ns``, with the 1.0 line), or the mean loss (``loss_mean``) without it.

    Examples
    --------
    >>> from clusterednb.examples import models as toy
    >>> summary = pd.DataFrame({"model": ["cs", "cs"], "n": [0, 3], "ratio_to_ns": [0.9, 1.1]})
    >>> path = toy.scratch_file("loss.png")
    >>> plot_loss_ratio(summary, path, "toy")
    >>> "<!-- loss / No-Sharing's loss -->" in path.with_suffix(".svg").read_text()
    True
    """
    ratio = "ratio_to_ns" in summary
    _lines(
        summary,
        "n",
        "ratio_to_ns" if ratio else "loss_mean",
        path,
        reference=1.0 if ratio else None,
        title=f"Asymmetric losses: {title}",
        xlabel="n (a false negative costs 2^n, a false positive 1)",
        ylabel="loss / No-Sharing's loss" if ratio else "mean loss",
    )


def plot_learning_curves(
    summary: pd.DataFrame,
    per_task: pd.DataFrame,
    out_dir: Path,
    title: str = "",
    max_tasks: int = 30,
) -> None:
    """The mean curve of every model, and a grid of per-task curves (first ``max_tasks``),
    as ``curves_mean.png`` and ``curves_per_task.png`` (with SVGs) in ``out_dir``.

    Examples
    --------
    >>> from clusterednb.examples import models as toy
    >>> summary = pd.DataFrame({"model": ["ns", "ns"], "fraction": [0.1, 0.5],
    ...                         "error_mean": [0.4, 0.2], "error_se": [0.05, 0.03]})
    >>> per_task = summary.rename(columns={"error_mean": "error"}).assign(task="ann")
    >>> out_dir = toy.scratch_file("curves")
    >>> out_dir.mkdir()
    >>> plot_learning_curves(summary, per_task, out_dir, "toy")
    >>> sorted(p.name for p in out_dir.iterdir())
    ['curves_mean.png', 'curves_mean.svg', 'curves_per_task.png', 'curves_per_task.svg']
    """
    _lines(
        summary,
        "fraction",
        "error_mean",
        out_dir / "curves_mean.png",
        yerr="error_se",
        log2=True,
        title=f"Learning curves: {title}",
        xlabel="fraction of every task's rows used for training",
        ylabel="0-1 error on held-out rows",
    )
    plt = _pyplot()
    tasks = sorted(per_task["task"].unique(), key=str)[:max_tasks]
    columns = 6
    rows_n = int(np.ceil(len(tasks) / columns))
    fig, axes = plt.subplots(
        rows_n,
        columns,
        figsize=(2.2 * columns, 1.7 * rows_n),
        sharex=True,
        sharey=True,
        squeeze=False,
    )
    for ax, task in zip(axes.ravel(), tasks, strict=False):
        for model, rows in per_task[per_task["task"] == task].groupby("model"):
            ax.plot(rows["fraction"], rows["error"], label=model, linewidth=1, **model_style(model))
        ax.set_xscale("log", base=2)
        ax.set_title(str(task), fontsize=7)
        ax.tick_params(labelsize=6)
    for ax in axes.ravel()[len(tasks) :]:
        ax.axis("off")
    axes.ravel()[0].legend(fontsize=5)
    _save(fig, out_dir / "curves_per_task.png")


def plot_evidence(summary: pd.DataFrame, path: Path, title: str = "") -> None:
    """Log Bayes factor against No-Sharing, against data size (legend: evidence kind).

    Examples
    --------
    >>> from clusterednb.examples import models as toy
    >>> summary = pd.DataFrame({"model": ["cs", "cs"], "n_rows": [10, 40],
    ...                         "log_bf_vs_ns": [2.0, -5.0], "kind": ["exact", "exact"]})
    >>> path = toy.scratch_file("evidence.png")
    >>> plot_evidence(summary, path, "toy")
    >>> "<!-- cs (exact) -->" in path.with_suffix(".svg").read_text()
    True
    """
    _lines(
        summary,
        "n_rows",
        "log_bf_vs_ns",
        path,
        reference=0.0,
        label="kind",
        title=f"Evidence: {title}",
        xlabel="labelled rows in the subset",
        ylabel="log Bayes factor against No-Sharing",
    )


def plot_coclustering(
    matrix: np.ndarray,
    partition: np.ndarray,
    path: Path,
    title: str,
    labels: list[str] | None = None,
    tree: np.ndarray | None = None,
) -> None:
    """Co-clustering heat map, task names on both axes, tasks in the order of the MAP
    partition's clusters; with a BHC ``tree`` (scipy linkage), the dendrogram is drawn beside
    it in the same order, its links coloured by MAP cluster (grey above the cut, where
    clusters join).

    Examples
    --------
    >>> from clusterednb.examples import models as toy
    >>> matrix = np.array([[1.0, 0.1, 0.9], [0.1, 1.0, 0.2], [0.9, 0.2, 1.0]])
    >>> path = toy.scratch_file("coclustering.png")
    >>> plot_coclustering(matrix, np.array([0, 1, 0]), path, "toy", ["ann", "bob", "cy"])
    >>> svg = path.with_suffix(".svg").read_text()
    >>> svg.count("<!-- cy -->")  # names on both axes, ann and cy side by side
    2
    """
    plt = _pyplot()
    n = matrix.shape[0]
    labels = labels if labels is not None else [str(i) for i in range(n)]
    size = max(4.4, 0.14 * n + 2.0)
    if tree is not None and n > 1:
        from scipy.cluster.hierarchy import dendrogram

        fig, (left, ax) = plt.subplots(
            1, 2, figsize=(size + 2.2, size), gridspec_kw={"width_ratios": [1, 3]}
        )
        cluster_of_node = _cluster_of_nodes(tree, partition)
        drawn = dendrogram(
            tree,
            orientation="left",
            ax=left,
            no_labels=True,
            link_color_func=lambda node: _cluster_colour(cluster_of_node[node]),
        )
        order = np.array(drawn["leaves"])[::-1]
        left.set_ylim(0, 10 * n)  # leaf i at 10 i + 5: row by row with the heat map
        left.set_xlabel("merge rank")
        left.set_title("BHC tree (grey: above the cut)", fontsize=8)
        left.set_yticks([])
    else:
        fig, ax = plt.subplots(figsize=(size + 0.8, size))
        order = np.argsort(partition, kind="stable")
    # Beside a tree the map fills its axes, so each row sits level with its leaf.
    aspect = "auto" if tree is not None and n > 1 else "equal"
    image = ax.imshow(matrix[np.ix_(order, order)], vmin=0, vmax=1, cmap="viridis", aspect=aspect)
    fig.colorbar(image, ax=ax, label="P(same cluster | data)")
    font = 7 if n <= 40 else 5
    if n <= 120:
        ax.set_xticks(range(n), [labels[i] for i in order], rotation=90, fontsize=font)
        ax.set_yticks(range(n), [labels[i] for i in order], fontsize=font)
    ax.set_title(title, fontsize=9)
    ax.set_xlabel("task (grouped by MAP cluster)")
    ax.set_ylabel("task")
    _save(fig, path)


def _cluster_colour(cluster: int) -> str:
    return "#999999" if cluster < 0 else PALETTE[cluster % len(PALETTE)]


def _cluster_of_nodes(tree: np.ndarray, partition: np.ndarray) -> dict[int, int]:
    """Each node of a linkage tree: the MAP cluster of all its leaves, or -1 if they differ."""
    n = partition.size
    cluster = {leaf: int(partition[leaf]) for leaf in range(n)}
    for i, (a, b) in enumerate(tree[:, :2].astype(int)):
        same = cluster[a] == cluster[b] and cluster[a] >= 0
        cluster[n + i] = cluster[a] if same else -1
    return cluster


def plot_n_clusters(table: pd.DataFrame, path: Path, title: str) -> None:
    """``P(number of clusters | data)`` as bars, one group per model (columns ``model``,
    ``n_clusters``, ``probability``).

    Examples
    --------
    >>> from clusterednb.examples import models as toy
    >>> table = pd.DataFrame({"model": ["cnb-gibbs"] * 2, "n_clusters": [1, 2],
    ...                       "probability": [0.3, 0.7]})
    >>> path = toy.scratch_file("n_clusters.png")
    >>> plot_n_clusters(table, path, "P(number of clusters)")
    >>> path.exists() and path.with_suffix(".svg").exists()
    True
    """
    plt = _pyplot()
    models = list(dict.fromkeys(table["model"]))
    width = 0.8 / max(len(models), 1)
    fig, ax = plt.subplots(figsize=(6.5, 3.6))
    for i, model in enumerate(models):
        rows = table[table["model"] == model]
        ax.bar(
            rows["n_clusters"] + (i - (len(models) - 1) / 2) * width,
            rows["probability"],
            width=width,
            label=model,
            color=model_style(model)["color"],
        )
    ax.set_xlabel("number of clusters")
    ax.set_ylabel("posterior probability")
    ax.set_title(title, fontsize=9)
    ax.grid(alpha=0.3, axis="y")
    ax.legend(fontsize=8)
    _save(fig, path)


def plot_dendrogram(linkage: np.ndarray, labels: list[str], path: Path, title: str) -> None:
    """The BHC tree (heights are merge ranks).

    Examples
    --------
    >>> from clusterednb.examples import models as toy
    >>> linkage = np.array([[0.0, 2.0, 1.0, 2.0], [1.0, 3.0, 2.0, 3.0]])  # (ann, cy), then bob
    >>> path = toy.scratch_file("tree.png")
    >>> plot_dendrogram(linkage, ["ann", "bob", "cy"], path, "toy")
    >>> "<!-- bob -->" in path.with_suffix(".svg").read_text()
    True
    """
    from scipy.cluster.hierarchy import dendrogram

    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(max(6.0, 0.12 * len(labels)), 4.0))
    dendrogram(linkage, labels=labels, ax=ax, leaf_font_size=6)
    ax.set_title(title, fontsize=9)
    ax.set_ylabel("merge rank")
    _save(fig, path)

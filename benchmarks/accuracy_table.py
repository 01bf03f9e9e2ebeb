"""Render protocol T's results as a markdown table: mean AUC ± SE by k.

Usage: python benchmarks/accuracy_table.py OUT_DIR [REFERENCE] [--split]

``OUT_DIR`` is the folder given to ``cnb evaluate``. With ``REFERENCE`` (a model name, e.g.
``lr-pooled``) each cell also shows the paired difference to that model with its 95 %
interval over targets (:func:`clusterednb.evaluation.headline.headline_table`), read from the
per-split results. With ``--split`` (for runs of many k) the AUCs, the paired differences
and the mean log-loss come as three narrower tables.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd

from clusterednb.evaluation.headline import headline_table


def markdown_table(summary: pd.DataFrame) -> str:
    """Models as rows, k as columns, ``AUC ± SE`` in each cell; the best mean in bold.

    ``summary`` has columns ``model``, ``k``, ``auc_mean``, ``auc_se`` and, optionally,
    ``diff_mean``, ``diff_low``, ``diff_high`` (shown below the AUC where present).
    """
    texts = []
    for row in summary.itertuples():
        text = f"{row.auc_mean:.3f} ± {row.auc_se:.3f}"
        diff = getattr(row, "diff_mean", float("nan"))
        if pd.notna(diff):
            text += f"<br>{diff:+.3f} [{row.diff_low:+.3f}, {row.diff_high:+.3f}]"
        texts.append(text)
    cells = summary.assign(text=texts)
    best = summary.groupby("k")["auc_mean"].transform("max")
    bold = summary["auc_mean"] == best
    cells.loc[bold, "text"] = "**" + cells.loc[bold, "text"].str.replace("<br>", "**<br>", n=1)
    cells.loc[bold & ~cells["text"].str.contains("<br>"), "text"] += "**"
    return pivot_table(cells, "text")


def pivot_table(values: pd.DataFrame, column: str) -> str:
    """Models as rows, k as columns, the text in ``column``."""
    table = values.pivot(index="model", columns="k", values=column).fillna("")
    header = "| model | " + " | ".join(f"k = {k}" for k in table.columns) + " |"
    rule = "|---" * (len(table.columns) + 1) + "|"
    rows = [f"| {model} | " + " | ".join(row) + " |" for model, row in table.iterrows()]
    return "\n".join([header, rule, *rows])


def split_tables(splits: pd.DataFrame, reference: str) -> str:
    """AUC ± SE (best in bold), paired differences to ``reference``, and mean log-loss."""
    summary = headline_table(splits, reference=reference)
    auc = markdown_table(summary.drop(columns=["diff_mean"], errors="ignore"))
    compared = summary[summary["model"] != reference].assign(
        text=lambda t: [
            f"{m:+.3f} [{lo:+.3f}, {hi:+.3f}]"
            for m, lo, hi in zip(t["diff_mean"], t["diff_low"], t["diff_high"], strict=True)
        ]
    )
    used = splits[splits["skipped"].astype(str).str.lower() != "true"]
    loss = used.groupby(["model", "k", "target"])["logloss"].mean().groupby(["model", "k"]).mean()
    loss = loss.reset_index().assign(text=lambda t: t["logloss"].map("{:.3f}".format))
    return "\n\n".join(
        [
            "AUC, mean ± s.e. over targets:\n\n" + auc,
            f"Paired difference to {reference} (95 % interval over targets):\n\n"
            + pivot_table(compared, "text"),
            "Log-loss, mean over targets:\n\n" + pivot_table(loss, "text"),
        ]
    )


if __name__ == "__main__":
    arguments = [a for a in sys.argv[1:] if a != "--split"]
    folder = Path(arguments[0])
    if len(arguments) > 1:
        splits = pd.read_csv(folder / "transfer_splits.csv")
        if "--split" in sys.argv:
            print(split_tables(splits, arguments[1]))
        else:
            print(markdown_table(headline_table(splits, reference=arguments[1])))
    else:
        print(markdown_table(pd.read_csv(folder / "transfer.csv")))

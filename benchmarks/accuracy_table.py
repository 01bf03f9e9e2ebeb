"""Render protocol T's results as a markdown table: mean AUC ± SE by k.

Usage: python benchmarks/accuracy_table.py OUT_DIR [REFERENCE]

``OUT_DIR`` is the folder given to ``cnb evaluate``. With ``REFERENCE`` (a model name, e.g.
``lr-pooled``) each cell also shows the paired difference to that model with its 95 %
interval over targets (:func:`clusterednb.evaluation.headline.headline_table`), read from the
per-split results.
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
    table = cells.pivot(index="model", columns="k", values="text").fillna("")
    header = "| model | " + " | ".join(f"k = {k}" for k in table.columns) + " |"
    rule = "|---" * (len(table.columns) + 1) + "|"
    rows = [f"| {model} | " + " | ".join(row) + " |" for model, row in table.iterrows()]
    return "\n".join([header, rule, *rows])


if __name__ == "__main__":
    folder = Path(sys.argv[1])
    if len(sys.argv) > 2:
        splits = pd.read_csv(folder / "transfer_splits.csv")
        print(markdown_table(headline_table(splits, reference=sys.argv[2])))
    else:
        print(markdown_table(pd.read_csv(folder / "transfer.csv")))

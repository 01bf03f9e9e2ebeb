"""Render a transfer summary (``transfer.csv``) as a markdown table: mean AUC ± SE by k.

Usage: python benchmarks/accuracy_table.py OUT_DIR  (the folder given to ``cnb evaluate``)
"""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd


def markdown_table(summary: pd.DataFrame) -> str:
    """Models as rows, k as columns, ``AUC ± SE`` in each cell; the best mean in bold."""
    cells = summary.assign(
        text=[
            f"{m:.3f} ± {s:.3f}"
            for m, s in zip(summary["auc_mean"], summary["auc_se"], strict=True)
        ]
    )
    best = summary.groupby("k")["auc_mean"].transform("max")
    cells.loc[summary["auc_mean"] == best, "text"] = "**" + cells["text"] + "**"
    table = cells.pivot(index="model", columns="k", values="text").fillna("")
    header = "| model | " + " | ".join(f"k={k}" for k in table.columns) + " |"
    rule = "|---" * (len(table.columns) + 1) + "|"
    rows = [f"| {model} | " + " | ".join(row) + " |" for model, row in table.iterrows()]
    return "\n".join([header, rule, *rows])


if __name__ == "__main__":
    print(markdown_table(pd.read_csv(Path(sys.argv[1]) / "transfer.csv")))

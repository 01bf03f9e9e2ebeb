"""One model in two protocol-T runs on the same splits (e.g. this tree and an earlier commit):
the paired AUC difference by k.

Usage: python benchmarks/paired_runs.py NEW_DIR OLD_DIR [--model cnb-logistic]
       [--reference lr-pooled]

Both folders are ``cnb evaluate`` outputs of the same data set, seed and targets. For each k:
the number of splits found in both, the mean AUC of each run, the mean paired difference
(new − old) with its standard error over splits, and the largest difference either way. With
``--reference`` (a model run in ``NEW_DIR``), the new run's paired difference to it as well.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd

SPLIT = ["target", "repetition", "k"]


def aucs(folder: Path, model: str) -> pd.Series:
    """The AUC of every split ``model`` was scored on, indexed by target, repetition, k."""
    table = pd.read_csv(folder / "transfer_splits.csv")
    scored = table[(table["model"] == model) & ~table["skipped"].astype(bool)]
    if scored.empty:
        raise SystemExit(f"{folder}: no scored split of model {model!r}")
    return scored.set_index(SPLIT)["auc"]


def paired(new: pd.Series, old: pd.Series) -> pd.DataFrame:
    """Per k: splits, both means, the mean difference ± s.e., its extremes."""
    both = pd.concat({"new": new, "old": old}, axis=1, join="inner")
    both["difference"] = both["new"] - both["old"]
    by_k = both.groupby(level="k")
    return pd.DataFrame(
        {
            "splits": by_k.size(),
            "new": by_k["new"].mean(),
            "old": by_k["old"].mean(),
            "difference": by_k["difference"].mean(),
            "se": by_k["difference"].sem(),
            "lowest": by_k["difference"].min(),
            "highest": by_k["difference"].max(),
        }
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("new", type=Path)
    parser.add_argument("old", type=Path)
    parser.add_argument("--model", default="cnb-logistic")
    parser.add_argument("--reference")
    args = parser.parse_args()
    new = aucs(args.new, args.model)
    print(f"{args.model}: {args.new} against {args.old}")
    print(paired(new, aucs(args.old, args.model)).round(4).to_string())
    if args.reference:
        print(f"\n{args.model} against {args.reference}, both in {args.new}")
        print(paired(new, aucs(args.new, args.reference)).round(4).to_string())


if __name__ == "__main__":
    main()

"""Merge the per-split results of protocol-T runs made on the same splits into one folder.

Usage: python benchmarks/merge_runs.py OUT_DIR RUN_DIR [RUN_DIR ...] [--rename RUN_DIR:OLD=NEW]

A split (target, repetition, k) depends on the seed, the sampled targets and k only, not on
the other k of a run or on its models, so runs with the same ``seed``, ``n_targets``,
``repeats``, ``transductive`` and ``n_bins`` can be merged: a model too slow for the main run
is run alone and still compared split by split. The runs' settings are checked equal; a model
found in several runs (the reference, say) must agree in every shared split, to the last
digit, or nothing is written. ``OUT_DIR/transfer_splits.csv`` then feeds
``benchmarks/accuracy_table.py``. ``--rename`` renames a model of one run before merging (a
model whose meaning changed since that run: on documents ``lr-hier`` was fitted at
``C = s = 1`` before 2026-11-25, which is now ``lr-hier-fixed``).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import pandas as pd

SAME = ("seed", "n_targets", "repeats", "transductive", "n_bins")
KEY = ["model", "target", "repetition", "k"]


def merged(folders: list[Path], renames: dict[Path, dict[str, str]] | None = None) -> pd.DataFrame:
    """The union of the runs' splits (models renamed per run as ``renames`` says); raises
    ``SystemExit`` on runs that do not pair."""
    settings = [json.loads((f / "transfer_settings.json").read_text()) for f in folders]
    for folder, other in zip(folders[1:], settings[1:], strict=True):
        differ = [name for name in SAME if other.get(name) != settings[0].get(name)]
        if differ:
            sys.exit(f"{folder}: settings {differ} differ from {folders[0]}'s")
    renames = renames or {}
    frames = [
        pd.read_csv(f / "transfer_splits.csv").replace({"model": renames.get(f, {})})
        for f in folders
    ]
    splits = pd.concat(frames, ignore_index=True)
    repeated = splits[splits.duplicated(KEY, keep=False)]
    for _, group in repeated.groupby(KEY):
        values = group[["skipped", "auc", "logloss"]].astype(str).drop_duplicates()
        if len(values) > 1:
            sys.exit(f"runs disagree on {dict(zip(KEY, group.iloc[0][KEY], strict=True))}")
    return splits.drop_duplicates(KEY).sort_values(KEY, ignore_index=True)


def renaming(text: str) -> tuple[Path, str, str]:
    """``RUN_DIR:OLD=NEW`` → (folder, old name, new name)."""
    folder, _, names = text.rpartition(":")
    old, _, new = names.partition("=")
    if not folder or not old or not new:
        raise argparse.ArgumentTypeError(f"expected RUN_DIR:OLD=NEW, got {text!r}")
    return Path(folder), old, new


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("runs", type=Path, nargs="+")
    parser.add_argument("--rename", type=renaming, action="append", default=[])
    args = parser.parse_args()
    renames: dict[Path, dict[str, str]] = {}
    for folder, old, new in args.rename:
        if folder not in args.runs:
            sys.exit(f"--rename names {folder}, which is not one of the runs")
        renames.setdefault(folder, {})[old] = new
    args.out.mkdir(parents=True, exist_ok=True)
    result = merged(args.runs, renames)
    result.to_csv(args.out / "transfer_splits.csv", index=False)
    print(f"{len(result)} split results of {result['model'].nunique()} models -> {args.out}")

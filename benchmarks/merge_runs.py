"""Merge the per-split results of protocol-T runs made on the same splits into one folder.

Usage: python benchmarks/merge_runs.py OUT_DIR RUN_DIR [RUN_DIR ...]

A split (target, repetition, k) depends on the seed, the sampled targets and k only, not on
the other k of a run or on its models, so runs with the same ``seed``, ``n_targets``,
``repeats``, ``transductive`` and ``n_bins`` can be merged: a model too slow for the main run
is run alone and still compared split by split. The runs' settings are checked equal; a model
found in several runs (the reference, say) must agree in every shared split, to the last
digit, or nothing is written. ``OUT_DIR/transfer_splits.csv`` then feeds
``benchmarks/accuracy_table.py``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pandas as pd

SAME = ("seed", "n_targets", "repeats", "transductive", "n_bins")
KEY = ["model", "target", "repetition", "k"]


def merged(folders: list[Path]) -> pd.DataFrame:
    """The union of the runs' splits; raises ``SystemExit`` on runs that do not pair."""
    settings = [json.loads((f / "transfer_settings.json").read_text()) for f in folders]
    for folder, other in zip(folders[1:], settings[1:], strict=True):
        differ = [name for name in SAME if other.get(name) != settings[0].get(name)]
        if differ:
            sys.exit(f"{folder}: settings {differ} differ from {folders[0]}'s")
    frames = [pd.read_csv(f / "transfer_splits.csv") for f in folders]
    splits = pd.concat(frames, ignore_index=True)
    repeated = splits[splits.duplicated(KEY, keep=False)]
    for _, group in repeated.groupby(KEY):
        values = group[["skipped", "auc", "logloss"]].astype(str).drop_duplicates()
        if len(values) > 1:
            sys.exit(f"runs disagree on {dict(zip(KEY, group.iloc[0][KEY], strict=True))}")
    return splits.drop_duplicates(KEY).sort_values(KEY, ignore_index=True)


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    result = merged([Path(folder) for folder in sys.argv[2:]])
    result.to_csv(out / "transfer_splits.csv", index=False)
    print(f"{len(result)} split results of {result['model'].nunique()} models -> {out}")

"""Resumable result files: finished cells are appended as they complete."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pandas as pd

from clusterednb.exceptions import CNBError


class CellStore:
    """Finished cells' rows in ``OUT/NAME_splits.csv``; the settings in ``NAME_settings.json``.

    A run folder belongs to one set of settings: reopening it with other settings raises, so
    results of different runs never mix. Each cell's rows are written with one ``write``
    followed by ``fsync``, so a crash loses at most the cell in progress.

    Parameters
    ----------
    out_dir : path
    name : str
        Protocol name, the prefix of the files.
    settings : dict
        JSON-ready settings of the run.
    columns : list of str
        Column order of the rows file.
    """

    def __init__(
        self, out_dir: str | Path, name: str, settings: dict[str, Any], columns: list[str]
    ) -> None:
        self.out_dir = Path(out_dir)
        self.rows_path = self.out_dir / f"{name}_splits.csv"
        self.columns = columns
        settings_path = self.out_dir / f"{name}_settings.json"
        record = json.loads(json.dumps(settings))
        if settings_path.exists():
            previous = json.loads(settings_path.read_text())
            if previous != record:
                raise CNBError(
                    f"{self.out_dir} holds a {name} run with other settings ({previous}); use "
                    "another --out folder to start a new run"
                )
        else:
            self.out_dir.mkdir(parents=True, exist_ok=True)
            settings_path.write_text(json.dumps(record, indent=1))

    def rows(self) -> pd.DataFrame:
        """Every row written so far (empty frame with the columns if none)."""
        if not self.rows_path.exists():
            return pd.DataFrame(columns=self.columns)
        return pd.read_csv(self.rows_path)

    def done(self, keys: list[str]) -> set[tuple[str, ...]]:
        """The finished cells, as tuples of the ``keys`` columns rendered as strings."""
        rows = self.rows()
        return set(zip(*(rows[k].astype(str) for k in keys), strict=True)) if len(rows) else set()

    def append(self, rows: list[dict[str, Any]]) -> None:
        """Append one finished cell's rows."""
        block = pd.DataFrame(rows, columns=self.columns)
        text = block.to_csv(index=False, header=not self.rows_path.exists())
        with self.rows_path.open("a") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())

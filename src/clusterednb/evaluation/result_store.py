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

    Examples
    --------
    >>> from clusterednb.examples import models as toy
    >>> out = toy.scratch_file("run")
    >>> store = CellStore(out, "transfer", {"seed": 0}, ["target", "k", "auc"])
    >>> CellStore(out, "transfer", {"seed": 1}, ["target", "k", "auc"])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    clusterednb.exceptions.CNBError: ... holds a transfer run with other settings ({'seed': 0}); ...
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
        """Every row written so far (empty frame with the columns if none).

        Examples
        --------
        >>> from clusterednb.examples import models as toy
        >>> store = CellStore(toy.scratch_file("run"), "transfer", {}, ["target", "auc"])
        >>> store.rows().columns.tolist(), len(store.rows())
        (['target', 'auc'], 0)
        """
        if not self.rows_path.exists():
            return pd.DataFrame(columns=self.columns)
        return pd.read_csv(self.rows_path)

    def done(self, keys: list[str]) -> set[tuple[str, ...]]:
        """The finished cells, as tuples of the ``keys`` columns rendered as strings.

        Examples
        --------
        >>> from clusterednb.examples import models as toy
        >>> store = CellStore(toy.scratch_file("run"), "transfer", {}, ["target", "k", "auc"])
        >>> store.append([{"target": "ann", "k": 4, "auc": 0.8}])
        >>> store.done(["target", "k"])
        {('ann', '4')}
        """
        rows = self.rows()
        return set(zip(*(rows[k].astype(str) for k in keys), strict=True)) if len(rows) else set()

    def append(self, rows: list[dict[str, Any]]) -> None:
        """Append one finished cell's rows (one write, then ``fsync``).

        Examples
        --------
        >>> from clusterednb.examples import models as toy
        >>> store = CellStore(toy.scratch_file("run"), "transfer", {}, ["target", "auc"])
        >>> store.append([{"target": "ann", "auc": 0.8}])
        >>> store.append([{"target": "bob", "auc": 0.7}])
        >>> store.rows_path.read_text().splitlines()  # one header
        ['target,auc', 'ann,0.8', 'bob,0.7']
        """
        block = pd.DataFrame(rows, columns=self.columns)
        text = block.to_csv(index=False, header=not self.rows_path.exists())
        with self.rows_path.open("a") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())

"""Batches of per-task counts streamed from Parquet event files, for the streamed engines.

:class:`ParquetTaskBatches` is a :data:`~clusterednb.inference.variational.stream.TaskBatches`
source: one batch per Parquet file, every task's events in one file (partition the events by
task when writing them). The first pass reads each file and counts it
(:func:`~clusterednb.distributed.shards.shard_counts`), keeping the sparse counts in a cache
folder as NPZ; later passes read the cache. Memory holds one file's events at a time.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import sparse

from clusterednb.data.schema import FeatureSchema
from clusterednb.distributed.shards import shard_counts
from clusterednb.exceptions import DataError


class ParquetTaskBatches:
    """Per-task counts of Parquet event files, one batch per file, read again at each call.

    Parameters
    ----------
    paths : sequence of str or Path
        Parquet files of events (columns ``task``, ``label`` and the schema's features); a
        task must not appear in two files.
    task, label : str
        Column names (a missing label marks an unlabelled event, which is not counted).
    schema : FeatureSchema
        Fixed categories (an unknown value in a file is an error).
    cache_dir : str or Path
        Where the counts of each file are kept after the first pass (created if absent).

    Attributes
    ----------
    task_ids : ndarray of shape (n_tasks,)
        The tasks in batch order, once the first pass is done.

    Examples
    --------
    >>> import tempfile
    >>> from clusterednb.distributed.shards import schema_from_distinct
    >>> folder = Path(tempfile.mkdtemp())
    >>> frame = pd.DataFrame({"user": [1, 1, 2], "label": [0, 1, 1], "f": ["a", "b", "a"]})
    >>> frame.to_parquet(folder / "part-0.parquet")
    >>> schema = schema_from_distinct(["f"], [0, 1], [["a", "b"]])
    >>> batches = ParquetTaskBatches([folder / "part-0.parquet"], "user", "label", schema,
    ...                              folder / "cache")
    >>> [cells.toarray().tolist() for cells, _ in batches()]
    [[[1, 0, 0, 1], [0, 0, 1, 0]]]
    >>> batches.task_ids.tolist()
    [1, 2]
    """

    def __init__(
        self,
        paths: Sequence[str | Path],
        task: str,
        label: str,
        schema: FeatureSchema,
        cache_dir: str | Path,
    ) -> None:
        self.paths = [Path(p) for p in paths]
        self.task, self.label, self.schema = task, label, schema
        self.cache_dir = Path(cache_dir)
        self._ids: list[np.ndarray] = []

    @property
    def task_ids(self) -> np.ndarray:
        """The tasks in batch order; known once a first pass has read every file.

        Examples
        --------
        >>> from clusterednb.examples import models as toy
        >>> folder = toy.scratch_file("events")
        >>> folder.mkdir()
        >>> pd.DataFrame({"user": ["ann", "bob"], "label": [0, 1], "colour": ["red", "blue"]}
        ...              ).to_parquet(folder / "part-0.parquet")
        >>> batches = ParquetTaskBatches([folder / "part-0.parquet"], "user", "label",
        ...                              toy.colour_schema(), folder / "cache")
        >>> batches.task_ids
        Traceback (most recent call last):
        ...
        clusterednb.exceptions.DataError: the task ids are known after a first pass over the batches
        >>> _ = list(batches())
        >>> batches.task_ids.tolist()
        ['ann', 'bob']
        """
        if len(self._ids) < len(self.paths):
            raise DataError("the task ids are known after a first pass over the batches")
        return np.concatenate(self._ids)

    def __call__(self) -> Iterator[tuple[sparse.csr_matrix, np.ndarray]]:
        self.cache_dir.mkdir(parents=True, exist_ok=True)
        counted = False
        for i, path in enumerate(self.paths):
            cached = self.cache_dir / f"batch-{i}.npz"
            if i < len(self._ids) and cached.exists():
                with np.load(cached) as stored:
                    cells = sparse.csr_matrix(
                        (stored["data"], stored["indices"], stored["indptr"]),
                        shape=tuple(stored["shape"]),
                    )
                    yield cells, stored["labels"]
                continue
            counted = True
            yield self._count(i, path, cached)
        if counted:  # a file was read: its tasks must be in no other file
            ids = pd.Index(np.concatenate(self._ids))
            if not ids.is_unique:
                raise DataError(
                    f"task {ids[ids.duplicated()][0]!r} has events in more than one file: "
                    "each task's events must be in one file"
                )

    def _count(self, i: int, path: Path, cached: Path) -> tuple[sparse.csr_matrix, np.ndarray]:
        columns = [self.task, self.label, *self.schema.feature_names]
        try:
            frame = pd.read_parquet(path, columns=columns)
        except (OSError, ValueError) as error:
            raise DataError(f"{path}: cannot read it as Parquet events: {error}") from error
        part = shard_counts(frame, self.task, self.label, self.schema)
        cells = part.cells
        small = cells.data.size == 0 or cells.data.max() < np.iinfo(np.int32).max
        data = cells.data.astype(np.int32 if small else np.int64)
        np.savez(
            cached,
            data=data,
            indices=cells.indices.astype(np.int32),
            indptr=cells.indptr.astype(np.int64),
            shape=np.array(cells.shape),
            labels=part.label_counts,
        )
        ids = pd.Index(part.task_ids).to_numpy()
        if i < len(self._ids):
            self._ids[i] = ids
        else:
            self._ids.append(ids)
        return sparse.csr_matrix((data, cells.indices, cells.indptr), shape=cells.shape), (
            part.label_counts
        )

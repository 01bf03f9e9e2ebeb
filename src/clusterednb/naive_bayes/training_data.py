"""From raw training rows to what the estimators keep: schema, task ids, counts, unlabelled rows.

One pass per chunk: the schema is inferred or extended, the rows are encoded and checked
(unknown categories reported in the same pass), and the chunk's per-task :class:`Counts` are
built; :func:`merge` adds a chunk to what an estimator holds (the schema may have grown, new
tasks are appended), so fitting in chunks equals fitting at once.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy import sparse

from clusterednb.data import guards
from clusterednb.data.dataset import factorize_tasks, index_tasks
from clusterednb.data.guards import (
    check_count_size,
    dense_count_bytes,
)
from clusterednb.data.schema import FeatureSchema
from clusterednb.data.text import as_document_term, document_schema
from clusterednb.data.values import as_vector, ordered_unique
from clusterednb.estimation.training_table import check_labels, read_table
from clusterednb.exceptions import CNBError, DataError
from clusterednb.stats.counts import Counts, document_counts
from clusterednb.stats.sparse_counts import SparseCounts, as_sparse


@dataclass(frozen=True)
class Chunk:
    """What one batch of training rows adds.

    Attributes
    ----------
    schema : FeatureSchema
        The schema after this chunk (inferred, extended or fixed).
    task_ids : ndarray of shape (n_chunk_tasks,)
    counts : Counts or SparseCounts with n_chunk_tasks groups
    unlabelled_X : ndarray of shape (n_unlabelled, n_features), int32, or sparse matrix
        Codes of the rows whose label is missing (-1: a missing value); for documents kept
        for transductive selection, their CSR word counts (n_unlabelled, n_words).
    unlabelled_task : ndarray of shape (n_unlabelled,)
        Their task's position in ``task_ids``.

    Examples
    --------
    >>> frame = pd.DataFrame({"room": ["a", "b", "a"]})
    >>> first = rows_chunk(frame, [1, 0, None], ["u", "u", "v"], Context(None, None, None),
    ...                    "warn", "demo")
    >>> first.task_ids.tolist(), first.counts.label_counts.tolist(), first.unlabelled_task.tolist()
    (['u', 'v'], [[1, 1], [0, 0]], [1])
    """

    schema: FeatureSchema
    task_ids: np.ndarray
    counts: Counts
    unlabelled_X: np.ndarray
    unlabelled_task: np.ndarray


@dataclass(frozen=True)
class Context:
    """What a chunk is read against.

    Attributes
    ----------
    held : Chunk or None
        What the estimator holds already (None on a first fit).
    fixed_schema : FeatureSchema or None
        The estimator's ``schema`` parameter.
    classes : sequence or None
        Declared labels.
    sparse_counts : bool, default=False
        Whether the estimator's engine reads per-task counts kept sparse: then a fit whose
        dense count table would exceed :data:`~clusterednb.data.guards.SPARSE_COUNT_BYTES`
        keeps them as :class:`~clusterednb.stats.sparse_counts.SparseCounts`.

    Examples
    --------
    >>> Context(held=None, fixed_schema=None, classes=["no", "yes"]).classes
    ['no', 'yes']
    """

    held: Chunk | None
    fixed_schema: FeatureSchema | None
    classes: Any
    sparse_counts: bool = False


def rows_chunk(
    X: Any,
    y: Any,
    tasks: Any,
    context: Context,
    handle_unknown: str,
    who: str,
    numeric: Any = None,
    n_bins: int = 10,
) -> Chunk:
    """Encode categorical rows into a :class:`Chunk` (the schema inferred, grown or fixed).

    Parameters
    ----------
    X : DataFrame or array-like of shape (n_rows, n_features)
    y : array-like of shape (n_rows,)
        Labels; missing marks an unlabelled row.
    tasks : array-like of shape (n_rows,)
    context : Context
    handle_unknown : {"warn", "error", "ignore"}
    who : str
        The estimator's name, for messages.
    numeric : "auto", sequence of str or None
        Columns read as numbers when the schema is inferred (a first fit): cut into
        ``n_bins`` quantile bins of these rows, the edges kept in the schema
        (:func:`~clusterednb.data.numeric.numeric_columns`).
    n_bins : int

    Examples
    --------
    >>> frame = pd.DataFrame({"room": ["a", "b", "a"]})
    >>> first = rows_chunk(frame, [1, 0, None], ["u", "u", "v"], Context(None, None, None),
    ...                    "warn", "demo")
    >>> first.schema.categories, first.unlabelled_X.tolist()
    ((('a', 'b'),), [[0]])
    """
    held = context.held
    table = read_table(
        X,
        y,
        tasks,
        who,
        classes=context.classes,
        fixed_schema=context.fixed_schema,
        held_schema=held.schema if held else None,
        numeric=numeric,
        n_bins=n_bins,
        handle_unknown=handle_unknown,
    )
    schema, data = table.schema, table.rows
    n_all_tasks = data.n_tasks + (held.task_ids.size if held else 0)
    held_sparse = held is not None and isinstance(held.counts, SparseCounts)
    counts: Counts | SparseCounts
    if context.sparse_counts and (
        held_sparse or dense_count_bytes(schema, n_all_tasks) > guards.SPARSE_COUNT_BYTES
    ):
        counts = SparseCounts.from_codes(data.X, data.y, data.task_index, data.n_tasks, schema)
    else:
        check_count_size(schema, n_all_tasks)
        counts = Counts.from_codes(
            data.X,
            data.y,
            data.task_index,
            n_tasks=data.n_tasks,
            n_classes=schema.n_classes,
            offsets=schema.offsets,
        )
    unlabelled = data.y < 0
    return Chunk(schema, data.task_ids, counts, data.X[unlabelled], data.task_index[unlabelled])


def documents_chunk(
    X: Any,
    y: Any,
    tasks: Any,
    context: Context,
    observation: str,
    n_words: int | None,
    semi_supervised: bool | str,
    keep_unlabelled: bool = False,
) -> Chunk:
    """Count a document–term matrix into a :class:`Chunk` (Bernoulli or multinomial events).

    Unlabelled documents are counted in no class: semi-supervised learning is not available
    for documents, so they are refused unless ``semi_supervised`` is False or "auto". With
    ``keep_unlabelled`` (transductive selection) the chunk keeps them, as CSR word counts.
    ``n_words`` is the fitted vocabulary size (None on a first fit).

    Examples
    --------
    >>> from scipy import sparse
    >>> X = sparse.csr_matrix([[2, 0], [0, 1]])
    >>> chunk = documents_chunk(X, [1, 0], ["u", "u"], Context(None, None, None), "multinomial",
    ...                         None, False)
    >>> chunk.schema.feature_names, chunk.counts.value_counts[0].tolist()
    (('tokens',), [[0, 1], [2, 0]])
    """
    words = [str(c) for c in X.columns] if isinstance(X, pd.DataFrame) else None
    matrix = as_document_term(X, n_words)
    labels, task_values = as_vector(y), as_vector(tasks)
    if labels.shape != (matrix.shape[0],) or task_values.shape != (matrix.shape[0],):
        raise DataError(
            f"X has {matrix.shape[0]} documents but y has shape {labels.shape} and tasks "
            f"{task_values.shape}"
        )
    held, classes = context.held, context.classes
    if held is not None:
        schema = held.schema
    elif context.fixed_schema is not None:
        schema = context.fixed_schema
    else:
        found = tuple(classes) if classes is not None else ordered_unique(labels)
        names = words or [f"w{j}" for j in range(matrix.shape[1])]
        schema = document_schema(names, found, observation)
    codes = schema.encode_labels(labels)
    check_labels(schema, codes, held is not None)
    n_unlabelled = int((codes < 0).sum())
    if n_unlabelled and semi_supervised not in (False, "auto"):
        raise CNBError(
            "semi-supervised learning is not available for documents yet: remove the "
            f"{n_unlabelled} unlabelled documents or set semi_supervised=False"
        )
    task_index, task_ids = factorize_tasks(task_values)
    counts = document_counts(
        matrix, codes, task_index, task_ids.size, schema.n_classes, observation
    )
    if keep_unlabelled and n_unlabelled:
        unlabelled = np.flatnonzero(codes < 0)
        return Chunk(schema, task_ids, counts, matrix[unlabelled], task_index[unlabelled])
    empty = np.zeros((0, schema.n_features), dtype=np.int32)
    return Chunk(schema, task_ids, counts, empty, np.zeros(0, dtype=np.int64))


@dataclass(frozen=True)
class Reading:
    """How an estimator reads its training rows.

    Attributes
    ----------
    observation : str
        ``"categorical"`` rows, or ``"bernoulli"`` / ``"multinomial"`` documents.
    handle_unknown : str
        What an unseen category does (``"warn"``, ``"error"``, ``"ignore"``).
    semi_supervised : str
        The estimator's ``semi_supervised`` setting (documents keep unlabelled rows by it).
    keep_unlabelled : bool
        Keep unlabelled documents even without semi-supervision (transductive selection).
    reader : str
        The estimator's name, for messages.
    numeric : "auto", sequence of str or None
        Columns read as numbers on a first fit (see :func:`rows_chunk`).
    n_bins : int
        Quantile bins per numeric column.
    """

    observation: str = "categorical"
    handle_unknown: str = "warn"
    semi_supervised: str = "auto"
    keep_unlabelled: bool = False
    reader: str = "estimator"
    numeric: Any = None
    n_bins: int = 10


def training_chunk(
    X: Any, y: Any, tasks: Any, context: Context, reading: Reading, n_words: int | None
) -> Chunk:
    """The chunk of one batch of rows, read as ``reading.observation`` says: categorical
    rows (:func:`rows_chunk`) or documents (:func:`documents_chunk`); ``n_words`` is the
    vocabulary size already held (None on a first fit).

    Examples
    --------
    >>> from clusterednb.examples import naive_bayes as toy
    >>> X, y, tasks = toy.colour_rows()
    >>> chunk = training_chunk(X, y, tasks, Context(None, None, None), Reading(), None)
    >>> chunk.task_ids.tolist(), chunk.counts.label_counts.tolist()
    (['ann', 'bob', 'cy'], [[1, 2], [2, 1], [1, 2]])
    """
    if reading.observation == "categorical":
        return rows_chunk(
            X,
            y,
            tasks,
            context,
            reading.handle_unknown,
            reading.reader,
            reading.numeric,
            reading.n_bins,
        )
    return documents_chunk(
        X,
        y,
        tasks,
        context,
        reading.observation,
        n_words,
        reading.semi_supervised,
        keep_unlabelled=reading.keep_unlabelled,
    )


def merge(held: Chunk | None, chunk: Chunk) -> tuple[Chunk, np.ndarray]:
    """Add ``chunk`` to ``held``; return the result and the chunk's tasks' positions in it.

    Examples
    --------
    >>> frame = pd.DataFrame({"room": ["a", "b", "a"]})
    >>> first = rows_chunk(frame, [1, 0, None], ["u", "u", "v"], Context(None, None, None),
    ...                    "warn", "demo")
    >>> more = rows_chunk(pd.DataFrame({"room": ["c"]}), [1], ["w"],
    ...                   Context(first, None, None), "warn", "demo")
    >>> held, position = merge(first, more)
    >>> held.task_ids.tolist(), position.tolist(), held.schema.categories
    (['u', 'v', 'w'], [2], (('a', 'b', 'c'),))
    """
    if held is None:
        position = np.arange(chunk.task_ids.size)
        return (
            Chunk(
                chunk.schema,
                chunk.task_ids,
                chunk.counts,
                chunk.unlabelled_X,
                position[chunk.unlabelled_task],
            ),
            position,
        )
    schema, counts, stored = chunk.schema, held.counts, held.unlabelled_X
    if schema != held.schema and not sparse.issparse(stored):
        class_map, value_map = schema.index_maps(held.schema)
        counts = counts.remap(schema.n_classes, schema.n_values_total, class_map, value_map)
        flat = value_map[np.where(stored >= 0, stored + held.schema.offsets[:-1], 0)]
        stored = np.where(stored >= 0, flat - schema.offsets[:-1], -1).astype(np.int32)
    position = index_tasks(chunk.task_ids, held.task_ids)
    new = position < 0
    all_ids = np.concatenate([held.task_ids, chunk.task_ids[new]])
    position[new] = held.task_ids.size + np.arange(new.sum())
    merged = Chunk(
        schema,
        all_ids,
        _add_counts(counts.pad_groups(all_ids.size), position, chunk.counts),
        _stack_rows(stored, chunk.unlabelled_X),
        np.concatenate([held.unlabelled_task, position[chunk.unlabelled_task]]),
    )
    return merged, position


def _stack_rows(first: Any, second: Any) -> Any:
    """Unlabelled rows of two chunks one after the other: codes, or CSR documents when either
    holds documents (an empty side is dropped).

    Examples
    --------
    >>> docs = sparse.csr_matrix([[0, 2, 1]])
    >>> _stack_rows(np.zeros((0, 1), dtype=np.int32), docs).toarray().tolist()
    [[0, 2, 1]]
    >>> _stack_rows(docs, docs).shape
    (2, 3)
    """
    if not (sparse.issparse(first) or sparse.issparse(second)):
        return np.concatenate([first, second])
    parts = [m for m in (first, second) if sparse.issparse(m) or m.shape[0]]
    return sparse.vstack(parts, format="csr") if len(parts) > 1 else sparse.csr_matrix(parts[0])


def _add_counts(
    held: Counts | SparseCounts, position: np.ndarray, chunk: Counts | SparseCounts
) -> Counts | SparseCounts:
    """``held`` with the chunk's group ``i`` added to group ``position[i]``; sparse when
    either side is."""
    if isinstance(held, SparseCounts) or isinstance(chunk, SparseCounts):
        return as_sparse(held).add_at(position, chunk)
    return held.add_at(position, chunk)


def counts_chunk(counts: Counts, task_ids: Any, schema: FeatureSchema) -> Chunk:
    """A :class:`Chunk` of per-task counts computed elsewhere (checked against the schema).

    Examples
    --------
    >>> from clusterednb.data.schema import FeatureSchema
    >>> schema = FeatureSchema(("room",), (("a", "b"),), (0, 1))
    >>> counts = Counts(np.array([[1, 0]]), np.array([[[1, 0], [0, 0]]]))
    >>> counts_chunk(counts, ["u"], schema).task_ids.tolist()
    ['u']
    """
    ids = np.empty(len(task_ids), dtype=object)
    ids[:] = list(task_ids)
    expected = (ids.size, schema.n_classes, schema.n_values_total)
    if counts.value_counts.shape != expected:
        raise DataError(
            f"counts have shape {counts.value_counts.shape}, expected {expected} for "
            f"{ids.size} tasks on this schema"
        )
    if (counts.label_counts < 0).any() or (counts.value_counts < 0).any():
        raise DataError("counts must be non-negative")
    empty = np.zeros((0, schema.n_features), dtype=np.int32)
    return Chunk(schema, ids, counts, empty, np.zeros(0, dtype=np.int64))

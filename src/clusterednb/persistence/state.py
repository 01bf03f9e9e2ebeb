"""A fitted estimator's state as plain data (JSON metadata and arrays), and its checks.

:mod:`clusterednb.persistence.model_file` writes and reads the bytes; this module says what the
estimators' state is and checks, on the way back, that its parts fit together.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import sparse

from clusterednb.data.schema import FeatureSchema
from clusterednb.exceptions import CNBError
from clusterednb.inference.posterior import Posterior
from clusterednb.stats.counts import Counts
from clusterednb.stats.sparse_counts import SparseCounts

OPTIONAL_ARRAYS = ("unlabelled_proba", "em_objective", "calibration", "transductive_temperature")
_POSTERIOR = "posterior_"


@dataclass(frozen=True)
class ModelRecord:
    """What a model file holds besides the hyperparameters.

    Attributes
    ----------
    schema : FeatureSchema
    task_ids : ndarray of shape (n_tasks,), object
    meta : dict
        JSON state (e.g. ``log_evidence``).
    arrays : dict of str to ndarray

    Examples
    --------
    >>> from clusterednb import NoSharingNB
    >>> from clusterednb.examples import naive_bayes as toy
    >>> model = NoSharingNB().fit(*toy.colour_rows())
    >>> record = ModelRecord(model.schema_, model.task_ids_, *base_state(model))
    >>> record.task_ids.tolist(), record.arrays["value_counts"].shape
    (['ann', 'bob', 'cy'], (3, 2, 2))
    """

    schema: FeatureSchema
    task_ids: np.ndarray
    meta: dict[str, Any]
    arrays: dict[str, np.ndarray]


def base_state(estimator: Any) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """The JSON metadata and arrays every fitted estimator saves.

    Examples
    --------
    >>> from clusterednb import NoSharingNB
    >>> from clusterednb.examples import naive_bayes as toy
    >>> meta, arrays = base_state(NoSharingNB().fit(*toy.colour_rows()))
    >>> sorted(meta), arrays["label_counts"].tolist()  # (no, yes) counts of ann, bob, cy
    (['log_evidence'], [[1, 2], [2, 1], [1, 2]])
    """
    arrays = {
        **count_arrays(estimator.counts_),
        **unlabelled_arrays(estimator.unlabelled_X_),
        "unlabelled_task": estimator.unlabelled_task_,
    }
    arrays.update({f"{_POSTERIOR}{k}": v for k, v in estimator.posterior_.to_arrays().items()})
    for name in OPTIONAL_ARRAYS:
        if hasattr(estimator, f"{name}_"):
            arrays[name] = getattr(estimator, f"{name}_")
    return {"log_evidence": float(estimator.log_evidence_)}, arrays


_DOCUMENTS = "unlabelled_documents_"


def unlabelled_arrays(rows: Any) -> dict[str, np.ndarray]:
    """The arrays that store unlabelled training rows: ``unlabelled_X`` (codes), or for
    documents the CSR parts ``unlabelled_documents_{data,indices,indptr,width}``.

    Examples
    --------
    >>> sorted(unlabelled_arrays(np.zeros((0, 2), dtype=np.int32)))
    ['unlabelled_X']
    >>> parts = unlabelled_arrays(sparse.csr_matrix([[0, 3, 1]]))
    >>> parts["unlabelled_documents_indptr"].tolist(), parts["unlabelled_documents_width"].tolist()
    ([0, 2], [3])
    """
    if not sparse.issparse(rows):
        return {"unlabelled_X": rows}
    rows = sparse.csr_matrix(rows)
    return {
        f"{_DOCUMENTS}data": rows.data,
        f"{_DOCUMENTS}indices": rows.indices,
        f"{_DOCUMENTS}indptr": rows.indptr,
        f"{_DOCUMENTS}width": np.array([rows.shape[1]], dtype=np.int64),
    }


def restored_unlabelled(record: ModelRecord) -> Any:
    """The unlabelled rows of a saved model, checked against its schema and task ids.

    Examples
    --------
    >>> from clusterednb import NoSharingNB
    >>> from clusterednb.examples import naive_bayes as toy
    >>> model = NoSharingNB().fit(*toy.colour_rows())
    >>> record = ModelRecord(model.schema_, model.task_ids_, *base_state(model))
    >>> restored_unlabelled(record).shape
    (0, 1)
    """
    schema, arrays, n_tasks = record.schema, record.arrays, record.task_ids.size
    task = arrays["unlabelled_task"]
    if task.size and not 0 <= task.min() <= task.max() < n_tasks:
        raise CNBError("the unlabelled rows' tasks are not among the task ids")
    if f"{_DOCUMENTS}indptr" not in arrays:
        rows = arrays["unlabelled_X"]
        if rows.shape != (task.size, schema.n_features):
            raise CNBError("the unlabelled rows do not match the task ids and the schema")
        return rows
    data, indices, indptr, width = (
        arrays[f"{_DOCUMENTS}{part}"] for part in ("data", "indices", "indptr", "width")
    )
    n_words = int(width[0]) if width.shape == (1,) else -1
    ok = (
        n_words in (schema.n_features, len(schema.categories[0]))
        and indptr.shape == (task.size + 1,)
        and indptr[0] == 0
        and np.all(np.diff(indptr) >= 0)
        and indptr[-1] == indices.size == data.size
        and (indices.size == 0 or 0 <= indices.min() <= indices.max() < n_words)
        and np.all(data >= 0)
    )
    if not ok:
        raise CNBError("the unlabelled documents do not match the task ids and the vocabulary")
    return sparse.csr_matrix((data, indices, indptr), shape=(task.size, n_words))


def count_arrays(counts: Counts | SparseCounts) -> dict[str, np.ndarray]:
    """The arrays that store per-task counts: ``label_counts`` and either ``value_counts``
    (dense) or its sparse rows as ``value_cells_data``, ``value_cells_indices`` and
    ``value_cells_indptr`` (CSR of shape (n_tasks, n_classes * n_values_total)).

    Examples
    --------
    >>> from clusterednb.examples import models as toy
    >>> from clusterednb.stats.sparse_counts import SparseCounts
    >>> sorted(count_arrays(toy.three_task_counts()))
    ['label_counts', 'value_counts']
    >>> count_arrays(SparseCounts.from_dense(toy.three_task_counts()))["value_cells_indptr"]
    array([0, 1, 2, 3])
    """
    if isinstance(counts, Counts):
        return {"label_counts": counts.label_counts, "value_counts": counts.value_counts}
    cells = counts.cells
    return {
        "label_counts": counts.label_counts,
        "value_cells_data": cells.data,
        "value_cells_indices": cells.indices.astype(np.int64),
        "value_cells_indptr": cells.indptr.astype(np.int64),
    }


def restored_counts(record: ModelRecord) -> Counts | SparseCounts:
    """The per-task counts of a record, dense or sparse as saved, checked against the schema
    and the task ids (sparse rows: pointers, columns and values).

    Examples
    --------
    >>> from clusterednb.examples import models as toy
    >>> from clusterednb.stats.sparse_counts import SparseCounts
    >>> kept = SparseCounts.from_dense(toy.three_task_counts())
    >>> record = ModelRecord(toy.colour_schema(), np.array(["a", "b", "c"], dtype=object), {},
    ...                      count_arrays(kept))
    >>> restored_counts(record).cells.toarray().tolist()
    [[2, 0, 0, 0], [2, 0, 0, 0], [0, 0, 0, 2]]
    """
    arrays, schema = record.arrays, record.schema
    if "value_counts" in arrays:
        return Counts(arrays["label_counts"], arrays["value_counts"])
    n_tasks, width = record.task_ids.size, schema.n_classes * schema.n_values_total
    try:
        data, indices, indptr = (arrays[f"value_cells_{p}"] for p in ("data", "indices", "indptr"))
    except KeyError as error:
        raise CNBError(f"the model file has no value counts (missing array {error})") from None
    if (
        indptr.shape != (n_tasks + 1,)
        or indptr[0] != 0
        or (np.diff(indptr) < 0).any()
        or indptr[-1] != data.size
        or indices.shape != data.shape
        or (indices.size and not 0 <= indices.min() <= indices.max() < width)
        or (data < 0).any()
    ):
        raise CNBError(
            f"the sparse value counts do not fit {n_tasks} task ids and {width} cells per task "
            "(pointers, columns or non-negative values)"
        )
    cells = sparse.csr_matrix((data, indices, indptr), shape=(n_tasks, width))
    return SparseCounts(arrays["label_counts"], cells)


def check_shapes(record: ModelRecord) -> None:
    """Raise :class:`CNBError` naming the first count array that contradicts the schema or
    ids (the unlabelled rows are checked as they are restored: :func:`restored_unlabelled`).

    Examples
    --------
    >>> from clusterednb import NoSharingNB
    >>> from clusterednb.examples import naive_bayes as toy
    >>> model = NoSharingNB().fit(*toy.colour_rows())
    >>> record = ModelRecord(model.schema_, model.task_ids_[:2], *base_state(model))
    >>> check_shapes(record)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    clusterednb.exceptions.CNBError: array label_counts has shape (3, 2), expected (2, 2) ...
    """
    schema, arrays = record.schema, record.arrays
    n_tasks, n_classes, n_values = record.task_ids.size, schema.n_classes, schema.n_values_total
    expected = {
        "label_counts": (n_tasks, n_classes),
        "value_counts": (n_tasks, n_classes, n_values),
    }
    if "value_counts" not in arrays:
        del expected["value_counts"]  # kept sparse: restored_counts checks them
    for name, shape in expected.items():
        if arrays[name].shape != shape:
            raise CNBError(
                f"array {name} has shape {arrays[name].shape}, expected {shape} for the "
                f"{n_tasks} task ids and the schema's {n_classes} classes and {n_values} values"
            )


def check_posterior_shapes(
    posterior: Posterior, n_tasks: int, n_classes: int, n_values_total: int
) -> None:
    """Raise :class:`CNBError` unless the arrays fit these sizes (a loaded file's check).

    Parameters
    ----------
    n_tasks, n_classes, n_values_total : int
        The sizes the estimator's schema and task ids give.

    Examples
    --------
    >>> from clusterednb.examples import inference as toy
    >>> posterior = toy.three_task_posterior()
    >>> check_posterior_shapes(posterior, n_tasks=3, n_classes=2, n_values_total=2)
    >>> check_posterior_shapes(posterior, n_tasks=4, n_classes=2, n_values_total=2)
    ... # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    clusterednb.exceptions.CNBError: posterior array task_label_counts has shape (3, 2), ...
    """
    n_components = posterior.component_counts.shape[0]
    expected = {
        "component_counts": (n_components, n_classes, n_values_total),
        "task_label_counts": (n_tasks, n_classes),
        "cold_label_counts": (n_classes,),
        "log_weights": posterior.components.shape,
        "cold_log_weights": posterior.cold_components.shape,
    }
    for name, shape in expected.items():
        if getattr(posterior, name).shape != shape:
            raise CNBError(
                f"posterior array {name} has shape {getattr(posterior, name).shape}, expected "
                f"{shape} for {n_tasks} tasks, {n_classes} classes, {n_values_total} values"
            )
    for name in ("components", "cold_components"):
        found = getattr(posterior, name)
        if found.size and (found.min() < 0 or found.max() >= n_components):
            raise CNBError(f"posterior array {name} points outside its {n_components} components")
    if (np.diff(posterior.indptr) < 0).any() or posterior.indptr[0] != 0:
        raise CNBError("posterior mixture pointers are not increasing from 0")


def restored_posterior(record: ModelRecord) -> Posterior:
    """The posterior of a record, checked against its sizes.

    Examples
    --------
    >>> from clusterednb import NoSharingNB
    >>> from clusterednb.examples import naive_bayes as toy
    >>> model = NoSharingNB().fit(*toy.colour_rows())
    >>> record = ModelRecord(model.schema_, model.task_ids_, *base_state(model))
    >>> restored_posterior(record).n_tasks
    3
    """
    posterior = Posterior.from_arrays(
        {k[len(_POSTERIOR) :]: v for k, v in record.arrays.items() if k.startswith(_POSTERIOR)}
    )
    schema = record.schema
    check_posterior_shapes(posterior, record.task_ids.size, schema.n_classes, schema.n_values_total)
    return posterior


def restore_base(estimator: Any, record: ModelRecord) -> None:
    """Set the fitted attributes every estimator has from a checked record.

    Examples
    --------
    >>> from clusterednb import NoSharingNB
    >>> from clusterednb.examples import naive_bayes as toy
    >>> X, y, tasks = toy.colour_rows()
    >>> model = NoSharingNB().fit(X, y, tasks)
    >>> copy = NoSharingNB()
    >>> restore_base(copy, ModelRecord(model.schema_, model.task_ids_, *base_state(model)))
    >>> bool((copy.counts_.value_counts == model.counts_.value_counts).all())
    True
    """
    check_shapes(record)
    arrays = record.arrays
    estimator.schema_, estimator.task_ids_ = record.schema, record.task_ids
    estimator.counts_ = restored_counts(record)
    estimator.unlabelled_X_ = restored_unlabelled(record)
    estimator.unlabelled_task_ = arrays["unlabelled_task"]
    estimator.posterior_ = restored_posterior(record)
    estimator.log_evidence_ = float(record.meta["log_evidence"])
    for name in OPTIONAL_ARRAYS:
        if name in arrays:
            setattr(estimator, f"{name}_", arrays[name])

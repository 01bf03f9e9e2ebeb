"""Rows to predict, as every estimator reads them: the features encoded against the fitted
schema (or a document–term matrix) and each row's task among the fitted tasks."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from clusterednb.data.dataset import index_tasks
from clusterednb.data.schema import FeatureSchema
from clusterednb.data.text import as_document_term
from clusterednb.data.values import as_feature_input, as_vector
from clusterednb.exceptions import DataError


@dataclass(frozen=True)
class PredictionRows:
    """Encoded rows to predict.

    Attributes
    ----------
    codes : ndarray of shape (n_rows, n_features), or sparse matrix (n_rows, n_words)
        Value codes (-1: missing or an unknown category), or documents' word counts.
    frame : DataFrame or ndarray of shape (n_rows, n_features), or None
        The rows as read (their numeric columns' values are read from it); None for documents.
    task_values : ndarray of shape (n_rows,)
        Each row's task id.
    task_index : ndarray of shape (n_rows,)
        Its position among the fitted tasks (-1: a task never seen).
    """

    codes: Any
    frame: Any
    task_values: np.ndarray
    task_index: np.ndarray


def prediction_rows(
    X: Any,
    tasks: Any,
    schema: FeatureSchema,
    task_ids: np.ndarray,
    who: str,
    *,
    n_words: int | None = None,
    handle_unknown: str = "warn",
) -> PredictionRows:
    """Encode rows to predict against the fitted ``schema`` and ``task_ids``.

    Parameters
    ----------
    X : DataFrame or array-like of shape (n_rows, n_features), or a document–term matrix
    tasks : array-like of shape (n_rows,)
    schema : FeatureSchema
        The fitted schema (for documents: one feature whose values are the words).
    task_ids : ndarray of shape (n_tasks,)
        The fitted tasks.
    who : str
        The estimator's name, for messages.
    n_words : int, optional
        The vocabulary's size when ``X`` holds documents' word counts.
    handle_unknown : {"warn", "error", "ignore"}
        What a category not seen in training does (it is read as missing).

    Examples
    --------
    >>> schema = FeatureSchema(("room",), (("a", "b"),), (0, 1))
    >>> rows = prediction_rows([["b"], ["a"]], ["v", "new"], schema, np.array(["u", "v"]), "demo")
    >>> rows.codes.tolist(), rows.task_index.tolist()
    ([[1], [0]], [1, -1])
    """
    if n_words is not None:
        codes, frame = as_document_term(X, n_words), None
    else:
        frame = as_feature_input(X, schema.n_features, who)
        schema.check_input(frame)
        codes = schema.encode_features(frame, handle_unknown=handle_unknown)
    task_values = as_vector(tasks)
    if task_values.shape != (codes.shape[0],):
        raise DataError(f"X has {codes.shape[0]} rows but tasks has shape {task_values.shape}")
    return PredictionRows(codes, frame, task_values, index_tasks(task_values, task_ids))

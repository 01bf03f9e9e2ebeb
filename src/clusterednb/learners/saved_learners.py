"""The clusters' learners as plain data: LightGBM's own text model (its ``model_to_string``, as
bytes in the NPZ part of the model file) and constants. Nothing is pickled, so a learner that
has no plain form (scikit-learn's trees, any other estimator) is refused by name when saved.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy import sparse

from clusterednb.exceptions import CNBError, MissingExtraError
from clusterednb.learners.cluster_fits import ClusterLearners


def learner_name(learner: Any) -> str:
    """The learner's name as a model reports it.

    Examples
    --------
    >>> from sklearn.linear_model import LogisticRegression
    >>> learner_name("hgb"), learner_name(LogisticRegression())
    ('hgb', 'LogisticRegression')
    """
    return learner if isinstance(learner, str) else type(learner).__name__


def saved_learners(
    learners: ClusterLearners, learner: Any
) -> tuple[list[dict[str, Any]], dict[str, np.ndarray]]:
    """Each learner's record and arrays, or a :class:`CNBError` for a learner with no plain
    form.

    Examples
    --------
    >>> records, arrays = saved_learners(ClusterLearners([0.0, 1.0], np.array([0.5, 0.5])), "hgb")
    >>> records, sorted(arrays)
    ([{'constant': 0.0}, {'constant': 1.0}], ['new_cluster'])
    >>> saved_learners(ClusterLearners([object()], np.ones(1)), "hgb")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    clusterednb.exceptions.CNBError: a ClusteredLearner with learner 'hgb' cannot be saved ...
    """
    records: list[dict[str, Any]] = []
    arrays: dict[str, np.ndarray] = {"new_cluster": learners.new_cluster}
    for position, model in enumerate(learners.models):
        if isinstance(model, float):
            records.append({"constant": model})
            continue
        if learner != "lightgbm" or not hasattr(model, "model_to_string"):
            raise CNBError(
                f"a ClusteredLearner with learner {learner_name(learner)!r} cannot be saved "
                "as plain data (model files hold no pickle); use learner='lightgbm', saved as "
                "LightGBM's own text model, or keep the data and fit again"
            )
        name = f"learner_{position}"
        arrays[name] = np.frombuffer(model.model_to_string().encode(), dtype=np.uint8)
        records.append({"lightgbm": name})
    return records, arrays


def restored_learners(
    records: list[dict[str, Any]], arrays: dict[str, np.ndarray], learner: Any
) -> ClusterLearners:
    """The learners of :func:`saved_learners`' records and arrays.

    Examples
    --------
    >>> restored_learners([{"constant": 0.5}], {"new_cluster": np.ones(1)}, "lightgbm").models
    [0.5]
    """
    models: list[Any] = []
    for record in records:
        if "constant" in record:
            models.append(float(record["constant"]))
            continue
        if learner != "lightgbm":
            raise CNBError(f"a LightGBM model in the file of a model whose learner is {learner!r}")
        models.append(_booster(arrays[record["lightgbm"]]))
    return ClusterLearners(models, np.asarray(arrays["new_cluster"], dtype=np.float64))


def _booster(text: np.ndarray) -> Any:
    try:
        import lightgbm
    except ImportError as error:
        raise MissingExtraError("loading a LightGBM learner", "trees", "lightgbm") from error
    try:
        return lightgbm.Booster(model_str=text.tobytes().decode())
    except (lightgbm.basic.LightGBMError, UnicodeDecodeError) as error:
        raise CNBError(f"a LightGBM model in the file is unreadable ({error})") from error


def matrix_arrays(matrix: Any) -> dict[str, np.ndarray]:
    """The kept rows' matrix as arrays of a model file (a sparse one by its CSR parts)."""
    if not sparse.issparse(matrix):
        return {"rows_matrix": matrix}
    return {
        "rows_matrix_data": matrix.data,
        "rows_matrix_indices": matrix.indices,
        "rows_matrix_indptr": matrix.indptr,
        "rows_matrix_shape": np.asarray(matrix.shape),
    }


def matrix_of(arrays: dict[str, np.ndarray]) -> Any:
    """The kept rows' matrix back from :func:`matrix_arrays`' arrays."""
    if "rows_matrix" in arrays:
        return arrays["rows_matrix"]
    parts = (
        arrays["rows_matrix_data"],
        arrays["rows_matrix_indices"],
        arrays["rows_matrix_indptr"],
    )
    return sparse.csr_matrix(parts, shape=tuple(int(n) for n in arrays["rows_matrix_shape"]))


def arrays_under(arrays: dict[str, np.ndarray], prefix: str) -> dict[str, np.ndarray]:
    """The arrays whose names start with ``prefix``, by the rest of their names.

    Examples
    --------
    >>> sorted(arrays_under({"a/x": np.zeros(1), "a/y": np.ones(1), "b": np.ones(2)}, "a/"))
    ['x', 'y']
    """
    return {name[len(prefix) :]: a for name, a in arrays.items() if name.startswith(prefix)}

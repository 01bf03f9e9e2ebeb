"""Saving and loading fitted models as plain data: a zip of JSON metadata and NPZ arrays.

Nothing is ever unpickled: arrays are read with ``allow_pickle=False`` and the metadata is
JSON. A file records its format version and a SHA-256 checksum of every array.
"""

from __future__ import annotations

import hashlib
import io
import json
import zipfile
from pathlib import Path
from typing import Any

import numpy as np

from clusterednb.data.schema import FeatureSchema, _check_json_scalars
from clusterednb.exceptions import ModelFileError, NotFittedError, SchemaError

FORMAT_NAME = "clusterednb-model"
FORMAT_VERSION = 1
_METADATA = "metadata.json"
_ARRAYS = "arrays.npz"


def _checksum(array: np.ndarray) -> str:
    digest = hashlib.sha256()
    digest.update(f"{array.dtype.str}{array.shape}".encode())
    digest.update(np.ascontiguousarray(array).tobytes())
    return digest.hexdigest()


def _json_params(params: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, value in params.items():
        if isinstance(value, FeatureSchema):
            out[name] = {"__schema__": value.to_dict()}
        elif isinstance(value, np.ndarray):
            out[name] = value.tolist()
        else:
            out[name] = value
    try:
        json.dumps(out)
    except TypeError as exc:
        raise SchemaError(f"a hyperparameter cannot be saved as plain data: {exc}") from exc
    return out


def _params_from_json(params: dict[str, Any]) -> dict[str, Any]:
    return {
        name: FeatureSchema.from_dict(value["__schema__"])
        if isinstance(value, dict) and "__schema__" in value
        else value
        for name, value in params.items()
    }


def save_model(model: Any, path: str | Path) -> None:
    """Write a fitted estimator to ``path`` (a zip file; ``.cnb`` is a good suffix).

    Raises
    ------
    NotFittedError
        If the model is not fitted.
    SchemaError
        If a task id, category or hyperparameter is not a plain JSON scalar.
    """
    if not hasattr(model, "posterior_"):
        raise NotFittedError(f"cannot save an unfitted {type(model).__name__}")
    state, arrays = model._state()
    task_ids = model.task_ids_.tolist()
    _check_json_scalars(task_ids, "task ids")
    from clusterednb import __version__

    metadata = {
        "format": FORMAT_NAME,
        "format_version": FORMAT_VERSION,
        "library_version": __version__,
        "estimator": type(model).__name__,
        "params": _json_params(model.get_params()),
        "schema": model.schema_.to_dict(),
        "task_ids": task_ids,
        "state": state,
        "checksums": {name: _checksum(array) for name, array in arrays.items()},
    }
    buffer = io.BytesIO()
    np.savez_compressed(buffer, **arrays)
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(_METADATA, json.dumps(metadata, indent=1))
        archive.writestr(_ARRAYS, buffer.getvalue())
    tmp.replace(path)


def load(path: str | Path) -> Any:
    """Load a model written by ``model.save``.

    Raises
    ------
    ModelFileError
        If the file is missing, not a model file, truncated or corrupted, of an unknown
        format version, or names an unknown estimator.
    """
    from clusterednb.registry import ESTIMATORS

    path = Path(path)
    if not path.exists():
        raise ModelFileError(f"no such model file: {path}")
    try:
        with zipfile.ZipFile(path) as archive:
            metadata = json.loads(archive.read(_METADATA))
            raw_arrays = archive.read(_ARRAYS)
    except (
        zipfile.BadZipFile,
        KeyError,
        OSError,
        EOFError,
        json.JSONDecodeError,
        UnicodeDecodeError,
    ) as exc:
        raise ModelFileError(f"{path} is not a readable clusterednb model file ({exc})") from exc
    if not isinstance(metadata, dict) or metadata.get("format") != FORMAT_NAME:
        raise ModelFileError(f"{path} is not a clusterednb model file")
    version = metadata.get("format_version")
    if version != FORMAT_VERSION:
        raise ModelFileError(
            f"{path} has format version {version!r}; this library reads version {FORMAT_VERSION}"
        )
    estimator = ESTIMATORS.get(metadata.get("estimator"))
    if estimator is None:
        raise ModelFileError(f"{path} holds an unknown estimator {metadata.get('estimator')!r}")
    try:
        with np.load(io.BytesIO(raw_arrays), allow_pickle=False) as npz:
            arrays = {name: npz[name] for name in npz.files}
    except (ValueError, OSError, zipfile.BadZipFile, EOFError) as exc:
        raise ModelFileError(f"{path}: the arrays are corrupted ({exc})") from exc
    checksums = metadata.get("checksums", {})
    if set(checksums) != set(arrays):
        raise ModelFileError(f"{path}: the arrays do not match the metadata")
    for name, array in arrays.items():
        if _checksum(array) != checksums[name]:
            raise ModelFileError(f"{path}: checksum mismatch in array {name!r}")
    try:
        model = estimator(**_params_from_json(metadata["params"]))
        schema = FeatureSchema.from_dict(metadata["schema"])
        task_ids = np.empty(len(metadata["task_ids"]), dtype=object)
        task_ids[:] = metadata["task_ids"]
        model._restore(schema, task_ids, metadata["state"], arrays)
    except (KeyError, TypeError, ValueError) as exc:
        raise ModelFileError(f"{path}: malformed model record ({exc})") from exc
    return model

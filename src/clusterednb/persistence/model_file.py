"""Saving and loading fitted models as plain data: a zip of JSON metadata and NPZ arrays.

Nothing is ever unpickled: arrays are read with ``allow_pickle=False`` and the metadata is
JSON. A file records its format version, a SHA-256 checksum of every array and (from format
version 2) a SHA-256 checksum of the metadata itself, so that any change to any byte of
either part is refused. On load every hyperparameter is checked against the estimator's
constraints and every array against the schema and the task ids.

Format versions: 1 (release 0.1: array checksums only) loads; 2 is written; 3 is 2 with the
per-task value counts stored as sparse rows (``value_cells_data``, ``value_cells_indices``,
``value_cells_indptr`` instead of ``value_counts``), written only by a model that keeps its
counts sparse (millions of tasks), so that a library reading only 2 refuses it by its version.

The estimator classes register themselves (:func:`register_estimator`, called when a
subclass of :class:`clusterednb.persistence.saving.SavesAsPlainData` is defined), so this module
never
imports them;
:func:`clusterednb.load` sits above the estimators and imports them before reading.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import tempfile
import zipfile
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
from filelock import FileLock, Timeout

from clusterednb.data.schema import FeatureSchema
from clusterednb.data.values import check_json_scalars
from clusterednb.exceptions import CNBError, ModelFileError, NotFittedError, SchemaError
from clusterednb.persistence.state import ModelRecord
from clusterednb.version import __version__

FORMAT_NAME = "clusterednb-model"
FORMAT_VERSION = 2
SPARSE_COUNTS_VERSION = 3
READABLE_VERSIONS = (1, 2, 3)
_METADATA = "metadata.json"
_ARRAYS = "arrays.npz"
_METADATA_CHECKSUM = "metadata_checksum"
ESTIMATORS: dict[str, type] = {}
"""Estimator classes by name, filled by :func:`register_estimator`."""


def register_estimator(cls: type) -> None:
    """Make ``cls`` loadable by its name (public classes only; a later one replaces).

    Examples
    --------
    >>> class Remembered:
    ...     pass
    >>> register_estimator(Remembered)
    >>> ESTIMATORS.pop("Remembered") is Remembered
    True
    """
    if not cls.__name__.startswith("_"):
        ESTIMATORS[cls.__name__] = cls


def _checksum(array: np.ndarray) -> str:
    digest = hashlib.sha256()
    digest.update(f"{array.dtype.str}{array.shape}".encode())
    digest.update(np.ascontiguousarray(array).tobytes())
    return digest.hexdigest()


def _metadata_checksum(metadata: dict[str, Any]) -> str:
    """SHA-256 of the metadata's canonical JSON (sorted keys), without the checksum itself."""
    body = {key: value for key, value in metadata.items() if key != _METADATA_CHECKSUM}
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), allow_nan=True)
    return hashlib.sha256(text.encode()).hexdigest()


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


def _write_atomically(path: Path, metadata: dict[str, Any], arrays: bytes) -> None:
    """Write the zip to a unique temporary file beside ``path``, sync it, rename it over.

    Concurrent saves to the same path each write their own temporary file; the last rename
    wins and every reader sees one whole file, never a mixture.
    """
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as stream:
            with zipfile.ZipFile(stream, "w", compression=zipfile.ZIP_DEFLATED) as archive:
                archive.writestr(_METADATA, json.dumps(metadata, indent=1))
                archive.writestr(_ARRAYS, arrays)
            stream.flush()
            os.fsync(stream.fileno())
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    folder = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(folder)
    finally:
        os.close(folder)


def save_model(model: Any, path: str | Path) -> None:
    """Write a fitted estimator to ``path`` (a zip file; ``.cnb`` is a good suffix).

    Raises
    ------
    NotFittedError
        If the model is not fitted.
    SchemaError
        If a task id, category or hyperparameter is not a plain JSON scalar.

    Examples
    --------
    >>> from clusterednb import NoSharingNB
    >>> from clusterednb.examples import naive_bayes as toy
    >>> from clusterednb.examples import models as data_toy
    >>> path = data_toy.scratch_file("model.cnb")
    >>> save_model(NoSharingNB().fit(*toy.colour_rows()), path)
    >>> import zipfile
    >>> sorted(zipfile.ZipFile(path).namelist())  # plain JSON and NPZ, no pickle
    ['arrays.npz', 'metadata.json']
    >>> save_model(NoSharingNB(), path)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    clusterednb.exceptions.NotFittedError: ...
    """
    if not hasattr(model, "task_ids_"):
        raise NotFittedError(f"cannot save an unfitted {type(model).__name__}")
    state, arrays = model._state()
    task_ids = model.task_ids_.tolist()
    check_json_scalars(task_ids, "task ids")
    metadata = {
        "format": FORMAT_NAME,
        "format_version": (
            SPARSE_COUNTS_VERSION if "value_cells_indptr" in arrays else FORMAT_VERSION
        ),
        "library_version": __version__,
        "estimator": type(model).__name__,
        "params": _json_params(model.get_params()),
        "schema": model.schema_.to_dict(),
        "task_ids": task_ids,
        "state": state,
        "checksums": {name: _checksum(array) for name, array in arrays.items()},
    }
    metadata[_METADATA_CHECKSUM] = _metadata_checksum(metadata)
    buffer = io.BytesIO()
    np.savez_compressed(buffer, **arrays)
    _write_atomically(Path(path), metadata, buffer.getvalue())


def _read_parts(path: Path) -> tuple[dict[str, Any], bytes]:
    try:
        with zipfile.ZipFile(path) as archive:
            metadata = json.loads(archive.read(_METADATA))
            raw_arrays = archive.read(_ARRAYS)
    except (
        zipfile.BadZipFile,
        zlib.error,
        KeyError,
        OSError,
        EOFError,
        NotImplementedError,
        RuntimeError,  # a header flagged encrypted
        json.JSONDecodeError,
        UnicodeDecodeError,
        RecursionError,
    ) as exc:
        raise ModelFileError(f"{path} is not a readable clusterednb model file ({exc})") from exc
    if not isinstance(metadata, dict) or metadata.get("format") != FORMAT_NAME:
        raise ModelFileError(f"{path} is not a clusterednb model file")
    return metadata, raw_arrays


def _read_arrays(path: Path, raw_arrays: bytes) -> dict[str, np.ndarray]:
    try:
        with np.load(io.BytesIO(raw_arrays), allow_pickle=False) as npz:
            return {name: npz[name] for name in npz.files}
    except (
        ValueError,
        OSError,
        zipfile.BadZipFile,
        zlib.error,
        EOFError,
        KeyError,
        NotImplementedError,
        RuntimeError,  # a header flagged encrypted
    ) as exc:
        reason = (
            "an array holds Python objects, which a model file never contains"
            if "pickle" in str(exc).lower()
            else str(exc)
        )
        raise ModelFileError(f"{path}: the arrays are corrupted ({reason})") from exc


def read_model(path: str | Path) -> Any:
    """Load a model written by ``model.save`` (its class must be registered).

    Raises
    ------
    ModelFileError
        If the file is missing, not a model file, truncated or corrupted (any changed byte of
        the metadata or the arrays), of an unknown format version, names an unknown
        estimator, or holds values that contradict each other or the estimator's constraints.

    Examples
    --------
    >>> from clusterednb import NoSharingNB
    >>> from clusterednb.examples import naive_bayes as toy
    >>> from clusterednb.examples import models as data_toy
    >>> path = data_toy.scratch_file("model.cnb")
    >>> NoSharingNB().fit(*toy.colour_rows()).save(path)
    >>> read_model(path).task_ids_.tolist()
    ['ann', 'bob', 'cy']
    >>> path.write_bytes(path.read_bytes()[:100])  # a truncated file
    100
    >>> read_model(path)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    clusterednb.exceptions.ModelFileError: ...
    """
    path = Path(path)
    if not path.exists():
        raise ModelFileError(f"no such model file: {path}")
    metadata, raw_arrays = _read_parts(path)
    version = metadata.get("format_version")
    if version not in READABLE_VERSIONS:
        raise ModelFileError(
            f"{path} has format version {version!r}; this library reads versions "
            f"{list(READABLE_VERSIONS)}"
        )
    if version >= 2 and metadata.get(_METADATA_CHECKSUM) != _metadata_checksum(metadata):
        raise ModelFileError(f"{path}: checksum mismatch in the metadata (the file was changed)")
    estimator = ESTIMATORS.get(metadata.get("estimator"))
    if estimator is None:
        raise ModelFileError(f"{path} holds an unknown estimator {metadata.get('estimator')!r}")
    arrays = _read_arrays(path, raw_arrays)
    checksums = metadata.get("checksums", {})
    if not isinstance(checksums, dict) or set(checksums) != set(arrays):
        raise ModelFileError(f"{path}: the arrays do not match the metadata")
    for name, array in arrays.items():
        if _checksum(array) != checksums[name]:
            raise ModelFileError(f"{path}: checksum mismatch in array {name!r}")
    try:
        model = estimator(**_params_from_json(metadata["params"]))
        schema = FeatureSchema.from_dict(metadata["schema"])
        task_ids = np.empty(len(metadata["task_ids"]), dtype=object)
        task_ids[:] = metadata["task_ids"]
        model._restore(ModelRecord(schema, task_ids, metadata["state"], arrays))
    except CNBError as exc:
        raise ModelFileError(f"{path}: {exc}") from exc
    except (KeyError, TypeError, ValueError, IndexError, AttributeError) as exc:
        raise ModelFileError(f"{path}: malformed model record ({exc!r})") from exc
    return model


@contextmanager
def update_lock(path: str | Path, timeout: float = 60.0) -> Iterator[None]:
    """Hold the lock of a model file across a read–modify–write (load, update, save).

    Every process that updates the same model file in place takes this lock first, so N
    updates always leave N updates in the file. The lock is a file ``PATH.lock`` beside it
    (``filelock``: ``fcntl`` on POSIX, ``msvcrt`` on Windows), released when the process
    dies.

    Parameters
    ----------
    path : str or Path
        The model file.
    timeout : float, default=60.0
        Seconds to wait for another process's update before a :class:`ModelFileError`.

    Examples
    --------
    >>> from clusterednb import NoSharingNB, load
    >>> from clusterednb.examples import naive_bayes as toy
    >>> from clusterednb.examples import models as data_toy
    >>> path = data_toy.scratch_file("model.cnb")
    >>> X, y, tasks = toy.colour_rows()
    >>> NoSharingNB().fit(X, y, tasks).save(path)
    >>> with update_lock(path):  # no other process updates it meanwhile
    ...     load(path).partial_fit(X[:1], y[:1], ["dee"]).save(path)
    >>> load(path).task_ids_.tolist()
    ['ann', 'bob', 'cy', 'dee']
    """
    lock = FileLock(str(path) + ".lock", timeout=timeout)
    try:
        lock.acquire()
    except Timeout as exc:
        raise ModelFileError(
            f"{path} is being updated by another process (waited {timeout:g} s); try again"
        ) from exc
    try:
        yield
    finally:
        lock.release()

"""Run protocol cells in this process or in worker processes, storing each as it finishes.

Each worker process computes with one thread (BLAS and Numba): ``jobs`` workers that each
start a BLAS thread per core oversubscribe the machine, and OpenBLAS's spinning threads then
made a `cnb-logistic` fit on landmine 15 times slower (2.4 s alone, 36 s beside a second
busy process). With ``jobs=1`` this process computes its cells with one thread too, so a run's
numbers do not depend on ``jobs``.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from contextlib import contextmanager
from typing import Any

import numba
from threadpoolctl import threadpool_limits

from clusterednb.evaluation.datasets import EvalDataset
from clusterednb.evaluation.result_store import CellStore
from clusterednb.progress import progress as progress_reporter

_WORKER_DATASET: EvalDataset | None = None


def one_thread_per_process() -> None:
    """Limit this process's BLAS and Numba to one thread each, for the rest of its life.

    Examples
    --------
    >>> import subprocess, sys
    >>> code = ("from clusterednb.evaluation.runner import one_thread_per_process; "
    ...         "one_thread_per_process(); import numba, threadpoolctl; "
    ...         "print(numba.get_num_threads(), "
    ...         "{i['num_threads'] for i in threadpoolctl.threadpool_info()})")
    >>> subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout.split()
    ['1', '{1}']
    """
    numba.set_num_threads(1)  # first: it may load an OpenMP runtime that the limit then covers
    threadpool_limits(1)


@contextmanager
def one_thread() -> Iterator[None]:
    """BLAS and Numba limited to one thread each inside the block, as in a worker; the
    process's own limits come back after it.

    Examples
    --------
    >>> before = numba.get_num_threads()
    >>> with one_thread():
    ...     numba.get_num_threads()
    1
    >>> numba.get_num_threads() == before
    True
    """
    threads = numba.get_num_threads()
    numba.set_num_threads(1)  # first: it may load an OpenMP runtime that the limit then covers
    try:
        with threadpool_limits(1):
            yield
    finally:
        numba.set_num_threads(threads)


def _init_worker(dataset: EvalDataset) -> None:
    global _WORKER_DATASET
    _WORKER_DATASET = dataset
    warnings.simplefilter("ignore")
    one_thread_per_process()


def _call(function: Callable[..., list[dict]], args: tuple[Any, ...]) -> list[dict]:
    return function(_WORKER_DATASET, *args)


def run_cells(
    cells: Sequence[tuple[Any, ...]],
    local: Callable[..., list[dict]],
    store: CellStore,
    dataset: EvalDataset,
    jobs: int,
    desc: str,
    progress: bool,
    remote: Callable[..., tuple[Callable[..., list[dict]], tuple[Any, ...]]],
) -> None:
    """Compute every cell and append its rows to ``store`` as it completes.

    ``local(*cell)`` computes a cell in this process; ``remote(*cell)`` names a module-level
    function and its arguments after the data set, which each worker process holds once.

    Examples
    --------
    >>> from clusterednb.examples import models as toy
    >>> from clusterednb.examples import evaluation as eval_toy
    >>> from clusterednb.evaluation.result_store import CellStore
    >>> store = CellStore(toy.scratch_file("run"), "squares", {}, ["x", "square"])
    >>> def square(x):
    ...     return [{"x": x, "square": x * x}]
    >>> run_cells([(2,), (3,)], square, store, eval_toy.eval_dataset(), jobs=1, desc="squares",
    ...           progress=False, remote=lambda x: (square, (x,)))
    >>> store.rows()["square"].tolist()
    [4, 9]
    """
    bar = progress_reporter(len(cells), desc, enabled=progress)
    if jobs <= 1:
        # One thread here too: a solver's sums then add in the order a worker's do, so a run
        # gives the same numbers whatever --jobs (with two BLAS threads an Enron pooled
        # regression's AUC differed from a worker's by up to 2e-4).
        with warnings.catch_warnings(), one_thread():
            warnings.simplefilter("ignore")
            for cell in cells:
                store.append(local(*cell))
                bar.update(1)
    else:
        with ProcessPoolExecutor(jobs, initializer=_init_worker, initargs=(dataset,)) as pool:
            futures = [pool.submit(_call, *remote(*cell)) for cell in cells]
            for future in as_completed(futures):
                store.append(future.result())
                bar.update(1)
    bar.close()

"""Learning for everyone: the organisation's model refitted from the store in the background.

Feedback is written to the store first (durable); :meth:`Learner.request_refit` then wakes a
background thread, which waits ``debounce`` seconds (answers given together make one refit),
refits and swaps the serving model atomically. The model is the base model file given to
``cnb serve --model`` (the organisation's history) updated with every answer in the store
(counts add, so this equals one fit on both), or, without a base, a Clustered NB (BHC) fitted
on the answers alone. A failed refit keeps the previous model and is logged.
"""

from __future__ import annotations

import logging
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from clusterednb.loading import load
from clusterednb.meeting.assistant import fit_from_frames
from clusterednb.meeting.features import FEATURE_NAMES
from clusterednb.service.store import ServiceStore

log = logging.getLogger("clusterednb.service")


def refit(store: ServiceStore, base_model: Path | None) -> Any:
    """The organisation's model from the base file and every answer in the store (or None).

    Parameters
    ----------
    store : ServiceStore
    base_model : Path or None

    Examples
    --------
    >>> from clusterednb.examples import service as toy
    >>> store, _ = toy.service_store()
    >>> refit(store, None) is None  # no answers and no base model yet
    True
    >>> morning, late = {"start_time": "morning"}, {"start_time": "early"}
    >>> _ = store.import_history([("ann", morning, True), ("ann", late, False),
    ...                           ("bob", morning, True)])
    >>> model = refit(store, None)
    >>> model.task_ids_.tolist(), model.classes_.tolist()
    (['ann', 'bob'], ['decline', 'accept'])
    """
    answered = store.answered()
    model = load(base_model) if base_model is not None else None
    if not answered:
        return model
    frame = pd.DataFrame([a["features"] for a in answered], columns=list(FEATURE_NAMES))
    labels = np.array([a["answer"] for a in answered], dtype=object)
    users = np.array([a["user"] for a in answered], dtype=object)
    if model is None:  # the assistant's default model (DEFAULT_KIND) on every answer
        return fit_from_frames([frame.assign(user=users, accepted=labels)])
    return model.partial_fit(frame, labels, users)


class Learner:
    """Holds the serving model and refits it in a background thread.

    Parameters
    ----------
    store : ServiceStore
    base_model : Path or None
    debounce : float, default=1.0
        Seconds to wait after an answer before refitting.

    Examples
    --------
    >>> from clusterednb.examples import service as toy
    >>> store, _ = toy.service_store()
    >>> learner = Learner(store, None, debounce=0.0)
    >>> learner.status()
    {'model': False, 'model_age_seconds': None, 'clusters': None}
    """

    def __init__(self, store: ServiceStore, base_model: Path | None, debounce: float = 1.0) -> None:
        self.store, self.base_model, self.debounce = store, base_model, debounce
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._stop = threading.Event()
        self.model: Any = None
        self.fitted_at: float | None = None
        self.failures = 0
        self._thread = threading.Thread(target=self._run, name="refit", daemon=True)

    def start(self) -> None:
        """Fit once now, then keep refitting in the background on request.

        Examples
        --------
        >>> from clusterednb.examples import service as toy
        >>> store, _ = toy.service_store()
        >>> _ = store.import_history([("ann", {"start_time": "morning"}, True)])
        >>> learner = Learner(store, None)
        >>> learner.start()  # the first fit is done when start returns
        >>> learner.current().task_ids_.tolist()
        ['ann']
        >>> learner.stop()
        """
        self._refit()
        self._thread.start()

    def stop(self) -> None:
        """Stop the background thread (and wait up to 30 s for it to finish a refit).

        Examples
        --------
        >>> from clusterednb.examples import service as toy
        >>> learner = Learner(toy.service_store()[0], None)
        >>> learner.start()
        >>> learner.stop()
        >>> learner._thread.is_alive()
        False
        """
        self._stop.set()
        self._wake.set()
        if self._thread.is_alive():
            self._thread.join(timeout=30)

    def request_refit(self) -> None:
        """Ask for a refit (answers arriving within ``debounce`` seconds share one).

        Examples
        --------
        >>> import time
        >>> from clusterednb.examples import service as toy
        >>> store, _ = toy.service_store()
        >>> learner = Learner(store, None, debounce=0.0)
        >>> learner.start()  # nothing answered yet: no model
        >>> _ = store.import_history([("bob", {"start_time": "morning"}, True)])
        >>> learner.request_refit()
        >>> for _ in range(300):  # the background thread refits
        ...     if learner.current() is not None:
        ...         break
        ...     time.sleep(0.1)
        >>> learner.current().task_ids_.tolist()
        ['bob']
        >>> learner.stop()
        """
        self._wake.set()

    def current(self) -> Any:
        """The serving model (or None).

        Examples
        --------
        >>> from clusterednb.examples import service as toy
        >>> Learner(toy.service_store()[0], None).current() is None  # not started
        True
        """
        with self._lock:
            return self.model

    def _refit(self) -> None:
        started = time.monotonic()
        try:
            model = refit(self.store, self.base_model)
        except Exception:  # a failed refit must not take the service down
            self.failures += 1
            log.exception("refit failed; keeping the previous model")
            return
        with self._lock:
            self.model, self.fitted_at = model, time.time()
        log.info("refitted the model in %.2f s", time.monotonic() - started)

    def _run(self) -> None:
        while not self._stop.is_set():
            self._wake.wait()
            if self._stop.is_set():
                return
            time.sleep(self.debounce)
            self._wake.clear()
            self._refit()

    def status(self) -> dict[str, Any]:
        """The model's age and its number of clusters.

        Examples
        --------
        >>> from clusterednb.examples import service as toy
        >>> learner = Learner(toy.service_store()[0], None)
        >>> learner.start()  # nothing answered: no model yet
        >>> learner.status()["model"]
        False
        >>> learner.stop()
        """
        model = self.current()
        clusters = None
        if model is not None and hasattr(model, "partition_"):
            clusters = int(np.max(model.partition_)) + 1
        age = None if self.fitted_at is None else round(time.time() - self.fitted_at, 1)
        return {"model": model is not None, "model_age_seconds": age, "clusters": clusters}

"""Progress of long runs: a ``tqdm`` bar on a terminal, a log line every 10 s elsewhere.

In a CI log or a redirected file a bar is noise; there a line ``desc: done/total (percent),
elapsed, about ETA left`` is written at most every ``interval`` seconds (and once at the end
of a run that wrote any), so a 200-second evaluation is never 200 seconds of silence.
"""

from __future__ import annotations

import sys
import time
from typing import Any, TextIO

LOG_INTERVAL = 10.0


def _clock(seconds: float) -> str:
    minutes, second = divmod(int(seconds), 60)
    hours, minute = divmod(minutes, 60)
    return f"{hours}:{minute:02d}:{second:02d}" if hours else f"{minute:02d}:{second:02d}"


class LogProgress:
    """Log lines of a run's progress, at most one every ``interval`` seconds.

    Parameters
    ----------
    total : int
    desc : str
    stream : text file, default sys.stderr
    interval : float, default=10.0

    Examples
    --------
    >>> import io
    >>> stream = io.StringIO()
    >>> with LogProgress(4, "fitting", stream, interval=0.0) as bar:  # a line at every update
    ...     bar.update(2)
    >>> stream.getvalue().splitlines()[0].startswith("fitting: 2/4 (50%), 00:00 elapsed")
    True
    """

    def __init__(
        self, total: int, desc: str, stream: TextIO | None = None, interval: float = LOG_INTERVAL
    ) -> None:
        self.total, self.desc = total, desc
        self.stream = stream if stream is not None else sys.stderr
        self.interval = interval
        self.done = 0
        self.started = self.last = time.monotonic()
        self.lines = 0

    def line(self) -> str:
        """The current progress as one line of text.

        Examples
        --------
        >>> LogProgress(10, "transfer").line()
        'transfer: 0/10 (0%), 00:00 elapsed'
        """
        elapsed = time.monotonic() - self.started
        share = self.done / self.total if self.total else 1.0
        text = f"{self.desc}: {self.done}/{self.total} ({share:.0%}), {_clock(elapsed)} elapsed"
        if 0 < self.done < self.total:
            text += f", about {_clock(elapsed * (self.total - self.done) / self.done)} left"
        return text

    def update(self, n: int = 1) -> None:
        """Count ``n`` more steps done; write a line if ``interval`` has passed.

        Examples
        --------
        >>> import io
        >>> stream = io.StringIO()
        >>> bar = LogProgress(10, "transfer", stream)  # 10 s between lines
        >>> bar.update(3)
        >>> bar.done, stream.getvalue()  # too soon for a line
        (3, '')
        """
        self.done += n
        now = time.monotonic()
        if now - self.last >= self.interval:
            self._write()
            self.last = now

    def _write(self) -> None:
        print(self.line(), file=self.stream, flush=True)
        self.lines += 1

    def close(self) -> None:
        """End the run: a last line when earlier lines were written.

        Examples
        --------
        >>> import io
        >>> stream = io.StringIO()
        >>> bar = LogProgress(2, "transfer", stream, interval=0.0)
        >>> bar.update(2)
        >>> bar.close()
        >>> len(stream.getvalue().splitlines())  # the update's line and the last one
        2
        """
        if self.lines:
            self._write()

    def __enter__(self) -> LogProgress:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()


class _Silent:
    def update(self, n: int = 1) -> None:
        """Nothing to report."""

    def close(self) -> None:
        """Nothing to close."""

    def __enter__(self) -> _Silent:
        return self

    def __exit__(self, *_: object) -> None:
        """Nothing to close."""


def progress(total: int, desc: str, enabled: bool = True, stream: TextIO | None = None) -> Any:
    """A progress reporter with ``update(n)`` and ``close()`` (and a context manager).

    Parameters
    ----------
    total : int
        Steps in the run.
    desc : str
        What runs.
    enabled : bool, default=True
        False: report nothing.
    stream : text file, default sys.stderr

    Returns
    -------
    tqdm on a terminal, :class:`LogProgress` elsewhere, or a silent reporter.

    Examples
    --------
    >>> import io
    >>> type(progress(10, "transfer", stream=io.StringIO())).__name__  # not a terminal
    'LogProgress'
    >>> with progress(10, "transfer", enabled=False) as bar:
    ...     bar.update(10)
    """
    stream = stream if stream is not None else sys.stderr
    if not enabled:
        return _Silent()
    if stream.isatty():
        from tqdm import tqdm

        return tqdm(total=total, desc=desc, file=stream)
    return LogProgress(total, desc, stream)

"""The ``cnb`` command: a thin layer over the public API.

Exit status: 0 success; 1 bad input — one line ``cnb: error: ...`` naming the file, column,
row or value, without a traceback unless ``--debug``; 2 a usage error (argparse's own).
"""

from __future__ import annotations

import importlib
import sys
import warnings
from collections.abc import Sequence

from clusterednb.cli.parser import build_parser

__all__ = ["build_parser", "main"]


def _show_warning(message: Warning | str, *_: object, **__: object) -> None:
    print(f"cnb: warning: {message}", file=sys.stderr)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``cnb``; returns the exit status.

    Examples
    --------
    >>> from clusterednb.naive_bayes import examples as toy
    >>> data = toy.colour_csv()
    >>> main(["fit", str(data), "--task", "user", "--label", "liked", "--kind", "ns", "-o",
    ...       str(data.with_name("model.cnb"))])  # doctest: +ELLIPSIS
    fitted No-Sharing on 9 rows of 3 tasks; log evidence -12.8300; saved to .../model.cnb
    0
    >>> main(["fit", str(data.with_name("absent.csv")), "--task", "user", "--label", "liked",
    ...       "--kind", "ns", "-o", "model.cnb"])  # one line on standard error, status 1
    1
    """
    args = build_parser().parse_args(argv)
    module, name = args.run.split(":")
    try:
        with warnings.catch_warnings():
            warnings.filterwarnings("always", module="clusterednb")
            warnings.filterwarnings("always", message="categories never seen in training")
            warnings.showwarning = _show_warning
            getattr(importlib.import_module(module), name)(args)
    except (ValueError, OSError) as exc:
        from clusterednb.exceptions import CNBError

        if args.debug or not isinstance(exc, CNBError | OSError):
            raise
        print(f"cnb: error: {exc}", file=sys.stderr)
        return getattr(exc, "exit_status", 1)
    return 0

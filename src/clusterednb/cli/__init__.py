"""The ``cnb`` command: a thin layer over the public API.

Exit status: 0 success; 1 bad input — one line ``cnb: error: ...`` naming the file, column,
row or value, without a traceback unless ``--debug`` — or an optional extra the command needs
is not installed (one line naming it); 2 a usage error (argparse's own).
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


def _say_missing(extra: str, module: str) -> None:
    print(
        f"cnb: error: this command needs the optional extra [{extra}] (module {module!r} is not "
        f'installed): pip install "clusterednb[{extra}]"',
        file=sys.stderr,
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``cnb``; returns the exit status.

    Examples
    --------
    >>> from clusterednb.examples import naive_bayes as toy
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
    from clusterednb.exceptions import CNBError, CNBWarning, absent_extras, missing_extra

    for extra, absent in absent_extras(getattr(args, "needs", ())):
        _say_missing(extra, absent)
        return 1
    try:
        with warnings.catch_warnings():
            warnings.filterwarnings("always", category=CNBWarning)
            warnings.showwarning = _show_warning
            getattr(importlib.import_module(module), name)(args)
    except ImportError as exc:
        extra = missing_extra(exc)
        if args.debug or extra is None:
            raise
        _say_missing(extra, exc.name.split(".")[0])
        return 1
    except (ValueError, OSError) as exc:
        if args.debug or not isinstance(exc, CNBError | OSError):
            raise
        print(f"cnb: error: {exc}", file=sys.stderr)
        return getattr(exc, "exit_status", 1)
    return 0

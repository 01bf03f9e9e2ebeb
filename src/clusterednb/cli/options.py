"""Argument types and actions shared by every ``cnb`` command (argparse only: cheap to import)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from clusterednb.meeting.errors import MeetingError


def comma_list(text: str) -> list[str]:
    """``"a,b, c"`` → ``["a", "b", "c"]`` (empty items dropped).

    Examples
    --------
    >>> comma_list("lr-pooled, cnb-gibbs,,")
    ['lr-pooled', 'cnb-gibbs']
    """
    return [item.strip() for item in text.split(",") if item.strip()]


def alpha_value(text: str) -> float | str:
    """A ``--alpha`` value: a number, or "auto".

    Examples
    --------
    >>> alpha_value("2"), alpha_value("auto")
    (2.0, 'auto')
    """
    if text == "auto":
        return text
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number or 'auto', got {text!r}") from None


def temperature_value(text: str) -> float | str:
    """A ``--transductive-temperature`` value: a number in (0, 1], or "auto".

    Examples
    --------
    >>> temperature_value("0.5"), temperature_value("auto")
    (0.5, 'auto')
    >>> temperature_value("2")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: expected a number in (0, 1] or 'auto', got '2'
    """
    if text == "auto":
        return text
    try:
        number = float(text)
    except ValueError:
        number = float("nan")
    if not 0 < number <= 1:
        raise argparse.ArgumentTypeError(f"expected a number in (0, 1] or 'auto', got {text!r}")
    return number


class CommaList(argparse.Action):
    """Collect values given as ``a,b,c`` or as ``a b c`` (or both) into one list.

    Examples
    --------
    >>> parser = argparse.ArgumentParser()
    >>> _ = parser.add_argument("--kind", nargs="+", action=CommaList)
    >>> parser.parse_args(["--kind", "ns,cs", "cnb-bhc"]).kind
    ['ns', 'cs', 'cnb-bhc']
    """

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: str | Sequence[Any] | None,
        option_string: str | None = None,
    ) -> None:
        items = [values] if isinstance(values, str) else list(values or [])
        setattr(namespace, self.dest, [part for item in items for part in comma_list(item)])


def renamed(old: dict[str, str], base: type[argparse.Action] = argparse._StoreAction) -> type:
    """An action that does what ``base`` does and warns when called by an old option string.

    The old strings are listed among the argument's own, so a required option stays required
    by argparse whichever spelling is used (``old`` maps each to its replacement; the key
    ``"*"`` stands for every spelling of an option kept only as an old one).

    Examples
    --------
    >>> import contextlib, io
    >>> parser = argparse.ArgumentParser()
    >>> _ = parser.add_argument("--task", "--user", action=renamed({"--user": "--task"}))
    >>> with contextlib.redirect_stderr(io.StringIO()) as err:
    ...     parser.parse_args(["--user", "ann"]).task
    'ann'
    >>> err.getvalue().strip()
    'cnb: warning: --user is deprecated and will be removed in the next release; use --task'
    """

    class Renamed(base):  # type: ignore[misc, valid-type]
        def __call__(
            self,
            parser: argparse.ArgumentParser,
            namespace: argparse.Namespace,
            values: Any,
            option_string: str | None = None,
        ) -> None:
            replaced_by = old.get(option_string, old.get("*"))
            if replaced_by:
                print(
                    f"cnb: warning: {option_string} is deprecated and will be removed in the "
                    f"next release; use {replaced_by}",
                    file=sys.stderr,
                )
            super().__call__(parser, namespace, values, option_string)

    return Renamed


def deprecated(new: str, base: type[argparse.Action] = argparse._StoreAction) -> type:
    """An action for an option kept only as an old spelling: every use warns that ``new``
    replaces it (the option itself is hidden from ``--help``).

    Examples
    --------
    >>> import contextlib, io
    >>> parser = argparse.ArgumentParser()
    >>> _ = parser.add_argument("--out", action=deprecated("-o/--output"), help=argparse.SUPPRESS)
    >>> with contextlib.redirect_stderr(io.StringIO()) as err:
    ...     parser.parse_args(["--out", "results"]).out
    'results'
    >>> "use -o/--output" in err.getvalue()
    True
    """

    return renamed({"*": new}, base)


def add_output(
    parser: argparse.ArgumentParser,
    help_text: str,
    *,
    required: bool = True,
    old: str | None = None,
    **settings: Any,
) -> None:
    """``-o/--output PATH`` (``-`` writes to standard output where the output is text).

    ``old`` is a deprecated spelling still accepted (e.g. ``--out``).

    Examples
    --------
    >>> parser = argparse.ArgumentParser()
    >>> add_output(parser, "the model file")
    >>> parser.parse_args(["-o", "model.cnb"]).output
    PosixPath('model.cnb')
    """
    names = ["-o", "--output", *([old] if old else [])]
    parser.add_argument(
        *names,
        dest="output",
        type=Path,
        required=required,
        metavar="PATH",
        action=renamed({old: "-o/--output"} if old else {}),
        help=help_text + (f" ({old}: deprecated)" if old else ""),
        **settings,
    )


def add_json(parser: argparse.ArgumentParser) -> None:
    """``--json``: one JSON document on standard output and nothing else there.

    Examples
    --------
    >>> parser = argparse.ArgumentParser()
    >>> add_json(parser)
    >>> parser.parse_args(["--json"]).json, parser.parse_args([]).json
    (True, False)
    """
    parser.add_argument(
        "--json",
        action="store_true",
        help="print one JSON document on standard output (messages go to standard error)",
    )


def calibration_value(text: str) -> str | None:
    """A ``--calibration`` value: "sigmoid", or "none" (stored as None, the estimators'
    spelling of no calibration).

    Examples
    --------
    >>> calibration_value("sigmoid"), calibration_value("none")
    ('sigmoid', None)
    >>> calibration_value("isotonic")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: expected sigmoid or none, got 'isotonic'
    """
    if text not in ("sigmoid", "none"):
        raise argparse.ArgumentTypeError(f"expected sigmoid or none, got {text!r}")
    return None if text == "none" else text


def add_calibration(parser: argparse.ArgumentParser, default: str, help: str) -> None:
    """Add ``--calibration {sigmoid,none}`` (parsed by :func:`calibration_value`)."""
    parser.add_argument(
        "--calibration",
        type=calibration_value,
        default=default,
        metavar="{sigmoid,none}",
        help=f"{help} (default {default})",
    )


def smtp_address(text: str) -> tuple[str, int]:
    """``HOST:PORT`` as a pair.

    Examples
    --------
    >>> smtp_address("127.0.0.1:8025")
    ('127.0.0.1', 8025)
    >>> smtp_address("mail.example.org")
    Traceback (most recent call last):
    ...
    clusterednb.meeting.errors.MeetingError: --smtp takes HOST:PORT, got 'mail.example.org'
    """
    host, _, port = text.rpartition(":")
    if not host or not port.isdigit():
        raise MeetingError(f"--smtp takes HOST:PORT, got {text!r}")
    return host, int(port)


def read_password(path: Path | None, variable: str, prompt: str) -> str:
    """A password from ``path`` (``--password-file``: its first line; a warning if other
    accounts can read the file), else the environment variable ``variable``, else a prompt on
    a terminal; never from the command line, never printed.

    Examples
    --------
    >>> import os
    >>> os.environ["CNB_EXAMPLE_PASSWORD"] = "s3cret"
    >>> read_password(None, "CNB_EXAMPLE_PASSWORD", "password: ")
    's3cret'
    >>> del os.environ["CNB_EXAMPLE_PASSWORD"]
    """
    import getpass
    import os

    from clusterednb.exceptions import warn_at_caller
    from clusterednb.meeting.errors import MeetingWarning

    if path is not None:
        try:
            text = Path(path).read_text()
        except OSError as error:
            raise MeetingError(f"--password-file {path}: {error.strerror}") from error
        password = text.splitlines()[0] if text.strip() else ""
        if not password:
            raise MeetingError(f"--password-file {path} is empty")
        if Path(path).stat().st_mode & 0o077:
            warn_at_caller(
                f"--password-file {path} can be read by other accounts of this machine: "
                "chmod 600 it",
                MeetingWarning,
            )
        return password
    if os.environ.get(variable):
        return os.environ[variable]
    if sys.stdin.isatty():
        return getpass.getpass(prompt)
    raise MeetingError(
        f"no password: give --password-file FILE, set {variable}, or run on a terminal to be asked"
    )

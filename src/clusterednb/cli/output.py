"""Where a command's output goes: files, standard output (``-o -``), JSON, messages."""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import Any

import numpy as np

from clusterednb.estimation.decisions import AUTO_HELD, AUTO_RELEASED


def to_stdout(path: Path | None) -> bool:
    """Whether ``-o`` named standard output.

    Examples
    --------
    >>> to_stdout(Path("-")), to_stdout(Path("model.cnb")), to_stdout(None)
    (True, False, False)
    """
    return path is not None and str(path) == "-"


def write_text(path: Path, text: str) -> None:
    """Write ``text`` to ``path``, or to standard output for ``-``.

    Examples
    --------
    >>> write_text(Path("-"), "task,p_accept")
    task,p_accept
    """
    if to_stdout(path):
        sys.stdout.write(text)
        sys.stdout.flush()
    else:
        Path(path).write_text(text)


def write_bytes(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path``, or to standard output's bytes for ``-``.

    Examples
    --------
    >>> from clusterednb.examples import models as toy
    >>> path = toy.scratch_file("reply.ics")
    >>> write_bytes(path, b"BEGIN:VCALENDAR")
    >>> path.read_bytes()
    b'BEGIN:VCALENDAR'
    """
    if to_stdout(path):
        sys.stdout.buffer.write(data)
        sys.stdout.flush()
    else:
        Path(path).write_bytes(data)


def say(message: str, args: argparse.Namespace) -> None:
    """A message for the person: on standard output, unless that carries the data.

    Examples
    --------
    >>> say("fitted 3 users", argparse.Namespace(json=False, output=Path("model.cnb")))
    fitted 3 users
    >>> say("fitted 3 users", argparse.Namespace(json=True))  # to standard error instead
    """
    quiet_stdout = getattr(args, "json", False) or to_stdout(getattr(args, "output", None))
    print(message, file=sys.stderr if quiet_stdout else sys.stdout)


def plain(value: Any) -> Any:
    """``value`` as JSON: numpy scalars and arrays as Python ones, NaN and infinities null.

    Examples
    --------
    >>> plain({"auc": np.float64(0.75), "partition": np.array([0, 0, 1]), "loss": float("nan")})
    {'auc': 0.75, 'partition': [0, 0, 1], 'loss': None}
    """
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    if isinstance(value, np.ndarray):
        return plain(value.tolist())
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, Path):
        return str(value)
    return value


def emit_json(document: Any) -> None:
    """Print one JSON document on standard output.

    Examples
    --------
    >>> emit_json({"partition": np.array([0, 1])})
    {
     "partition": [
      0,
      1
     ]
    }
    """
    print(json.dumps(plain(document), indent=1, allow_nan=False))


IRRELEVANT = 0.1
"""A column whose posterior relevance is below this is named as judged irrelevant."""
CLUSTERS_TITLE = "relevance to the clusters"
CLUSTERS_NOTE = "irrelevant to the clusters (shared by every task, they do not move them)"
LABEL_TITLE = "relevance to the label within clusters"
LABEL_NOTE = "left out of the regressions (no relation to the label within clusters)"
SHARED_WEIGHTS_NOTE = (
    "label weights shared by every cluster (the partition's score holds them alike: they "
    "neither split nor merge the clusters)"
)
FIRST_FIT_NOTE = (
    "the label evidence chose the columns again, then the model was fitted again; its first fit "
    "had left out"
)
PAIRED_NOTE = (
    "trees inside the clusters also read, of the columns the first fit read and the evidence "
    "left out, those whose cells with a kept column earn the label evidence"
)
HELD_NOTE = (
    "held shared before the clusters were judged (they neither differ between tasks nor "
    "depend on the label within them beyond chance)"
)
HELD_AUTO_NOTE = (
    "held shared by every task (they neither differ between tasks nor depend on the label "
    "within them beyond chance)"
)
RELEASED_NOTE = (
    "looked irrelevant but released (their evidence on the clusters the other columns find "
    "beats their evidence when shared)"
)
DESIGNED_NOTE = (
    "designed, kept relevant (every task holds the same balanced values: only how tasks "
    "weigh them can differ)"
)


def judgement_report(title: str, relevance: dict[str, float], note: str, named: list[str]) -> str:
    """``cnb fit --relevance``'s lines of one judgement: each column's relevance, and the
    columns it leaves out (none: no second line).

    Examples
    --------
    >>> relevance = {"a": 0.98, "b": 0.5, "noise": 0.01}
    >>> print(judgement_report(CLUSTERS_TITLE, relevance, CLUSTERS_NOTE, ["noise"]))
    relevance to the clusters: a 0.98, b 0.50, noise 0.01
    irrelevant to the clusters (shared by every task, they do not move them): noise
    >>> print(judgement_report(LABEL_TITLE, {"a": 0.99}, LABEL_NOTE, []))
    relevance to the label within clusters: a 0.99
    """
    lines = [f"{title}: " + ", ".join(f"{n} {v:.2f}" for n, v in relevance.items())]
    if named:
        lines.append(f"{note}: " + ", ".join(named))
    return "\n".join(lines)


def judgement_lines(summary: dict[str, Any]) -> list[str]:
    """``cnb fit``'s lines after the fit's: whether ``relevance="auto"`` judged the columns,
    the columns' relevance to the clusters (naming those below :data:`IRRELEVANT`) and,
    where the model judged it, to the label (naming the columns its regressions leave out);
    none without relevance.

    Examples
    --------
    >>> judgement_lines({"tasks": 3})
    []
    >>> judgement_lines({"relevance": "auto: not judged (no column looked irrelevant)"})
    ['relevance auto: not judged (no column looked irrelevant)']
    >>> for line in judgement_lines({"feature_relevance": {"a": 0.9, "b": 0.02}}):
    ...     print(line)
    relevance to the clusters: a 0.90, b 0.02
    irrelevant to the clusters (shared by every task, they do not move them): b
    >>> held = judgement_lines({"relevance": AUTO_HELD, "feature_relevance": {"a": 1.0, "b": 0},
    ...                         "columns_held_shared": ["b"]})
    >>> len(held), held[1] == f"{HELD_AUTO_NOTE}: b"
    (2, True)
    >>> shared = judgement_lines({"label_relevance": {"a": 0.9}, "columns_left_out": [],
    ...                           "label_weights_shared": ["a"]})
    >>> shared[-1] == f"{SHARED_WEIGHTS_NOTE}: a"
    True
    >>> again = judgement_lines({"label_relevance": {"a": 0.9, "b": 0.0},
    ...                          "columns_left_out": ["b"], "columns_first_left_out": []})
    >>> again[-1] == f"{FIRST_FIT_NOTE}: none"
    True
    """
    lines = [f"relevance {summary['relevance']}"] if "relevance" in summary else []
    if summary.get("relevance") == AUTO_HELD:  # the screen's verdict: the held columns named
        lines.append(f"{HELD_AUTO_NOTE}: " + ", ".join(summary["columns_held_shared"]))
    if summary.get("columns_released"):
        lines.append(f"{RELEASED_NOTE}: " + ", ".join(summary["columns_released"]))
    if summary.get("relevance") in (AUTO_HELD, AUTO_RELEASED):
        return lines
    if "feature_relevance" in summary:
        relevance = summary["feature_relevance"]
        irrelevant = [name for name, value in relevance.items() if value < IRRELEVANT]
        lines.append(judgement_report(CLUSTERS_TITLE, relevance, CLUSTERS_NOTE, irrelevant))
    if summary.get("columns_held_shared"):
        lines.append(f"{HELD_NOTE}: " + ", ".join(summary["columns_held_shared"]))
    if summary.get("columns_designed"):
        lines.append(f"{DESIGNED_NOTE}: " + ", ".join(summary["columns_designed"]))
    if "label_relevance" in summary:
        left_out = summary["columns_left_out"]
        lines.append(
            judgement_report(LABEL_TITLE, summary["label_relevance"], LABEL_NOTE, left_out)
        )
    if summary.get("label_weights_shared"):
        lines.append(f"{SHARED_WEIGHTS_NOTE}: " + ", ".join(summary["label_weights_shared"]))
    if "columns_first_left_out" in summary:
        first = summary["columns_first_left_out"]
        lines.append(f"{FIRST_FIT_NOTE}: " + (", ".join(first) if first else "none"))
    if "columns_paired" in summary:
        paired = summary["columns_paired"]
        lines.append(f"{PAIRED_NOTE}: " + (", ".join(paired) if paired else "none"))
    return lines

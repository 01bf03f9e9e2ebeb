"""One self-contained HTML report of every protocol result found in a run folder."""

from __future__ import annotations

import base64
import html
import json
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

import pandas as pd

SECTIONS = (
    (
        "transfer",
        "T. Transfer",
        "Mean AUC on the target task's held-out rows against k own "
        "labelled rows (all other tasks' rows available); standard errors over targets.",
    ),
    (
        "curves",
        "L. Learning curves",
        "0-1 error against the fraction of every task's rows used for training.",
    ),
    (
        "loss",
        "A. Asymmetric losses",
        "Realised loss under L_n (false positive 1, false "
        "negative 2^n), and its ratio to No-Sharing's.",
    ),
    (
        "evidence",
        "E. Evidence",
        "Log evidence of the labelled rows against data size; the "
        "kind says whether a number is exact or a lower bound.",
    ),
    (
        "partitions",
        "P. Partitions",
        "Number of clusters in the MAP partition; co-clustering "
        "heat maps ordered by the MAP partition; BHC trees.",
    ),
)


def _image(path: Path) -> str:
    data = base64.b64encode(path.read_bytes()).decode("ascii")
    return (
        f'<figure><img alt="{html.escape(path.stem)}" src="data:image/png;base64,{data}">'
        f"<figcaption>{html.escape(path.name)}</figcaption></figure>"
    )


Section = tuple[str, str, pd.DataFrame | None, Sequence[Path]]


def write_report(
    out_dir: str | Path, title: str = "clusterednb evaluation", extra: Sequence[Section] = ()
) -> Path:
    """Write ``report.html`` into ``out_dir`` with every summary table and figure there.

    Figures are embedded (base64 PNG), so the file can be moved and opened on its own.
    ``extra`` sections (heading, text, table or None, figure paths) come first.
    """
    out_dir = Path(out_dir)
    parts = [
        "<!doctype html><html><head><meta charset='utf-8'>",
        f"<title>{html.escape(title)}</title><style>",
        "body{font-family:sans-serif;max-width:1100px;margin:2em auto;padding:0 1em}",
        "table{border-collapse:collapse;font-size:12px}td,th{border:1px solid #ccc;",
        "padding:2px 6px;text-align:right}img{max-width:100%}figure{margin:1em 0}",
        "</style></head><body>",
        f"<h1>{html.escape(title)}</h1>",
        f"<p>Written {datetime.now(UTC):%Y-%m-%d %H:%M} UTC from <code>"
        f"{html.escape(str(out_dir))}</code>.</p>",
    ]
    for heading, text, table, figures in extra:
        parts += [
            f"<h2>{html.escape(heading)}</h2>",
            f"<p style='white-space:pre-wrap'>{html.escape(text)}</p>",
        ]
        if table is not None:
            parts.append(table.to_html(index=False, float_format=lambda v: f"{v:.4f}", border=0))
        parts += [_image(Path(p)) for p in figures]
    for name, heading, text in SECTIONS:
        summary = out_dir / f"{name}.csv"
        if not summary.exists():
            continue
        parts += [f"<h2>{html.escape(heading)}</h2>", f"<p>{html.escape(text)}</p>"]
        settings = out_dir / f"{name}_settings.json"
        if settings.exists():
            record = json.loads(settings.read_text())
            parts.append(f"<p><small>settings: {html.escape(json.dumps(record))}</small></p>")
        table = pd.read_csv(summary)
        parts.append(table.to_html(index=False, float_format=lambda v: f"{v:.4f}", border=0))
        parts += [_image(p) for p in sorted(out_dir.glob(f"{name}*.png"))]
    parts.append("</body></html>")
    path = out_dir / "report.html"
    path.write_text("\n".join(parts), encoding="utf-8")
    return path

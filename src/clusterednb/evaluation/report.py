"""One self-contained HTML report of every protocol result found in a run folder."""

from __future__ import annotations

import base64
import html
import json
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pandas as pd

from clusterednb.evaluation.headline import headline_html, headline_sentence, headline_table
from clusterednb.exceptions import check_choice

MAX_ROWS = 12

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
    (
        "relevance",
        "P. Columns that separate the tasks",
        "Each column's posterior probability of being relevant to the clusters (its values "
        "differ between clusters) rather than shared by every task, from Clustered NB with "
        "relevance=True on the rows of protocol P; below 0.1 a column does not move the "
        "partition.",
    ),
    (
        "label_relevance",
        "P. Columns that tell the label within clusters",
        "Each column's relevance to the label inside the clusters (a categorical of its "
        "values per cluster and class against one per cluster), from "
        "ClusteredLogisticRegression with relevance=True on the rows of protocol P; below 0.5 "
        "its regressions may leave the column out, where the held-out rows say so clearly.",
    ),
)


CAPTIONS = {
    "transfer_auc": "Mean AUC on the target's held-out rows against its own labelled rows k "
    "(log scale). Bands: ±1 standard error over targets.",
    "transfer_reliability": "Calibration: observed frequency of the positive class against the "
    "mean predicted probability in ten bins, per k; the diagonal is perfect calibration, ECE "
    "the expected calibration error.",
    "curves_mean": "0-1 error on held-out rows against the fraction of every task's rows used "
    "for training (log scale, from one row of the median task). Bands: ±1 standard error over "
    "tasks.",
    "curves_per_task": "The same curves task by task (the first 30 tasks).",
    "loss_ratio": "Each model's realised loss divided by No-Sharing's, against n (a false "
    "negative costs 2^n); below the grey 1.0 line a model loses less than No-Sharing.",
    "evidence": "Log evidence against data size; exact values and lower bounds are marked.",
    "partitions_nclusters": "Posterior probability of each number of clusters, per model.",
    "partitions_cocluster": "Posterior probability that two tasks share a cluster, tasks "
    "ordered by the MAP partition on both axes; for BHC its tree is drawn beside the matrix "
    "in the same order, links coloured by MAP cluster (grey above the cut).",
    "partitions_tree": "The BHC tree; links coloured by the MAP cluster they fall in.",
    "demo_coclustering": "How often the Gibbs sampler put two users in one cluster, users "
    "grouped by the simulation's TRUE groups: dark blocks on the diagonal mean the groups "
    "were found.",
    "demo_bhc_tree": "BHC's co-clustering beside its tree, users in the tree's order; links "
    "coloured by MAP cluster, grey above the cut.",
    "demo_log_odds": "The same request seen by two users of different groups: each feature "
    "value's contribution to the log-odds of accepting. Bars pointing opposite ways are "
    "where the groups differ.",
    "demo_per_user_accuracy": "Each target user's accuracy on their held-out requests against "
    "the number of their own answers k (log scale); thin lines one user, the thick line the "
    "mean. Clustering helps most at the left, where a user has answered little.",
}
"""Caption of each figure the protocols write (by file stem); others show their stem."""


def _caption(stem: str) -> str:
    for prefix, text in CAPTIONS.items():
        if stem == prefix or stem.startswith(prefix + "_"):
            return text
    return stem.replace("_", " ")


IMAGE_FORMATS = ("svg", "png")


def _image(path: Path, image_format: str = "svg") -> str:
    """A figure embedded in the page (with ``image_format="svg"`` its SVG twin when there is
    one, else the PNG) with a caption saying what it shows."""
    svg = path.with_suffix(".svg")
    use_svg = image_format == "svg" and svg.exists()
    kind, source = ("svg+xml", svg) if use_svg else ("png", path)
    data = base64.b64encode(source.read_bytes()).decode("ascii")
    return (
        f'<figure><img alt="{html.escape(path.stem)}" src="data:image/{kind};base64,{data}">'
        f"<figcaption>{html.escape(_caption(path.stem))}</figcaption></figure>"
    )


def table_html(table: pd.DataFrame) -> str:
    """A table for reading: whole numbers as integers, an empty cell as "—" (with a note
    saying why), and rows beyond :data:`MAX_ROWS` behind a "show all" fold.

    Examples
    --------
    >>> html_text = table_html(pd.DataFrame({"k": [1.0, 4.0], "auc": [0.71, None]}))
    >>> "<td>4</td>" in html_text, "—" in html_text  # whole numbers as integers; empty as —
    (True, True)
    """
    shown = table.copy()
    empty = bool(shown.isna().to_numpy().any())
    for column in shown.columns:
        values = shown[column]
        if pd.api.types.is_float_dtype(values):
            present = values.dropna()
            whole = bool(present.size) and bool(
                ((present == np.round(present)) & (present.abs() < 2**53)).all()
            )
            if whole:
                shown[column] = values.map(lambda v: "—" if pd.isna(v) else f"{v:.0f}")
            else:
                shown[column] = values.map(lambda v: "—" if pd.isna(v) else f"{v:.4f}")
        else:
            shown[column] = values.map(lambda v: "—" if pd.isna(v) else v)
    note = (
        "<p><small>—: no value (a model not run at that setting, every split skipped, or a "
        "quantity that model does not have).</small></p>"
        if empty
        else ""
    )
    first = shown.head(MAX_ROWS).to_html(index=False, border=0)
    if len(shown) <= MAX_ROWS:
        return first + note
    every = shown.to_html(index=False, border=0)
    return f"{first}<details><summary>show all {len(shown)} rows</summary>{every}</details>{note}"


def inline_code(text: str) -> str:
    """``text`` escaped for HTML, with each `` `span` `` rendered as ``<code>span</code>``.

    Examples
    --------
    >>> inline_code("run `cnb meeting fit` <now>")
    'run <code>cnb meeting fit</code> &lt;now&gt;'
    """
    pieces = html.escape(text).split("`")
    if len(pieces) % 2 == 0:  # an unpaired backtick stays as it is
        return html.escape(text)
    return "".join(
        f"<code>{piece}</code>" if index % 2 else piece for index, piece in enumerate(pieces)
    )


def provenance_html(provenance: dict[str, object]) -> str:
    """The provenance block: what produced the report (version, commit, data, command, …).

    Examples
    --------
    >>> block = provenance_html({"seed": 0, "data set": "<toy>"})
    >>> "<th>seed</th><td>0</td>" in block, "&lt;toy&gt;" in block  # text is escaped
    (True, True)
    """
    rows = "".join(
        f"<tr><th>{html.escape(str(k))}</th><td>{html.escape(str(v))}</td></tr>"
        for k, v in provenance.items()
    )
    return f"<table class='provenance'>{rows}</table>"


Section = tuple[str, str, pd.DataFrame | None, Sequence[Path]]


def write_report(
    out_dir: str | Path,
    title: str = "clusterednb evaluation",
    extra: Sequence[Section] = (),
    provenance: dict[str, object] | None = None,
    dataset: str = "",
    image_format: str = "svg",
) -> Path:
    """Write ``report.html`` into ``out_dir`` with every summary table and figure there.

    It opens with the provenance block (when given) and, for a transfer run, the headline:
    a sentence generated from the numbers and the models × k table against pooled logistic
    regression (:mod:`clusterednb.evaluation.headline`). Figures are embedded (SVG where
    drawn, else PNG), so the file can be moved and opened on its own. ``extra`` sections
    (heading, text, table or None, figure paths) come next. ``image_format="png"`` embeds the
    PNGs instead of the SVGs (smaller files for figures with many points; every figure is
    written in both).

    Examples
    --------
    >>> from clusterednb.examples import models as toy
    >>> out = toy.scratch_file("report")
    >>> out.mkdir()
    >>> pd.DataFrame({"model": ["ns"], "k": [1], "auc_mean": [0.7]}).to_csv(out / "transfer.csv")
    >>> path = write_report(out, title="Toy run", provenance={"seed": 0})
    >>> text = path.read_text()
    >>> path.name, "<h1>Toy run</h1>" in text, "class='provenance'" in text
    ('report.html', True, True)
    """
    check_choice("image_format", image_format, IMAGE_FORMATS, ValueError)
    out_dir = Path(out_dir)
    parts = [
        "<!doctype html><html><head><meta charset='utf-8'>",
        f"<title>{html.escape(title)}</title><style>",
        "body{font-family:sans-serif;max-width:1100px;margin:2em auto;padding:0 1em}",
        "table{border-collapse:collapse;font-size:12px}td,th{border:1px solid #ccc;",
        "padding:2px 6px;text-align:right}img{max-width:100%}figure{margin:1em 0}",
        "table.headline td{text-align:center}caption{caption-side:bottom;font-size:11px}",
        "</style></head><body>",
        f"<h1>{html.escape(title)}</h1>",
        f"<p>Written {datetime.now(UTC):%Y-%m-%d %H:%M} UTC from <code>"
        f"{html.escape(str(out_dir))}</code>.</p>",
    ]
    if provenance:
        parts += ["<h2>Provenance</h2>", provenance_html(provenance)]
    splits = out_dir / "transfer_splits.csv"
    if splits.exists():
        table = headline_table(pd.read_csv(splits))
        parts += [
            "<h2>The answer</h2>",
            f"<p>{html.escape(headline_sentence(table, dataset or out_dir.name))}</p>",
            headline_html(table),
        ]
    for heading, text, table, figures in extra:
        parts += [
            f"<h2>{html.escape(heading)}</h2>",
            f"<p style='white-space:pre-wrap'>{inline_code(text)}</p>",
        ]
        if table is not None:
            parts.append(table_html(table))
        parts += [_image(Path(p), image_format) for p in figures]
    for name, heading, text in SECTIONS:
        summary = out_dir / f"{name}.csv"
        if not summary.exists():
            continue
        parts += [f"<h2>{html.escape(heading)}</h2>", f"<p>{inline_code(text)}</p>"]
        settings = out_dir / f"{name}_settings.json"
        if settings.exists():
            record = json.loads(settings.read_text())
            parts.append(f"<p><small>settings: {html.escape(json.dumps(record))}</small></p>")
        parts.append(table_html(pd.read_csv(summary)))
        parts += [_image(p, image_format) for p in sorted(out_dir.glob(f"{name}*.png"))]
    parts.append("</body></html>")
    path = out_dir / "report.html"
    path.write_text("\n".join(parts), encoding="utf-8")
    return path

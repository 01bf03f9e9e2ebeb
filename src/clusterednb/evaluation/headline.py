"""The answer first: protocol T's headline table and the sentence generated from it.

Each model's mean AUC (± standard error over targets; a target's repetitions are averaged
first) at each ``k``, pivoted models × k, and its paired difference to a reference model (pooled
logistic regression by default) with a 95 % interval (Student's t over targets, the same
targets and splits for both models). A model *beats* the reference at ``k`` when the whole
interval is above 0, *loses* when it is below, and *ties* otherwise.
"""

from __future__ import annotations

import html

import numpy as np
import pandas as pd
from scipy import stats

REFERENCE = "lr-pooled"


def _per_target(splits: pd.DataFrame) -> pd.DataFrame:
    skipped = splits["skipped"].astype(str).str.lower() == "true"
    used = splits[~skipped]
    return used.groupby(["model", "k", "target"])["auc"].mean().reset_index()


def headline_table(splits: pd.DataFrame, reference: str = REFERENCE) -> pd.DataFrame:
    """One row per (model, k): ``auc_mean``, ``auc_se``, ``n_targets`` and, against
    ``reference`` (where it ran), ``diff_mean``, ``diff_low``, ``diff_high`` (95 %) and
    ``verdict`` in {"beats", "ties", "loses", "reference"}.

    Examples
    --------
    >>> rows = [{"model": m, "k": 1, "target": t, "auc": auc, "skipped": False}
    ...         for m, aucs in (("lr-pooled", (0.70, 0.80, 0.75)), ("cnb", (0.74, 0.83, 0.80)))
    ...         for t, auc in enumerate(aucs)]
    >>> table = headline_table(pd.DataFrame(rows))
    >>> row = table[table["model"] == "cnb"].iloc[0]
    >>> round(float(row["diff_mean"]), 3), row["verdict"]
    (0.04, 'beats')
    """
    per_target = _per_target(splits)
    rows = []
    base = per_target[per_target["model"] == reference].set_index(["k", "target"])["auc"]
    for (model, k), group in per_target.groupby(["model", "k"]):
        auc = group["auc"].to_numpy()
        row = {
            "model": model,
            "k": int(k),
            "n_targets": int(auc.size),
            "auc_mean": float(auc.mean()),
            "auc_se": float(auc.std(ddof=1) / np.sqrt(auc.size)) if auc.size > 1 else np.nan,
        }
        paired = group.set_index(["k", "target"])["auc"].sub(base).dropna()
        if model == reference:
            row["verdict"] = "reference"
        elif paired.size > 1:
            mean, se = float(paired.mean()), float(paired.std(ddof=1) / np.sqrt(paired.size))
            half = float(stats.t.ppf(0.975, paired.size - 1)) * se
            verdict = "beats" if mean - half > 0 else "loses" if mean + half < 0 else "ties"
            row.update(diff_mean=mean, diff_low=mean - half, diff_high=mean + half, verdict=verdict)
        rows.append(row)
    return pd.DataFrame(rows)


def headline_sentence(table: pd.DataFrame, dataset: str, reference: str = REFERENCE) -> str:
    """One sentence per compared model, generated from :func:`headline_table`'s verdicts.

    Examples
    --------
    >>> from clusterednb.examples import evaluation as toy
    >>> table = headline_table(toy.auc_rows())  # cnb: 0.79 on average, lr-pooled 0.75
    >>> headline_sentence(table, "landmine")  # doctest: +ELLIPSIS
    'On landmine...cnb...
    """
    if table.empty or "verdict" not in table or reference not in set(table["model"]):
        return f"On {dataset}, no comparison with {reference} was run."
    parts = []
    for model, rows in table[table["model"] != reference].groupby("model", sort=False):
        if rows["verdict"].isna().all():
            continue
        said = []
        for verdict in ("beats", "ties", "loses"):
            ks = rows.loc[rows["verdict"] == verdict, "k"].tolist()
            if ks:
                said.append(f"{verdict} it at k = {', '.join(str(k) for k in ks)}")
        parts.append(f"{model} {'; '.join(said)}")
    best = table.loc[table.groupby("k")["auc_mean"].idxmax()]
    tops = ", ".join(f"{m} at k = {k}" for k, m in zip(best["k"], best["model"], strict=True))
    return (
        f"On {dataset}, against {reference} (95 % intervals over targets): "
        + "; ".join(parts)
        + f". Highest mean AUC: {tops}."
    )


def headline_html(table: pd.DataFrame, reference: str = REFERENCE) -> str:
    """The table pivoted models × k: ``mean ± s.e.`` (best per column in bold) and, below
    each, the difference to ``reference`` with its interval.

    Examples
    --------
    >>> from clusterednb.examples import evaluation as toy
    >>> table = headline_table(toy.auc_rows())  # cnb: 0.79 on average, lr-pooled 0.75
    >>> html_table = headline_html(table)
    >>> html_table.startswith("<table class='headline'>"), "<b>0.790 ± 0.026</b>" in html_table
    (True, True)
    """
    if table.empty:
        return "<p>No transfer results.</p>"
    ks = sorted(table["k"].unique())
    best = table.groupby("k")["auc_mean"].max()
    head = "".join(f"<th>k = {k}</th>" for k in ks)
    body = []
    for model, rows in table.groupby("model", sort=False):
        by_k = rows.set_index("k")
        cells = []
        for k in ks:
            if k not in by_k.index:
                cells.append("<td title='not run or every split skipped'>—</td>")
                continue
            row = by_k.loc[k]
            se = "" if np.isnan(row["auc_se"]) else f" ± {row['auc_se']:.3f}"
            text = f"{row['auc_mean']:.3f}{se}"
            if row["auc_mean"] == best[k]:
                text = f"<b>{text}</b>"
            if "diff_mean" in row and not pd.isna(row.get("diff_mean")):
                text += (
                    f"<br><small>{row['diff_mean']:+.3f} "
                    f"[{row['diff_low']:+.3f}, {row['diff_high']:+.3f}]</small>"
                )
            cells.append(f"<td>{text}</td>")
        body.append(f"<tr><th>{html.escape(str(model))}</th>{''.join(cells)}</tr>")
    compared = "diff_mean" in table and table["diff_mean"].notna().any()
    caption = (
        "Mean AUC ± standard error over targets"
        + (
            f"; below, the paired difference to {html.escape(reference)} with its 95 % interval"
            if compared
            else ""
        )
        + ". Bold: the best mean per column."
    )
    return (
        f"<table class='headline'><caption>{caption}</caption>"
        f"<tr><th>model</th>{head}</tr>{''.join(body)}</table>"
    )

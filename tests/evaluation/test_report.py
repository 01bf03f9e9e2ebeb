"""The evaluation report: the headline table and sentence, readable tables, provenance."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from clusterednb.evaluation.headline import headline_html, headline_sentence, headline_table
from clusterednb.evaluation.provenance import frame_checksum
from clusterednb.evaluation.report import MAX_ROWS, table_html, write_report


def splits() -> pd.DataFrame:
    rows = []
    # Three targets; "good" beats lr-pooled by 0.05 ± a little, "bad" loses by 0.1.
    for target, base in (("a", 0.70), ("b", 0.80), ("c", 0.75)):
        for repetition, wobble in ((0, 0.0), (1, 0.02)):
            for model, shift in (("lr-pooled", 0.0), ("good", 0.05 + wobble), ("bad", -0.1)):
                rows.append(
                    {
                        "target": target,
                        "repetition": repetition,
                        "k": 4,
                        "model": model,
                        "skipped": False,
                        "auc": base + shift,
                    }
                )
    return pd.DataFrame(rows)


def test_the_headline_table_by_hand():
    table = headline_table(splits()).set_index("model")
    good = table.loc["good"]
    assert good["n_targets"] == 3
    assert good["auc_mean"] == pytest.approx(0.75 + 0.06)
    # Per-target differences are all 0.06: zero spread, so the interval is the point.
    assert good["diff_mean"] == pytest.approx(0.06)
    assert good["diff_low"] == pytest.approx(0.06)
    assert good["verdict"] == "beats"
    assert table.loc["bad", "verdict"] == "loses"
    assert table.loc["lr-pooled", "verdict"] == "reference"


def test_the_interval_is_students_t_over_targets():
    frame = splits()
    frame.loc[(frame["model"] == "good") & (frame["target"] == "a"), "auc"] -= 0.09
    good = headline_table(frame).set_index("model").loc["good"]
    differences = np.array([0.06 - 0.09, 0.06, 0.06])
    half = stats.t.ppf(0.975, 2) * differences.std(ddof=1) / np.sqrt(3)
    assert good["diff_low"] == pytest.approx(differences.mean() - half)
    assert good["verdict"] == "ties"


def test_the_sentence_and_the_html_say_what_the_numbers_say():
    table = headline_table(splits())
    sentence = headline_sentence(table, "toy")
    assert "good beats it at k = 4" in sentence and "bad loses it at k = 4" in sentence
    assert "Highest mean AUC: good at k = 4" in sentence
    page = headline_html(table)
    assert "<b>0.810" in page and "[+0.060, +0.060]" in page


def test_tables_are_formatted_for_reading():
    table = pd.DataFrame({"n": [1.0, 2.0, np.nan], "auc": [0.5, 0.61234, 0.7]})
    page = table_html(table)
    assert ">1<" in page and ">2<" in page and "1.0" not in page
    assert "—" in page and "no value" in page
    assert "NaN" not in page and "nan" not in page
    long = pd.DataFrame({"i": range(MAX_ROWS + 5)})
    assert "<details>" in table_html(long) and "show all 17 rows" in table_html(long)
    assert "<details>" not in table_html(long.head(MAX_ROWS))


def test_the_report_opens_with_provenance_and_the_answer(tmp_path):
    splits().to_csv(tmp_path / "transfer_splits.csv", index=False)
    provenance = {"package version": "9.9", "data checksum": frame_checksum(splits())}
    page = write_report(tmp_path, provenance=provenance, dataset="toy").read_text()
    assert page.index("Provenance") < page.index("The answer") < page.index("</body>")
    assert "9.9" in page and "On toy, against lr-pooled" in page


def test_the_checksum_changes_with_any_value():
    frame = splits()
    changed = frame.copy()
    changed.loc[0, "auc"] += 1e-9
    assert frame_checksum(frame) == frame_checksum(frame.copy())
    assert frame_checksum(frame) != frame_checksum(changed)


def test_large_decimals_are_not_taken_for_integers():
    page = table_html(pd.DataFrame({"log_evidence": [-99999.4, -121262.0]}))
    assert "-99999.4000" in page


def test_tree_links_take_the_colour_of_the_cluster_below_them(tmp_path):
    from clusterednb.evaluation.plots import _cluster_of_nodes, plot_coclustering, plot_n_clusters

    # Leaves 0 and 1 merge first (node 3), then leaf 2 joins (node 4).
    tree = np.array([[0, 1, 1, 2], [2, 3, 2, 3]], dtype=float)
    assert _cluster_of_nodes(tree, np.array([0, 0, 1])) == {0: 0, 1: 0, 2: 1, 3: 0, 4: -1}
    matrix = np.array([[1, 0.9, 0.1], [0.9, 1, 0.1], [0.1, 0.1, 1]])
    plot_coclustering(matrix, np.array([0, 0, 1]), tmp_path / "c.png", "t", ["a", "b", "c"], tree)
    table = pd.DataFrame({"model": ["m", "m"], "n_clusters": [1, 2], "probability": [0.3, 0.7]})
    plot_n_clusters(table, tmp_path / "k.png", "t")
    assert (tmp_path / "c.svg").exists() and (tmp_path / "k.svg").exists()


def test_png_format_embeds_the_pngs_and_a_bad_format_is_refused(tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from clusterednb.evaluation.report import write_report

    fig, ax = plt.subplots()
    ax.plot([0, 1], [0, 1])
    fig.savefig(tmp_path / "demo_log_odds.png")
    fig.savefig(tmp_path / "demo_log_odds.svg")
    plt.close(fig)
    section = [("s", "t", None, [tmp_path / "demo_log_odds.png"])]
    svg = write_report(tmp_path, extra=section).read_text()
    assert "data:image/svg+xml" in svg and "data:image/png" not in svg
    png = write_report(tmp_path, extra=section, image_format="png").read_text()
    assert "data:image/png" in png and "data:image/svg+xml" not in png
    assert "contribution to the log-odds" in png  # the figure's caption, not its file name
    with pytest.raises(ValueError, match="image_format"):
        write_report(tmp_path, image_format="gif")


def test_the_tree_and_the_heat_map_share_their_rows(tmp_path, monkeypatch):
    """Leaf i of the dendrogram (at 10 i + 5) sits level with row n − 1 − i of the map:
    both axes span the same height and the map fills its axes."""
    import numpy as np

    from clusterednb import ClusteredNB
    from clusterednb.data.synthetic import make_planted_population
    from clusterednb.evaluation import plots

    population = make_planted_population(
        np.random.default_rng(3), group_sizes=(5, 4, 3), rows_per_task=10
    )
    frame = population.frame
    model = ClusteredNB(inference="bhc").fit(
        frame[population.feature_names], frame["label"], frame["task"]
    )
    drawn = []
    monkeypatch.setattr(plots, "_save", lambda fig, path: drawn.append(fig))
    plots.plot_coclustering(
        model.coclustering_, model.partition_, tmp_path / "c.png", "t", tree=model.tree_
    )
    tree_axes, map_axes = drawn[0].axes[:2]
    drawn[0].canvas.draw()
    tree_box, map_box = tree_axes.get_position(), map_axes.get_position()
    assert tree_box.y0 == pytest.approx(map_box.y0)
    assert tree_box.height == pytest.approx(map_box.height)
    n = model.partition_.size
    assert tree_axes.get_ylim() == (0, 10 * n)
    assert sorted(map_axes.get_ylim()) == [-0.5, n - 0.5]


def test_the_default_model_sets_are_drawn_in_distinct_colours():
    """Every model of a default set of `cnb evaluate` and of the demo gets its own colour (the
    demo once drew cnb-bhc and lr-pooled both blue); a calibrated model keeps its base's."""
    from clusterednb.cli.demo import DEMO_DECISION_MODELS, DEMO_MODELS
    from clusterednb.cli.parser import DECISION_KINDS, EVALUATE_KINDS
    from clusterednb.evaluation.plots import model_style

    for models in (
        EVALUATE_KINDS.split(","),
        DECISION_KINDS.split(","),
        DEMO_MODELS,
        DEMO_DECISION_MODELS,
    ):
        colours = [model_style(m)["color"] for m in models]
        assert len(set(colours)) == len(colours), dict(zip(models, colours, strict=True))
    for base in ("cnb-bhc", "cnb-gibbs"):
        assert model_style(f"{base}+sigmoid")["color"] == model_style(base)["color"]
        assert model_style(f"{base}+sigmoid")["marker"] != model_style(base)["marker"]

"""The `cnb` command end to end, through subprocesses."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import clusterednb
from clusterednb import NoSharingNB
from clusterednb.cli import output
from clusterednb.data.synthetic import make_planted_population
from clusterednb.estimation.decisions import AUTO_HELD, AUTO_JUDGED, AUTO_NOT_JUDGED


def cnb(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "clusterednb.cli", *args], capture_output=True, text=True
    )


@pytest.fixture(scope="module")
def data_file(tmp_path_factory):
    population = make_planted_population(
        np.random.default_rng(0), group_sizes=(3, 3), rows_per_task=20, n_features=4
    )
    path = tmp_path_factory.mktemp("cli") / "train.csv"
    population.frame.rename(columns={"task": "user", "label": "accepted"}).to_csv(path, index=False)
    return path


def test_fit_predict_round_trip(data_file, tmp_path):
    model_path, out_path = tmp_path / "m.cnb", tmp_path / "out.csv"
    result = cnb(
        "fit",
        str(data_file),
        "--task",
        "user",
        "--label",
        "accepted",
        "--model",
        "cs",
        "-o",
        str(model_path),
    )
    assert result.returncode == 0, result.stderr
    assert "log evidence" in result.stdout
    result = cnb(
        "predict",
        str(model_path),
        str(data_file),
        "--task",
        "user",
        "-o",
        str(out_path),
        "--cost-fp",
        "1",
        "--cost-fn",
        "8",
    )
    assert result.returncode == 0, result.stderr
    out = pd.read_csv(out_path)
    assert list(out.columns) == ["user", "p_0", "p_1", "decision"]
    np.testing.assert_allclose(out["p_0"] + out["p_1"], 1.0)
    np.testing.assert_array_equal(out["decision"], (out["p_1"] > 1 / 9).astype(int))


def test_predictions_match_the_library(data_file, tmp_path):
    cnb(
        "fit",
        str(data_file),
        "--task",
        "user",
        "--label",
        "accepted",
        "--model",
        "ns",
        "-o",
        str(tmp_path / "m.cnb"),
    )
    cnb(
        "predict",
        str(tmp_path / "m.cnb"),
        str(data_file),
        "--task",
        "user",
        "-o",
        str(tmp_path / "o.csv"),
    )
    frame = pd.read_csv(data_file)
    features = [c for c in frame.columns if c.startswith("f")]
    model = NoSharingNB().fit(frame[features], frame["accepted"], frame["user"])
    expected = model.predict_proba(frame[features], frame["user"])[:, 1]
    np.testing.assert_allclose(pd.read_csv(tmp_path / "o.csv")["p_1"], expected, atol=1e-12)


CLI_CLUSTERING = {"gamma": 1.0, "beta": 1.0}
"""The clustering's parameters that ``cnb fit`` passes by default."""


def _assert_cnb_predict_is_the_library(model, data_file, tmp_path):
    """``cnb predict`` of the file ``tmp_path / "m.cnb"`` gives ``model``'s probabilities when
    the library fits it on the same rows (to 1e-12)."""
    predicted = cnb(
        "predict", str(tmp_path / "m.cnb"), str(data_file), "--task", "user",
        "-o", str(tmp_path / "o.csv"),
    )  # fmt: skip
    assert predicted.returncode == 0, predicted.stderr
    frame = pd.read_csv(data_file)
    features = [c for c in frame.columns if c.startswith("f")]
    model.fit(frame[features], frame["accepted"], frame["user"])
    expected = model.predict_proba(frame[features], frame["user"])[:, 1]
    np.testing.assert_allclose(pd.read_csv(tmp_path / "o.csv")["p_1"], expected, atol=1e-12)


def test_fit_lightgbm_inside_the_clusters_saves_and_predicts_as_the_library(data_file, tmp_path):
    """``cnb fit --kind cnb-lgbm`` (plain and ``--json``) writes a ClusteredLearner with LightGBM
    inside the clusters; ``cnb predict`` reads it and gives the library's probabilities."""
    pytest.importorskip("lightgbm")
    from clusterednb import ClusteredLearner

    base = ["fit", str(data_file), "--task", "user", "--label", "accepted", "--seed", "0"]
    plain = cnb(*base, "--kind", "cnb-lgbm", "-o", str(tmp_path / "m.cnb"))
    assert plain.returncode == 0, plain.stderr
    assert plain.stdout.startswith("fitted LightGBM inside the clusters on 120 rows of 6 tasks")
    as_json = cnb(*base, "--kind", "cnb-lgbm", "--json", "-o", str(tmp_path / "j.cnb"))
    summary = json.loads(as_json.stdout)
    assert summary["learner"] == "lightgbm" and summary["tasks"] == 6
    model = ClusteredLearner("lightgbm", random_state=0, clustering_params=CLI_CLUSTERING)
    _assert_cnb_predict_is_the_library(model, data_file, tmp_path)


def test_evidence_table(data_file):
    result = cnb(
        "evidence",
        str(data_file),
        "--task",
        "user",
        "--label",
        "accepted",
        "--conditional",
        "--temperatures",
        "6",  # the table's shape is checked here; AIS's accuracy in tests/test_evidence.py
        "--runs",
        "2",
        "--kind",
        "ns,cs,cnb-bhc,cnb-gibbs,cnb-search,prototype",
    )
    assert result.returncode == 0, result.stderr
    assert "prototype: annealed importance sampling" in result.stderr  # its cost, said
    lines = result.stdout.splitlines()
    titles = [
        "No-Sharing",
        "Complete-Sharing",
        "Clustered (BHC)",
        "Clustered (Gibbs)",
        "Clustered (search)",
        "Prototype",
    ]
    assert [t for t in titles if any(line.strip().startswith(t) for line in lines)] == titles
    assert "log_conditional" in lines[0] and "lower_bound" in result.stdout
    ns_line = next(line for line in lines if line.strip().startswith("No-Sharing"))
    assert "exact" in ns_line


def test_fit_and_predict_clustered(data_file, tmp_path):
    result = cnb(
        "fit",
        str(data_file),
        "--task",
        "user",
        "--label",
        "accepted",
        "--model",
        "cnb-bhc",
        "-o",
        str(tmp_path / "c.cnb"),
    )
    assert result.returncode == 0, result.stderr
    result = cnb(
        "predict",
        str(tmp_path / "c.cnb"),
        str(data_file),
        "--task",
        "user",
        "-o",
        str(tmp_path / "o.csv"),
    )
    assert result.returncode == 0, result.stderr
    assert len(pd.read_csv(tmp_path / "o.csv")) == len(pd.read_csv(data_file))


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["fit", "{data}", "--task", "person", "--label", "accepted", "-o", "{tmp}/m"],
            "task/label column(s) ['person'] not found",
        ),
        (
            ["fit", "{tmp}/absent.csv", "--task", "u", "--label", "y", "-o", "{tmp}/m"],
            "no such file",
        ),
        (
            ["predict", "{data}", "{data}", "--task", "user", "-o", "{tmp}/o.csv"],
            "not a readable clusterednb model file",
        ),
    ],
)
def test_user_mistakes_give_one_line_errors(data_file, tmp_path, args, message):
    result = cnb(*[a.format(data=data_file, tmp=tmp_path) for a in args])
    assert result.returncode == 1
    assert result.stderr.strip().startswith("cnb: error:")
    assert message in result.stderr
    assert "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


@pytest.mark.xdist_group("demo")  # the demo runs once, in the worker of both its tests
def test_demo_runs_and_writes_a_self_contained_report(demo_run):
    result, folder = demo_run
    tmp_path = folder.parent  # the demo wrote into tmp_path / "demo"
    assert result.returncode == 0, result.stderr
    assert "Complete-Sharing" in result.stdout
    # no raw iCalendar on the terminal; the reply and the assistant's model are files
    assert "BEGIN:VCALENDAR" not in result.stdout and "METHOD:REPLY" not in result.stdout
    replies = list((tmp_path / "demo" / "organisation" / "replies").glob("*-reply.ics"))
    assert len(replies) == 1 and b"METHOD:REPLY" in replies[0].read_bytes()
    model = clusterednb.load(tmp_path / "demo" / "model.cnb")
    assert type(model).__name__ == "ClusteredLogisticRegression"
    report = (tmp_path / "demo" / "report.html").read_text()
    for section in ("Evidence and recovered groups", "Partitions", "T. Transfer", "A. Asymm"):
        assert section in report
    assert report.count(";base64,") >= 4 and "data:image/svg+xml;base64," in report
    assert "`" not in report  # inline code is rendered, never shown as backticks
    assert "Report:" in result.stdout.splitlines()[-1]
    # The service is prepared: the organisation's answers, two users, their invitations.
    from clusterednb.service.store import ServiceStore

    tokens = (tmp_path / "demo" / "service-tokens.txt").read_text().split()
    with ServiceStore(tmp_path / "demo" / "service.db") as store:
        assert store.counts()["answers"] >= 2_000
        users = tokens[0::2]
        assert len(users) == 2 and all(store.requests(user) for user in users)
        assert all(store.authenticate(token) for token in tokens[1::2])
    assert "make serve" in result.stdout
    for secret in ("service-tokens.txt", "service.db"):  # readable by their owner only
        assert oct((tmp_path / "demo" / secret).stat().st_mode)[-3:] == "600", secret
    transfer = pd.read_csv(tmp_path / "demo" / "transfer.csv")
    assert "cnb-logistic" in set(transfer["model"])  # the assistant's own model compared


@pytest.mark.slow
def test_make_demo_from_a_clean_clone(tmp_path):
    """``make demo`` on a fresh clone: creates its environment, runs, within 5 minutes."""
    import shutil
    import time

    root = Path(__file__).resolve().parents[2]
    if not (root / ".git").exists() or shutil.which("make") is None:
        pytest.skip("needs a git checkout and make")
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(root), str(clone)], check=True)
    started = time.perf_counter()
    result = subprocess.run(["make", "demo"], cwd=clone, capture_output=True, text=True)
    elapsed = time.perf_counter() - started
    assert result.returncode == 0, result.stderr[-2000:]
    assert (clone / "demo-output" / "report.html").exists()
    assert elapsed < 300, f"make demo took {elapsed:.0f} s"
    again = subprocess.run(["make", "demo"], cwd=clone, capture_output=True, text=True)
    assert again.returncode == 0, again.stderr[-2000:]  # a second run over the first's output


def test_evaluate_a_file(data_file, tmp_path):
    out = tmp_path / "eval"
    args = [
        "evaluate",
        str(data_file),
        "--task",
        "user",
        "--label",
        "accepted",
        "--models",
        "ns,cnb-bhc",
        "--k",
        "1,4",
        "--repeats",
        "1",
        "--targets",
        "2",
        "--out",
        str(out),
    ]
    result = cnb(*args)
    assert result.returncode == 0, result.stderr
    summary = pd.read_csv(out / "transfer.csv")
    assert sorted(set(summary["model"])) == ["cnb-bhc", "ns"]
    assert (out / "transfer_auc.png").exists()
    bad = cnb(*[a if a != "ns,cnb-bhc" else "ns,svm" for a in args])
    assert bad.returncode == 1 and "unknown model(s) ['svm']" in bad.stderr
    empty = cnb(*[a if a != "ns,cnb-bhc" else "," for a in args])
    assert empty.returncode == 1 and "--kind names no model" in empty.stderr


def test_evaluate_loss_runs_calibrated_clustered_models_by_default(data_file, tmp_path):
    """Protocol A thresholds probabilities, so without --kind its clustered models are the
    calibrated ones; protocol T keeps the plain ones (the map does not change a ranking)."""
    from clusterednb.cli.parser import DECISION_KINDS, EVALUATE_KINDS

    base = ["evaluate", str(data_file), "--task", "user", "--label", "accepted", "--repeats", "1"]
    result = cnb(*base, "--protocol", "loss", "-o", str(tmp_path / "loss"))
    assert result.returncode == 0, result.stderr
    models = set(pd.read_csv(tmp_path / "loss" / "loss.csv")["model"])
    assert models == set(DECISION_KINDS.split(","))
    assert {"cnb-bhc+sigmoid", "cnb-gibbs+sigmoid"} <= models and "cnb-bhc" not in models
    transfer = cnb(*base, "--k", "1", "--targets", "1", "-o", str(tmp_path / "transfer"))
    assert transfer.returncode == 0, transfer.stderr
    models = set(pd.read_csv(tmp_path / "transfer" / "transfer.csv")["model"])
    assert models == set(EVALUATE_KINDS.split(","))


def test_fit_transductive_select_with_a_chosen_temperature(data_file, tmp_path):
    """``cnb fit --transductive select --transductive-temperature auto``: u0's rows with an
    empty label choose its cluster; the model file keeps the chosen τ and predicts as the
    library does. A kind without clusters is refused by name."""
    from clusterednb import ClusteredNB, load

    frame = pd.read_csv(data_file)
    frame["accepted"] = frame["accepted"].astype(float)
    frame.loc[frame.index[frame["user"] == "u0"][2:], "accepted"] = np.nan
    path = tmp_path / "partly.csv"
    frame.to_csv(path, index=False)
    base = ["fit", str(path), "--task", "user", "--label", "accepted"]
    result = cnb(
        *base,
        "--kind",
        "cnb-bhc",
        "--transductive",
        "select",
        "--transductive-temperature",
        "auto",
        "-o",
        str(tmp_path / "t.cnb"),
    )
    assert result.returncode == 0, result.stderr
    model = load(tmp_path / "t.cnb")
    assert model.transductive == "select" and 0 < model.selection_temperature() <= 1
    features = [c for c in frame.columns if c not in ("user", "accepted")]
    library = ClusteredNB(
        inference="bhc", transductive="select", transductive_temperature="auto", random_state=0
    ).fit(frame[features], frame["accepted"], frame["user"])
    assert model.selection_temperature() == library.selection_temperature()
    np.testing.assert_allclose(
        model.predict_proba(frame[features], frame["user"]),
        library.predict_proba(frame[features], frame["user"]),
    )
    refused = cnb(*base, "--kind", "ns", "--transductive", "select", "-o", str(tmp_path / "n"))
    assert refused.returncode != 0 and "--transductive needs a clustered kind" in refused.stderr
    bad = cnb(*base, "--kind", "cnb-bhc", "--transductive-temperature", "3", "-o", "x")
    assert bad.returncode != 0 and "expected a number in (0, 1]" in bad.stderr


def test_fit_calibration_sigmoid_is_the_librarys_map(tmp_path):
    """``cnb fit --calibration sigmoid`` saves the map the library learns (reported in
    ``--json``); a kind without clusters is refused by name."""
    from clusterednb import ClusteredNB, load
    from clusterednb.meeting import FEATURE_NAMES, simulate_organisation

    requests = simulate_organisation(np.random.default_rng(2)).requests
    path = tmp_path / "requests.csv"
    requests.to_csv(path, index=False)
    base = ["fit", str(path), "--task", "user", "--label", "accepted"]
    result = cnb(
        *base,
        "--kind",
        "cnb-bhc",
        "--calibration",
        "sigmoid",
        "--json",
        "-o",
        str(tmp_path / "c.cnb"),
    )
    assert result.returncode == 0, result.stderr
    reported = json.loads(result.stdout)["calibration"]
    frame = pd.read_csv(path)
    features = list(FEATURE_NAMES)
    library = ClusteredNB(inference="bhc", calibration="sigmoid", random_state=0)
    library.fit(frame[features], frame["accepted"], frame["user"])
    np.testing.assert_allclose(reported, library.calibration_, rtol=1e-12)
    assert 0.0 < reported[0] < 1.0  # naive Bayes' log-odds shrunk
    np.testing.assert_allclose(load(tmp_path / "c.cnb").calibration_, library.calibration_)
    refused = cnb(*base, "--kind", "cs", "--calibration", "sigmoid", "-o", str(tmp_path / "n"))
    assert refused.returncode == 1 and "--calibration needs a clustered kind" in refused.stderr


def test_fit_and_predict_clustered_logistic_on_documents(tmp_path):
    """``cnb fit --kind cnb-logistic --text``: users who call the others' spam ham get their
    own cluster; ``cnb predict`` reads the file back with the model's vocabulary."""
    rng = np.random.default_rng(0)
    rows = []
    for user in range(8):
        flipped = user >= 4
        for _ in range(25):
            spam = bool(rng.random() < 0.5)
            pool = ["cheap", "pills", "offer", "win"] if spam else ["meeting", "notes", "team"]
            text = " ".join(rng.choice(pool, 3)) + " hello"
            rows.append({"user": f"u{user}", "body": text, "spam": int(spam != flipped)})
    data = tmp_path / "mail.csv"
    pd.DataFrame(rows).to_csv(data, index=False)
    model = tmp_path / "mail.cnb"
    fit = ["fit", str(data), "--task", "user", "--label", "spam", "--text", "body"]
    fit += ["--kind", "cnb-logistic", "-o", str(model)]
    fitted = cnb(*fit, "--json")
    assert fitted.returncode == 0, fitted.stderr
    summary = json.loads(fitted.stdout)
    assert summary["clusters"] == 2 and "log_evidence" not in summary
    assert set(summary) >= {"effective_rows", "floor"}
    out = tmp_path / "p.csv"
    predicted = cnb(
        "predict", str(model), str(data), "--task", "user", "--text", "body", "-o", str(out)
    )
    assert predicted.returncode == 0, predicted.stderr
    assert (pd.read_csv(out)["decision"] == pd.DataFrame(rows)["spam"]).mean() > 0.95
    for extra, word in (
        (["--calibration", "sigmoid"], "--calibration"),
        (["--observation", "bernoulli"], "multinomial"),
        (["--alpha", "2"], "--alpha"),
    ):
        refused = cnb(*fit, *extra)
        assert refused.returncode == 1 and word in refused.stderr
        assert len(refused.stderr.strip().splitlines()) == 1


def test_fit_relevance_names_the_columns_that_do_not_move_the_clusters(tmp_path):
    """``cnb fit --relevance``: each column's relevance, in plain text and ``--json``, equal
    to the library's; noise columns named as irrelevant, by the Gibbs and the variational
    engines; other kinds refused by name."""
    from clusterednb import ClusteredNB

    rng = np.random.default_rng(0)  # of five such tables, one has noise that fits a partition
    frames = []
    for user in range(16):
        y = rng.integers(2, size=15)
        follows = y if user % 2 else 1 - y
        colour = np.where(rng.random(15) < 0.85, follows, rng.integers(2, size=15))
        frames.append(
            pd.DataFrame(
                {
                    "user": f"u{user}",
                    "accepted": y,
                    "colour": np.array(["red", "blue"])[colour],
                    "weather": rng.choice(["sun", "rain", "fog"], size=15),
                    "score": rng.normal(size=15),
                }
            )
        )
    frame = pd.concat(frames, ignore_index=True)
    path = tmp_path / "rows.csv"
    frame.to_csv(path, index=False)
    base = ["fit", str(path), "--task", "user", "--label", "accepted", "--seed", "0"]
    plain = cnb(*base, "--kind", "cnb-gibbs", "--relevance", "-o", str(tmp_path / "m.cnb"))
    assert plain.returncode == 0, plain.stderr
    lines = plain.stdout.splitlines()
    assert lines[1].startswith("relevance to the clusters: colour ")
    assert lines[2].startswith("irrelevant to the clusters") and "weather" in lines[2]
    assert "colour" not in lines[2]
    # the screen held both noise columns shared before the sampler judged colour
    assert lines[3] == f"{output.HELD_NOTE}: weather, score", lines
    as_json = cnb(*base, "--kind", "cnb-gibbs", "--relevance", "--json", "-o", str(tmp_path / "j"))
    reported = json.loads(as_json.stdout)
    library = ClusteredNB(relevance=True, random_state=0, progress=False)
    library.fit(frame[["colour", "weather", "score"]], frame.accepted, frame.user)
    assert list(reported["feature_relevance"]) == ["colour", "weather", "score"]
    np.testing.assert_allclose(
        list(reported["feature_relevance"].values()), library.feature_relevance_
    )
    held = library.result_.extras["held_shared"]
    assert reported["columns_held_shared"] == list(library.feature_names_in_[held])
    refused = cnb(*base, "--kind", "cnb-bhc", "--relevance", "-o", str(tmp_path / "r"))
    assert refused.returncode == 1 and "--relevance" in refused.stderr, refused.stderr
    assert "cnb-gibbs, cnb-variational, cnb-logistic, cnb-lgbm, cnb-blend" in refused.stderr
    variational = cnb(*base, "--kind", "cnb-variational", "--relevance", "-o", str(tmp_path / "v"))
    assert variational.returncode == 0, variational.stderr
    lines = variational.stdout.splitlines()
    assert lines[1].startswith("relevance to the clusters: colour 1.00"), lines
    assert lines[2].startswith("irrelevant to the clusters") and "weather" in lines[2], lines
    logistic = cnb(*base, "--kind", "cnb-logistic", "--relevance", "-o", str(tmp_path / "l"))
    assert logistic.returncode == 0, logistic.stderr
    lines = logistic.stdout.splitlines()
    assert lines[1].startswith("relevance to the clusters: colour "), lines
    label = [line for line in lines if line.startswith("relevance to the label within clusters:")]
    assert len(label) == 1 and "colour" in label[0], lines
    # by default ("auto") naive Bayes holds the screened noise columns shared and clusters on
    # colour, and the lines say so; the regression judges the columns
    default = cnb(*base, "--kind", "cnb-gibbs", "-o", str(tmp_path / "d"))
    assert default.returncode == 0, default.stderr
    assert default.stdout.splitlines()[1:] == [
        f"relevance {AUTO_HELD}",
        f"{output.HELD_AUTO_NOTE}: weather, score",
    ], default.stdout
    judged = cnb(*base, "--kind", "cnb-logistic", "-o", str(tmp_path / "dl"))
    assert judged.stdout.splitlines()[1] == f"relevance {AUTO_JUDGED}", judged.stdout
    assert "floor " in judged.stdout and ", bins' prior " in judged.stdout.splitlines()[0]
    never = cnb(*base, "--kind", "cnb-gibbs", "--no-relevance", "--json", "-o", str(tmp_path / "n"))
    assert never.returncode == 0, never.stderr
    assert "feature_relevance" not in json.loads(never.stdout)
    assert "relevance" not in json.loads(never.stdout)
    office = np.array(list("nesw"))[frame.user.str[1:].astype(int) % 4]
    offices = frame[["user", "accepted"]].assign(office=office)
    offices.to_csv(tmp_path / "offices.csv", index=False)  # a column that differs by user
    clean = cnb(
        "fit", str(tmp_path / "offices.csv"), "--task", "user", "--label", "accepted",
        "--kind", "cnb-logistic", "-o", str(tmp_path / "c"),
    )  # fmt: skip
    assert clean.returncode == 0, clean.stderr
    assert clean.stdout.splitlines()[1:] == [f"relevance {AUTO_NOT_JUDGED}"], clean.stdout
    # BHC holds the screened columns by default too, and --no-relevance turns that off
    bhc = cnb(*base, "--kind", "cnb-bhc", "-o", str(tmp_path / "b"))
    assert bhc.returncode == 0, bhc.stderr
    assert bhc.stdout.splitlines()[1:] == default.stdout.splitlines()[1:], bhc.stdout
    plain_bhc = cnb(*base, "--kind", "cnb-bhc", "--no-relevance", "-o", str(tmp_path / "pb"))
    assert plain_bhc.returncode == 0 and len(plain_bhc.stdout.splitlines()) == 1, plain_bhc.stdout
    refused = cnb(*base, "--kind", "cs", "--no-relevance", "-o", str(tmp_path / "r"))
    assert refused.returncode == 1 and "--no-relevance needs" in refused.stderr, refused.stderr


@pytest.mark.slow  # 17 s; cnb-lgbm and cnb-boost keep the LightGBM kinds in the default suite
def test_fit_the_blend_prints_its_share_and_predicts_as_the_library(data_file, tmp_path):
    """``cnb fit --kind cnb-blend``: the regressions and LightGBM inside the clusters, the
    share chosen on held-out rows; plain and ``--json``; ``cnb predict`` equals the library."""
    pytest.importorskip("lightgbm")
    from clusterednb import ClusteredLearner

    base = ["fit", str(data_file), "--task", "user", "--label", "accepted", "--seed", "0"]
    as_json = cnb(*base, "--kind", "cnb-blend", "--json", "-o", str(tmp_path / "j.cnb"))
    assert as_json.returncode == 0, as_json.stderr
    share = json.loads(as_json.stdout)["regression_share"]
    assert share in (0.0, 0.25, 0.5, 0.75, 1.0)
    plain = cnb(*base, "--kind", "cnb-blend", "-o", str(tmp_path / "m.cnb"))
    assert plain.stdout.startswith("fitted LightGBM and the regressions inside the clusters")
    assert (f"the regressions' share {share:g}" in plain.stdout) == (share > 0)
    model = ClusteredLearner(
        "lightgbm",
        regression_share="auto",
        random_state=0,
        clustering_params=CLI_CLUSTERING,
    )
    _assert_cnb_predict_is_the_library(model, data_file, tmp_path)


def test_fit_the_booster_from_the_regressions_prints_its_trees_and_predicts_as_the_library(
    data_file, tmp_path
):
    """``cnb fit --kind cnb-boost``: one LightGBM booster started from the clusters'
    regressions; plain and ``--json``; ``cnb predict`` equals the library; ``cnb-boost+auto``
    makes the library's choice of start."""
    pytest.importorskip("lightgbm")
    from clusterednb import ClusteredBoosting

    base = ["fit", str(data_file), "--task", "user", "--label", "accepted", "--seed", "0"]
    as_json = cnb(*base, "--kind", "cnb-boost", "--json", "-o", str(tmp_path / "j.cnb"))
    assert as_json.returncode == 0, as_json.stderr
    summary = json.loads(as_json.stdout)
    assert summary["learner"] == "lightgbm from the regressions" and summary["trees"] >= 1
    plain = cnb(*base, "--kind", "cnb-boost", "-o", str(tmp_path / "m.cnb"))
    assert plain.stdout.startswith("fitted LightGBM started from the clustered regressions")
    assert f"{summary['trees']} trees from the regressions" in plain.stdout
    model = ClusteredBoosting(random_state=0, clustering_params=CLI_CLUSTERING)
    _assert_cnb_predict_is_the_library(model, data_file, tmp_path)
    choosing = cnb(*base, "--kind", "cnb-boost+auto", "--json", "-o", str(tmp_path / "a.cnb"))
    assert choosing.returncode == 0, choosing.stderr
    chosen = json.loads(choosing.stdout)["learner"]
    library = ClusteredBoosting(random_state=0, clustering_params=CLI_CLUSTERING, start="auto")
    frame = pd.read_csv(data_file)
    features = [c for c in frame.columns if c.startswith("f")]
    library.fit(frame[features], frame["accepted"], frame["user"])
    assert chosen == library.fit_summary()["learner"]

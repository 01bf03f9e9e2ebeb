"""The meeting assistant end to end: simulation, recovery of the groups, store, CLI."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import icalendar
import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import adjusted_rand_score

import clusterednb
from clusterednb import ClusteredNB, NoSharingNB
from clusterednb.cli import main
from clusterednb.meeting import FEATURE_NAMES, meeting_schema, simulate_organisation
from clusterednb.meeting.answer_store import FeedbackStore
from clusterednb.meeting.errors import MeetingError
from clusterednb.meeting.invitation import read_calendar
from clusterednb.meeting.reply import reply_problems


@pytest.fixture(scope="module")
def organisation():
    return simulate_organisation(np.random.default_rng(0))


def test_default_organisation_mirrors_the_thesis(organisation):
    truth = organisation.truth
    assert len(truth) == 21
    assert sorted(truth["group"].value_counts().tolist()) == [1, 1, 1, 1, 2, 2, 3, 4, 6]
    sizes = organisation.requests["user"].value_counts()
    assert sizes.between(100, 400).all()
    requests = organisation.requests
    no_conflict = requests["conflict"] == "no"
    assert (requests.loc[no_conflict, "conflict_importance"] == "other").all()
    assert (requests.loc[~no_conflict, "conflict_frequency"] != "other").all()
    again = simulate_organisation(np.random.default_rng(0))
    assert again.requests.equals(organisation.requests)
    dataset = organisation.dataset()
    assert dataset.n_tasks == 21 and dataset.X.shape == (len(requests), 15)


def test_organisation_written_as_csv_and_parquet_reads_back(organisation, tmp_path):
    import pandas as pd

    for file_format in ("csv", "parquet"):
        organisation.write(tmp_path / file_format, file_format)
        path = tmp_path / file_format / f"requests.{file_format}"
        back = pd.read_csv(path) if file_format == "csv" else pd.read_parquet(path)
        assert back.astype(str).equals(organisation.requests.astype(str))


@pytest.mark.parametrize("inference", ["bhc", "gibbs"])
def test_clustered_recovers_the_groups_and_beats_no_sharing(organisation, inference):
    requests = organisation.requests
    X, y, users = requests[list(FEATURE_NAMES)], requests["accepted"], requests["user"]
    clustered = ClusteredNB(
        inference=inference,
        schema=meeting_schema(),
        n_sweeps=40,
        burn_in=10,
        random_state=0,
        progress=False,
    ).fit(X, y, users)
    no_sharing = NoSharingNB(schema=meeting_schema()).fit(X, y, users)
    assert clustered.log_evidence_ > no_sharing.log_evidence_
    order = clustered.task_ids_
    truth = organisation.truth.set_index("user").loc[order, "group"].to_numpy()
    assert adjusted_rand_score(truth, clustered.partition_) >= 0.9


def _features():
    schema = meeting_schema()
    return {
        name: values[0]
        for name, values in zip(schema.feature_names, schema.categories, strict=True)
    }


def test_store_records_replaces_and_refuses_bad_values(tmp_path):
    with FeedbackStore(tmp_path / "fb.sqlite") as store:
        store.record("ann", "r1", _features(), accepted=True)
        store.record("ann", "r1", _features(), accepted=False)  # changed her mind
        store.record("bob", "r2", _features(), accepted=True)
        with pytest.raises(MeetingError, match="feature 'duration' has value '45'"):
            store.record("bob", "r3", {**_features(), "duration": "45"}, accepted=True)
        frame = store.frame()
    assert frame[["user", "uid", "accepted"]].values.tolist() == [
        ["ann", "r1", "decline"],
        ["bob", "r2", "accept"],
    ]


def test_store_survives_a_writer_killed_between_writes(tmp_path):
    path = tmp_path / "fb.sqlite"
    writer = textwrap.dedent(
        f"""
        import sys, time
        from clusterednb.meeting.answer_store import FeedbackStore
        features = {_features()!r}
        store = FeedbackStore({str(path)!r})
        for i in range(10_000):
            store.record("ann", f"r{{i}}", features, accepted=i % 2 == 0)
            print(i, flush=True)
        """
    )
    process = subprocess.Popen([sys.executable, "-c", writer], stdout=subprocess.PIPE, text=True)
    committed = [int(process.stdout.readline()) for _ in range(25)]
    process.kill()
    process.wait()
    with FeedbackStore(path) as store:
        frame = store.frame()
    recorded = set(frame["uid"])
    assert {f"r{i}" for i in committed} <= recorded
    assert frame.notna().all().all() and len(frame) >= 25


def test_cli_simulate_fit_decide_learn(tmp_path, capsys):
    out = tmp_path / "org"
    assert main(["meeting", "simulate", "--out", str(out), "--seed", "1", "--pending", "1"]) == 0
    model, store = tmp_path / "m.cnb", tmp_path / "fb.sqlite"
    assert (
        main(
            [
                "meeting",
                "fit",
                "--requests",
                str(out / "requests.csv"),
                "--store",
                str(store),
                "--model",
                str(model),
            ]
        )
        == 0
    )
    request = out / "pending" / "user04" / "request-0.ics"
    common = [
        "--user",
        "user04",
        "--calendar",
        str(out / "calendars" / "user04.ics"),
        "--directory",
        str(out / "directory.json"),
    ]
    decisions = []
    for cost in ("0.01", "100"):  # almost free / very costly to accept wrongly
        reply = tmp_path / f"reply-{cost}.ics"
        assert (
            main(
                [
                    "meeting",
                    "decide",
                    str(request),
                    *common,
                    "--model",
                    str(model),
                    "--cost-false-accept",
                    cost,
                    "--reply",
                    str(reply),
                ]
            )
            == 0
        )
        (event,) = icalendar.Calendar.from_ical(reply.read_bytes()).walk("VEVENT")
        decisions.append(event["ATTENDEE"].params["PARTSTAT"])
        assert reply_problems(reply.read_bytes(), read_calendar(request)) == []
    assert decisions == ["ACCEPTED", "DECLINED"]
    printed = capsys.readouterr().out
    assert "reasons that pushed it most" in printed
    assert "1.000" not in printed
    decide_json = ["meeting", "decide", str(request), *common, "--model", str(model), "--json"]
    assert main([*decide_json, "-o", str(tmp_path / "r.ics")]) == 0
    answer = json.loads(capsys.readouterr().out)
    assert answer["decision"] in ("accept", "decline") and 0 < answer["p_accept"] < 1
    assert set(answer["expected_loss"]) == {"accept", "decline"}
    assert {"feature", "value", "log_odds"} <= set(answer["reasons"][0])
    assert main(["meeting", "decide", str(request), *common, "--model", str(model), "-o", "-"]) == 0
    printed = capsys.readouterr()
    assert reply_problems(printed.out.encode(), read_calendar(request)) == []  # only the reply
    assert "reasons that pushed it most" in printed.err
    zero = ["--cost-false-accept", "0", "--cost-false-decline", "0"]
    assert main(["meeting", "decide", str(request), *common, "--model", str(model), *zero]) != 0
    error = capsys.readouterr().err
    assert "both 0" in error and "Traceback" not in error
    assert (
        main(
            [
                "meeting",
                "learn",
                str(request),
                *common,
                "--accepted",
                "yes",
                "--store",
                str(store),
                "--model",
                str(model),
            ]
        )
        == 0
    )
    with FeedbackStore(store) as feedback:
        assert feedback.frame()["accepted"].tolist() == ["accept"]
    assert (
        main(["meeting", "decide", str(tmp_path / "missing.ics"), *common, "--model", str(model)])
        == 1
    )
    assert "cannot read calendar" in capsys.readouterr().err


def test_meeting_fit_calibrates_unless_told_not_to(organisation, tmp_path, capsys):
    """The assistant's Clustered NB learns Platt's map by default (naive Bayes' log-odds
    shrunk: slope below 1), saves it, and predicts what the uncalibrated model predicts,
    mapped."""
    organisation.write(tmp_path / "org")
    requests = str(tmp_path / "org" / "requests.csv")
    store = str(tmp_path / "fb.sqlite")
    models = {}
    for calibration in ("sigmoid", "none"):
        path = tmp_path / f"{calibration}.cnb"
        argv = ["meeting", "fit", "--requests", requests, "--store", store, "-o", str(path)]
        assert main([*argv, "--kind", "cnb-bhc", "--calibration", calibration]) == 0
        models[calibration] = clusterednb.load(path)
    printed = capsys.readouterr().out
    assert "log-odds calibrated to" in printed and "probabilities not calibrated" in printed
    slope, intercept = models["sigmoid"].calibration_
    assert 0.0 < slope < 1.0
    assert not hasattr(models["none"], "calibration_")
    rows = organisation.requests.iloc[:50]
    plain = models["none"].predict_log_proba(rows[list(FEATURE_NAMES)], rows["user"])
    calibrated = models["sigmoid"].predict_log_proba(rows[list(FEATURE_NAMES)], rows["user"])
    expected = slope * (plain[:, 1] - plain[:, 0]) + intercept
    np.testing.assert_allclose(calibrated[:, 1] - calibrated[:, 0], expected, rtol=1e-9)


@pytest.mark.parametrize("kind", ["cnb-logistic", "cnb-bhc", "cnb-gibbs"])
def test_every_kind_of_assistant_decides_learns_and_explains(tmp_path, capsys, kind):
    """`cnb meeting fit --kind K`, then decide (reasons in plain features in the JSON) and
    learn (the model file updated by partial_fit) work for every model the assistant offers."""
    from clusterednb.examples import meeting as toy

    folder, _ = toy.world()
    toy.organisation().write(tmp_path)
    model = tmp_path / f"{kind}.cnb"
    argv = [
        "meeting",
        "fit",
        "--requests",
        str(tmp_path / "requests.csv"),
        "--store",
        str(tmp_path / "fb.sqlite"),
        "-o",
        str(model),
        "--kind",
        kind,
    ]
    assert main(argv) == 0
    request = folder / "pending" / "user00" / "request-0.ics"
    common = [
        "--user",
        "user00",
        "--calendar",
        str(folder / "calendars" / "user00.ics"),
        "--directory",
        str(folder / "directory.json"),
    ]
    capsys.readouterr()
    assert (
        main(
            [
                "meeting",
                "decide",
                str(request),
                *common,
                "--model",
                str(model),
                "--json",
                "-o",
                str(tmp_path / "reply.ics"),
            ]
        )
        == 0
    )
    decided = json.loads(capsys.readouterr().out)
    assert decided["decision"] in ("accept", "decline")
    assert 0.0 <= decided["p_accept"] <= 1.0
    assert decided["reasons"] and all(r["feature"] for r in decided["reasons"])
    before = clusterednb.load(model)
    assert (
        main(
            [
                "meeting",
                "learn",
                str(request),
                *common,
                "--accepted",
                "yes",
                "--store",
                str(tmp_path / "fb2.sqlite"),
                "--model",
                str(model),
            ]
        )
        == 0
    )
    after = clusterednb.load(model)
    if kind == "cnb-logistic":
        assert after.rows_.y.size == before.rows_.y.size + 1
    else:
        assert after.counts_.label_counts.sum() == before.counts_.label_counts.sum() + 1


def test_every_value_of_every_feature_has_plain_words():
    from clusterednb.meeting.features import GLOSSARY, MEETING_FEATURES, in_words

    for feature, values in MEETING_FEATURES.items():
        for value in values:
            words = in_words(feature, value)
            assert value in GLOSSARY[feature]
            assert words or feature.startswith("conflict_"), (feature, value)
            assert "_" not in words and " = " not in words


def test_reasons_are_said_in_words_and_a_surprising_direction_says_so():
    from clusterednb.meeting.explain import reasons

    clash = {
        "conflict": "yes",
        "conflict_importance": "important",
        "conflict_frequency": "regularly",
    }
    towards_accepting = reasons(pd.Series({"conflict": 1.5}), clash)[0].words
    assert towards_accepting.startswith("a clash with an important event that recurs every week")
    assert "yet people like you usually accept despite such a clash" in towards_accepting
    towards_declining = reasons(pd.Series({"conflict": -1.5}), clash)[0].words
    assert "yet" not in towards_declining
    calm = {"conflict": "no", "conflict_importance": "other", "conflict_frequency": "other"}
    assert reasons(pd.Series({"conflict": -2.0}), calm)[0].words == (
        "no clash with your calendar, yet people like you usually decline such invitations"
    )
    day = {"busy_fday": "light-free", "busy_hday": "light-free"}
    assert reasons(pd.Series({"busy_fday": -0.3, "busy_hday": -0.2}), day)[0].words == (
        "a light day, the slot free just before and after, a light half-day"
    )  # the shared flag said once
    soon = reasons(pd.Series({"invitee_soon": 0.4}), {"invitee_soon": "more"})[0]
    assert soon.words == "no other meeting with the organiser in the coming week"

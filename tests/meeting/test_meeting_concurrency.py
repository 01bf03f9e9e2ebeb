"""Several processes learning at once lose nothing; a busy store says so."""

from __future__ import annotations

import multiprocessing
import sqlite3

import pytest

import clusterednb as cnb
from clusterednb.cli import main
from clusterednb.meeting import FEATURE_NAMES, meeting_schema
from clusterednb.meeting.answer_store import FeedbackStore
from clusterednb.meeting.errors import MeetingError

N_ANSWERS = 8


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    folder = tmp_path_factory.mktemp("concurrent")
    out = folder / "org"
    assert main(["meeting", "simulate", "--out", str(out), "--pending", str(N_ANSWERS)]) == 0
    return out


def _learn(arguments: list[str]) -> None:
    raise SystemExit(main(arguments))


def test_concurrent_learners_update_the_model_once_each(world, tmp_path):
    import pandas as pd

    requests = pd.read_csv(world / "requests.csv", dtype=str, keep_default_na=False)
    model_path, store = tmp_path / "m.cnb", tmp_path / "fb.sqlite"
    cnb.NoSharingNB(schema=meeting_schema()).fit(
        requests[list(FEATURE_NAMES)], requests["accepted"], requests["user"]
    ).save(model_path)
    before = cnb.load(model_path).counts_.label_counts.sum()
    common = [
        "--user",
        "user04",
        "--calendar",
        str(world / "calendars" / "user04.ics"),
        "--directory",
        str(world / "directory.json"),
        "--store",
        str(store),
        "--model",
        str(model_path),
        "--accepted",
        "yes",
    ]
    context = multiprocessing.get_context("fork")
    processes = [
        context.Process(
            target=_learn,
            args=(
                [
                    "meeting",
                    "learn",
                    str(world / "pending" / "user04" / f"request-{i}.ics"),
                    *common,
                ],
            ),
        )
        for i in range(N_ANSWERS)
    ]
    for process in processes:
        process.start()
    for process in processes:
        process.join(timeout=120)
        assert process.exitcode == 0
    with FeedbackStore(store) as feedback:
        assert len(feedback.frame()) == N_ANSWERS
    assert cnb.load(model_path).counts_.label_counts.sum() == before + N_ANSWERS


def _features() -> dict[str, str]:
    schema = meeting_schema()
    return {n: c[0] for n, c in zip(schema.feature_names, schema.categories, strict=True)}


def test_a_reader_does_not_block_a_writer_and_a_held_writer_is_reported_busy(tmp_path):
    path = tmp_path / "fb.sqlite"
    with FeedbackStore(path) as store:
        store.record("ann", "r0", _features(), accepted=True)
    reader = sqlite3.connect(path, isolation_level=None)
    reader.execute("BEGIN")
    assert reader.execute("SELECT count(*) FROM feedback").fetchone() == (1,)
    with FeedbackStore(path, timeout=0.2) as store:  # WAL: the open read does not block
        store.record("ann", "r1", _features(), accepted=False)
    reader.execute("COMMIT")
    reader.execute("BEGIN IMMEDIATE")  # another writer holds the store
    with FeedbackStore(path, timeout=0.2) as store:
        with pytest.raises(MeetingError, match="is busy"):
            store.record("ann", "r2", _features(), accepted=True)
    reader.execute("ROLLBACK")
    reader.close()
    with FeedbackStore(path) as store:
        assert sorted(store.frame()["uid"]) == ["r0", "r1"]


def test_a_file_that_is_not_a_store_is_named(tmp_path):
    path = tmp_path / "notes.txt"
    path.write_text("not a database at all, just some words" * 20)
    with pytest.raises(MeetingError, match="is not a feedback store"):
        FeedbackStore(path)

"""``ClusteredNB(relevance=True)`` (issue 49): columns that do not separate tasks are found
shared, reported per column, kept in the model file, and refused where no engine samples
them."""

from __future__ import annotations

import numpy as np
import pytest

import clusterednb
from clusterednb import ClusteredNB, Counts
from clusterednb.estimation.decisions import AUTO_HELD, AUTO_NOT_JUDGED
from clusterednb.exceptions import CNBError
from clusterednb.inference.relevance import shared_evidence
from clusterednb.models.observation import DirichletNB
from model_helpers import assert_relevance_survives_a_model_file, relevance_population


def test_the_noise_columns_are_found_shared_and_reported_per_column(tmp_path):
    X, y, tasks = relevance_population()
    model = ClusteredNB(relevance=True, random_state=0, progress=False, n_sweeps=200).fit(
        X, y, tasks
    )
    relevance = dict(zip(model.feature_names_in_, model.feature_relevance_, strict=True))
    assert list(relevance) == list(X.columns)
    assert relevance["a"] > 0.5 and relevance["b"] > 0.5, relevance
    # a binary column pays the smallest Occam factor: noise_flag's posterior is 0.09-0.11
    # under every seed, the others' below 0.001
    assert relevance["noise_colour"] < 0.01 and relevance["noise_number"] < 0.01, relevance
    assert relevance["noise_flag"] < 0.2, relevance
    again = ClusteredNB(relevance=True, random_state=0, progress=False, n_sweeps=200).fit(
        X, y, tasks
    )
    np.testing.assert_array_equal(again.feature_relevance_, model.feature_relevance_)

    assert_relevance_survives_a_model_file(model, X, tasks, tmp_path / "model.cnb", 20)


def test_the_noise_does_not_merge_the_two_groups():
    X, y, tasks = relevance_population(seed=1)
    plain = ClusteredNB(relevance=False, random_state=0, progress=False, n_sweeps=200)
    plain = plain.fit(X, y, tasks)
    relevant = ClusteredNB(relevance=True, random_state=0, progress=False, n_sweeps=200).fit(
        X, y, tasks
    )
    group = np.arange(24) % 2
    together = relevant.coclustering_[group[:, None] == group[None, :]].mean()
    apart = relevant.coclustering_[group[:, None] != group[None, :]].mean()
    assert together > apart + 0.3, (together, apart)
    assert relevant.log_evidence_ > plain.log_evidence_


@pytest.mark.parametrize(
    ("settings", "says"),
    [
        ({"inference": "bhc"}, "the 'bhc' engine does not sum over the features' switches"),
        ({"inference": "search"}, "the 'search' engine does not sum over the features' switches"),
        (
            {"inference": "gibbs", "backend": "dask"},
            "run by the local exact, Gibbs and variational",
        ),
        ({"relevance_prior": (0, 1)}, "relevance_prior must be two positive numbers"),
        ({"relevance": "yes"}, "relevance must be one of"),
        ({"semi_supervised": True}, "needs inference='gibbs' without relevance"),
    ],
)
def test_what_no_engine_samples_is_refused_by_name(settings, says):
    X, y, tasks = relevance_population(n_tasks=6, n_rows=4)
    y = y.astype(float)
    y[:2] = np.nan  # unlabelled rows, for semi_supervised
    model = ClusteredNB(progress=False, **{"relevance": True, **settings})
    with pytest.raises(CNBError, match=says):
        model.fit(X, y, tasks)


def test_the_exact_engine_judges_the_columns_and_keeps_them_in_the_model_file(tmp_path):
    """``inference="exact"`` sums the switches and partitions out (its predictive is tested
    against the brute force in tests/inference): the noise columns found shared, the groups
    kept apart, deterministic, and the same after a save and load."""
    X, y, tasks = relevance_population(n_tasks=6, n_rows=12)
    model = ClusteredNB(inference="exact", relevance=True, progress=False).fit(X, y, tasks)
    relevance = dict(zip(model.feature_names_in_, model.feature_relevance_, strict=True))
    assert relevance["a"] > 0.5 and relevance["b"] > 0.5, relevance
    assert max(relevance["noise_colour"], relevance["noise_number"]) < 0.1, relevance
    assert model.evidence_kind_ == "exact"
    group = np.arange(6) % 2
    assert model.coclustering_[group[:, None] != group[None, :]].max() < 0.5
    again = ClusteredNB(inference="exact", relevance=True, progress=False).fit(X, y, tasks)
    np.testing.assert_array_equal(again.predict_proba(X, tasks), model.predict_proba(X, tasks))
    assert_relevance_survives_a_model_file(model, X, tasks, tmp_path / "model.cnb", 20)


def test_partial_fit_keeps_reporting_relevance():
    X, y, tasks = relevance_population(n_tasks=8)
    model = ClusteredNB(relevance=True, random_state=0, progress=False, n_sweeps=60)
    model.fit(X.iloc[:60], y[:60], tasks[:60]).partial_fit(X.iloc[60:], y[60:], tasks[60:])
    assert model.feature_relevance_.shape == (X.shape[1],)
    assert model.task_ids_.size == 8


def _answers(model, X, tasks):
    """What a fit answers: its probabilities and its evidence."""
    return model.predict_proba(X, tasks), model.log_evidence_


ENGINE_POPULATIONS = [
    ("gibbs", {}),
    ("variational", {}),
    ("bhc", {}),
    ("bhc-randomized", {}),
    ("search", {}),
    # at most 10 tasks; a table whose three noise columns the screen holds, label-free (on
    # seed 1's table of that size noise_flag stands above chance, as one noise column in a
    # few does)
    ("exact", {"n_tasks": 8, "n_rows": 20, "seed": 3}),
]


@pytest.mark.parametrize(("inference", "population"), ENGINE_POPULATIONS)
def test_auto_holds_the_screened_columns_shared_and_clusters_on_the_others(
    inference, population, tmp_path
):
    """The default ``relevance="auto"`` where the screen holds the noise columns, with every
    engine: the plain engine on the other columns, with the draws of a plain fit on a table
    without the held ones (the same partition and co-clustering); the evidence adds the held
    columns' evidence when shared by every task (exact: the exact evidence of that model);
    held columns that do not follow the label leave every prediction as the plain fit gives
    it; the relevance is the screen's verdict, and the summary says so."""
    X, y, tasks = relevance_population(**{"seed": 1, **population})
    settings = {"inference": inference, "random_state": 0, "progress": False, "n_sweeps": 60}
    auto = ClusteredNB(**settings).fit(X, y, tasks)
    held = ["noise_colour", "noise_number", "noise_flag"]
    summary = auto.fit_summary()
    assert auto.relevance == "auto" and summary["relevance"] == AUTO_HELD
    assert summary["columns_held_shared"] == held
    assert auto.feature_relevance_.tolist() == [1.0, 1.0, 0.0, 0.0, 0.0]

    free = X[["a", "b"]]
    plain = ClusteredNB(**settings, relevance=False).fit(free, y, tasks)
    np.testing.assert_array_equal(auto.partition_, plain.partition_)
    np.testing.assert_array_equal(auto.coclustering_, plain.coclustering_)
    schema = auto.schema_
    codes = schema.encode_features(X)
    one_task = np.zeros(y.size, dtype=int)
    pooled = Counts.from_codes(codes, y, one_task, n_tasks=1, n_classes=2, offsets=schema.offsets)
    model = DirichletNB(schema, beta=1.0)
    log_shared, label_free = shared_evidence(model, pooled.value_counts[0].astype(float))
    is_held = np.isin(auto.feature_names_in_, held)
    np.testing.assert_allclose(
        auto.log_evidence_, plain.log_evidence_ + log_shared[is_held].sum(), rtol=1e-12
    )
    assert (label_free[is_held] >= 0.5).all()  # so the predictions are the plain ones
    np.testing.assert_allclose(
        auto.predict_proba(X, tasks), plain.predict_proba(free, tasks), rtol=1e-10
    )
    if inference in ("gibbs", "variational"):  # True still samples (elsewhere: refused)
        judged = ClusteredNB(**settings, relevance=True).fit(X, y, tasks)
        assert 0.0 < judged.feature_relevance_[:2].min() and summary != judged.fit_summary()
    assert_relevance_survives_a_model_file(auto, X, tasks, tmp_path / "auto.cnb", 20)
    assert clusterednb.load(tmp_path / "auto.cnb").fit_summary() == summary


@pytest.mark.parametrize(("inference", "population"), ENGINE_POPULATIONS)
def test_auto_fits_as_relevance_false_where_every_column_follows_the_label(inference, population):
    X, y, tasks = relevance_population(**{"seed": 1, **population})
    X = X[["a", "b"]]
    settings = {"inference": inference, "random_state": 0, "progress": False, "n_sweeps": 60}
    auto = ClusteredNB(**settings).fit(X, y, tasks)
    plain = ClusteredNB(**settings, relevance=False).fit(X, y, tasks)
    for got, expected in zip(_answers(auto, X, tasks), _answers(plain, X, tasks), strict=True):
        np.testing.assert_array_equal(got, expected)
    assert not hasattr(auto, "feature_relevance_")
    assert auto.fit_summary()["relevance"] == AUTO_NOT_JUDGED


def test_auto_on_the_dask_backend_fits_as_false():
    """The Dask backend's shards are not screened: "auto" fits there as False."""
    pytest.importorskip("dask")
    X, y, tasks = relevance_population(seed=1)
    settings = {
        "backend": "dask",
        "random_state": 0,
        "progress": False,
        "n_sweeps": 40,
        "burn_in": 10,
    }
    auto = ClusteredNB(**settings).fit(X, y, tasks)
    plain = ClusteredNB(**settings, relevance=False).fit(X, y, tasks)
    np.testing.assert_array_equal(auto.predict_proba(X, tasks), plain.predict_proba(X, tasks))
    assert auto.fit_summary()["relevance"] == AUTO_NOT_JUDGED


def test_auto_with_unlabelled_rows_in_the_sampler_fits_as_false():
    """The Gibbs sampler that completes unlabelled rows judges no column: "auto" leaves it so
    (``relevance=True`` would refuse)."""
    X, y, tasks = relevance_population(seed=2)
    y = y.astype(float)
    y[::5] = np.nan
    settings = {"semi_supervised": "gibbs", "random_state": 0, "progress": False, "n_sweeps": 60}
    auto = ClusteredNB(**settings).fit(X, y, tasks)
    plain = ClusteredNB(**settings, relevance=False).fit(X, y, tasks)
    np.testing.assert_array_equal(auto.predict_proba(X, tasks), plain.predict_proba(X, tasks))


def test_auto_above_its_tasks_fits_as_false(monkeypatch):
    """Above ``MAX_AUTO_TASKS`` the relevance engines cost many plain fits: "auto" leaves
    the columns unjudged there (``relevance=True`` still judges them)."""
    from clusterednb.naive_bayes import engines

    monkeypatch.setattr(engines, "MAX_AUTO_TASKS", 20)
    X, y, tasks = relevance_population(seed=1)  # 24 tasks, noise the screen holds
    settings = {"random_state": 0, "progress": False, "n_sweeps": 60}
    auto = ClusteredNB(**settings).fit(X, y, tasks)
    plain = ClusteredNB(**settings, relevance=False).fit(X, y, tasks)
    np.testing.assert_array_equal(auto.predict_proba(X, tasks), plain.predict_proba(X, tasks))
    assert auto.fit_summary()["relevance"] == AUTO_NOT_JUDGED
    assert hasattr(ClusteredNB(**settings, relevance=True).fit(X, y, tasks), "feature_relevance_")


@pytest.mark.parametrize("inference", ["exact", "bhc"])
def test_an_unseeded_exact_or_bhc_fit_with_a_screen_is_the_same_run_after_run(inference):
    """The screen's shuffles are seeded by the table: where it holds columns, an exact or BHC
    fit draws nothing else, so without a seed it gives the same numbers every time, and the
    same as with any seed."""
    X, y, tasks = relevance_population(seed=3, n_tasks=8, n_rows=20)
    fits = [
        ClusteredNB(inference=inference, random_state=seed, progress=False).fit(X, y, tasks)
        for seed in (None, None, 0, 7)
    ]
    assert fits[0].fit_summary()["columns_held_shared"]  # the screen held columns
    for other in fits[1:]:
        assert other.fit_summary() == fits[0].fit_summary()
        for got, expected in zip(
            _answers(other, X, tasks), _answers(fits[0], X, tasks), strict=True
        ):
            np.testing.assert_array_equal(got, expected)


def test_the_columns_held_do_not_depend_on_the_samplers_seed():
    X, y, tasks = relevance_population(seed=1)
    held = set()
    for seed in (0, 1, 2, None):
        model = ClusteredNB(random_state=seed, progress=False, n_sweeps=60).fit(X, y, tasks)
        held.add(tuple(model.fit_summary()["columns_held_shared"]))
    assert held == {("noise_colour", "noise_number", "noise_flag")}

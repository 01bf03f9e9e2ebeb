"""The variational engine with feature relevance (issue 49): its bound against the exact
evidence with the switches summed out, its coordinate ascent, the switches it finds, and the
estimator that runs it."""

from __future__ import annotations

import numpy as np
import pytest

from clusterednb import ClusteredNB
from clusterednb.inference.relevance_exact import enumerate_relevance
from clusterednb.inference.variational.problem import VariationalSettings
from clusterednb.inference.variational.relevance import fit_variational_relevance
from model_helpers import (
    assert_relevance_survives_a_model_file,
    relevance_population,
    relevance_toy,
)


@pytest.mark.parametrize(("n_tasks", "prior"), [(3, (1.0, 1.0)), (5, (2.0, 0.5)), (6, (1.0, 3.0))])
def test_the_bound_is_below_the_exact_evidence_and_rises_with_every_update(n_tasks, prior):
    model, counts = relevance_toy(n_tasks, seed=n_tasks)
    exact = enumerate_relevance(model, counts, 0.8, prior)
    result = fit_variational_relevance(model, counts, 0.8, np.random.default_rng(0), prior=prior)
    assert result.log_evidence <= exact.log_evidence + 1e-9
    assert result.log_evidence > exact.log_evidence - 3.0  # a bound, not a wild one
    trace = result.extras["elbo_trace"]
    assert (np.diff(trace) >= -1e-9 * np.abs(trace[1:])).all(), trace
    relevance = result.extras["feature_relevance"]
    assert relevance.shape == (3,) and ((relevance >= 0) & (relevance <= 1)).all()


@pytest.mark.parametrize("refine_sweeps", [0, 40])
def test_the_switches_agree_with_the_exact_posterior_where_it_is_clear(refine_sweeps):
    """Six tasks in two groups that differ in ``a`` by many rows: exact says ``a`` is relevant
    and the two noise columns shared; mean field says the same (alone, and finished by the
    collapsed sampler), finds the groups, and predicts with them."""
    model, counts = relevance_toy(6, seed=2, n_rows=(25, 35))
    exact = enumerate_relevance(model, counts, 1.0)
    settings = VariationalSettings(refine_sweeps=refine_sweeps)
    result = fit_variational_relevance(model, counts, 1.0, np.random.default_rng(0), settings)
    rows = np.array([[1, 0, 0], [0, 0, 0]])  # a = 1 says y = 1 in task 0, a = 0 in task 1
    probability = np.exp(result.posterior.predict_log_proba(model, rows, np.array([0, 1])))
    np.testing.assert_allclose(probability.sum(axis=1), 1.0)
    assert probability[0, 1] > 0.7 and probability[1, 1] > 0.7, probability
    found = result.extras["feature_relevance"]
    assert exact.feature_relevance[0] > 0.99 and found[0] > 0.99
    assert (exact.feature_relevance[1:] < 0.2).all() and (found[1:] < 0.2).all(), found
    assert result.partition.tolist() == [0, 1, 0, 1, 0, 1]
    best = exact.partitions[np.argmax(exact.partition_weights)]
    assert best.tolist() == result.partition.tolist()


def test_a_shared_column_leaves_the_partition_alone():
    """The noise columns scrambled between tasks: the same partition, the same switches for
    the columns that matter, the noise found shared either way."""
    X, y, tasks = relevance_population(seed=3)
    fits = []
    for frame in (X, X.sample(frac=1.0, random_state=0).set_axis(X.index)):
        frame = frame.assign(a=X["a"], b=X["b"])  # only the noise columns move
        model = ClusteredNB(inference="variational", relevance=True, random_state=0)
        fits.append(model.fit(frame, y, tasks))
    first, second = fits
    np.testing.assert_array_equal(first.partition_, second.partition_)
    group = np.arange(24) % 2
    assert (first.partition_ == first.partition_[group]).all()  # the two groups, apart
    assert first.partition_[0] != first.partition_[1]
    for model in fits:
        relevance = dict(zip(model.feature_names_in_, model.feature_relevance_, strict=True))
        assert relevance["a"] > 0.9 and relevance["b"] > 0.9, relevance
        assert max(relevance["noise_colour"], relevance["noise_number"]) < 0.1, relevance


def test_the_estimator_runs_it_the_same_way_twice_and_keeps_it_in_its_file(tmp_path):
    X, y, tasks = relevance_population(seed=0)
    settings = {"inference": "variational", "relevance": True, "random_state": 0}
    model = ClusteredNB(**settings).fit(X, y, tasks)
    again = ClusteredNB(**settings).fit(X, y, tasks)
    np.testing.assert_array_equal(model.feature_relevance_, again.feature_relevance_)
    np.testing.assert_array_equal(model.predict_proba(X, tasks), again.predict_proba(X, tasks))
    assert model.evidence_kind_ == "lower_bound"
    assert_relevance_survives_a_model_file(model, X, tasks, tmp_path / "model.cnb", 20)

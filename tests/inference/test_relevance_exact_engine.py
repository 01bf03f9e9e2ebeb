"""The exact engine with feature relevance (issue 49): its evidence, partition posterior and
relevance against a brute force over every partition and switch vector, and its predictive
against the brute force's ratio of evidences, for known tasks and for a new one."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import sparse
from scipy.special import betaln

from clusterednb import Counts, FeatureSchema
from clusterednb.exceptions import CNBError
from clusterednb.inference import predictive
from clusterednb.inference.relevance_exact import (
    beta_quadrature,
    enumerate_relevance,
    fit_exact_relevance,
    mixed_pseudo_counts,
)
from clusterednb.models.observation import DirichletNB
from model_helpers import brute_force_relevance, relevance_toy

ROWS = np.array([[0, 1, 0], [2, 0, 1], [1, 1, 1], [0, 0, 0]])


def _with_row(counts: Counts, task: int, row: np.ndarray, label: int, offsets) -> Counts:
    """``counts`` with one more row of ``task`` (a new task when ``task == n_groups``)."""
    label_counts, value_counts = counts.label_counts, counts.value_counts
    if task == counts.n_groups:
        label_counts = np.concatenate([label_counts, np.zeros_like(label_counts[:1])])
        value_counts = np.concatenate([value_counts, np.zeros_like(value_counts[:1])])
    label_counts, value_counts = label_counts.copy(), value_counts.copy()
    label_counts[task, label] += 1
    value_counts[task, label, offsets[:-1] + row] += 1
    return Counts(label_counts, value_counts)


def _brute_force_proba(model, counts, gamma, prior, row, task) -> np.ndarray:
    """``P(y | x, D)`` of one row of ``task`` as the ratio ``P(D ∪ {(x, y)}) / P(D)``."""
    offsets = model.schema.offsets
    log_joint = [
        brute_force_relevance(model, _with_row(counts, task, row, y, offsets), gamma, prior)[0]
        for y in range(model.schema.n_classes)
    ]
    return np.exp(np.array(log_joint) - np.logaddexp.reduce(log_joint))


@pytest.mark.parametrize(("n_tasks", "prior"), [(3, (1.0, 1.0)), (4, (2.0, 0.5)), (5, (1.0, 3.0))])
def test_the_exact_relevance_engine_is_the_brute_force(n_tasks, prior):
    model, counts = relevance_toy(n_tasks, seed=n_tasks)
    result = fit_exact_relevance(model, counts, 0.8, prior)
    log_evidence, partitions, weights, relevance = brute_force_relevance(model, counts, 0.8, prior)
    assert result.evidence_kind == "exact"
    assert result.log_evidence == pytest.approx(log_evidence, abs=1e-9)
    assert (result.partitions == partitions).all()
    np.testing.assert_allclose(result.partition_weights, weights, atol=1e-9)
    np.testing.assert_allclose(result.extras["feature_relevance"], relevance, atol=1e-9)
    for row, task in zip(ROWS, [0, n_tasks - 1, 1, n_tasks], strict=True):  # the last: a new task
        expected = _brute_force_proba(model, counts, 0.8, prior, row, task)
        index = -1 if task == n_tasks else task
        got = np.exp(result.posterior.predict_log_proba(model, row[None], np.array([index])))
        np.testing.assert_allclose(got[0], expected, atol=1e-9)


def test_the_quadrature_and_the_recursion_agree_at_six_tasks():
    """Two sums of the switches, by the share's quadrature and by the count of relevant
    features, give the same posterior (and the recursion is the brute force's, tested)."""
    model, counts = relevance_toy(6, seed=6)
    quadrature = fit_exact_relevance(model, counts, 1.3, (1.0, 3.0))
    recursion = enumerate_relevance(model, counts, 1.3, (1.0, 3.0))
    assert quadrature.log_evidence == pytest.approx(recursion.log_evidence, abs=1e-9)
    np.testing.assert_allclose(quadrature.partition_weights, recursion.partition_weights, atol=1e-9)
    np.testing.assert_allclose(
        quadrature.extras["feature_relevance"], recursion.feature_relevance, atol=1e-9
    )
    np.testing.assert_allclose(quadrature.coclustering(), recursion.coclustering(), atol=1e-9)


@pytest.mark.parametrize("prior", [(1.0, 1.0), (0.3, 4.0), (7.0, 0.5)])
@pytest.mark.parametrize("degree", [0, 1, 4, 9, 20])
def test_the_quadrature_integrates_polynomials_of_its_degree_exactly(prior, degree):
    a, b = prior
    share, log_w = beta_quadrature(prior, degree)
    assert ((share > 0) & (share < 1)).all()
    for k in range(degree + 1):  # E[π^k] = B(a + k, b) / B(a, b)
        assert np.exp(log_w) @ share**k == pytest.approx(np.exp(betaln(a + k, b) - betaln(a, b)))


def test_pseudo_counts_predict_the_mixture_they_stand_for():
    rng = np.random.default_rng(4)
    offsets = np.array([0, 3, 5])
    beta = rng.uniform(0.3, 2.0, size=(2, 5))
    proba = rng.uniform(0.05, 1.0, size=(6, 2, 5))
    proba /= np.add.reduceat(proba, offsets[:-1], axis=-1)[..., [0, 0, 0, 1, 1]]
    counts = mixed_pseudo_counts(proba, beta, offsets)
    assert (counts >= 0).all()
    total = counts + beta
    got = total / np.add.reduceat(total, offsets[:-1], axis=-1)[..., [0, 0, 0, 1, 1]]
    np.testing.assert_allclose(got, proba, rtol=1e-12)


def test_a_forced_feature_is_relevant_and_tables_too_large_are_refused_first():
    model, counts = relevance_toy(4, seed=2)
    forced = np.array([False, True, False])
    result = fit_exact_relevance(model, counts, 1.0, forced=forced)
    assert result.extras["feature_relevance"][1] == pytest.approx(1.0)
    n_features = 30  # 8 tasks: 21 147 slots × 16 nodes × (2 × 60) values, 310 MiB
    schema = FeatureSchema(
        tuple(f"f{i}" for i in range(n_features)), ((0, 1),) * n_features, (0, 1)
    )
    wide = Counts(np.ones((8, 2), dtype=np.int64), np.ones((8, 2, 2 * n_features), dtype=np.int64))
    with pytest.raises(CNBError, match="310 MiB of component tables"):
        fit_exact_relevance(DirichletNB(schema), wide, 1.0)


def test_rows_are_predicted_in_chunks_of_bounded_entries(monkeypatch):
    """A posterior of many entries a task is evaluated a few rows at a time, with the same
    probabilities as all at once."""
    model, counts = relevance_toy(5, seed=9)
    posterior = fit_exact_relevance(model, counts, 1.0).posterior
    rng = np.random.default_rng(0)
    rows = np.column_stack([rng.integers(3, size=40), rng.integers(2, size=(40, 2))])
    tasks = rng.integers(5, size=40)
    whole = posterior.predict_log_proba(model, rows, tasks)
    # 104 entries a task, each holding 3 codes and 2 joints: 6 rows a chunk
    monkeypatch.setattr(predictive, "ENTRY_VALUES", 104 * 5 * 6)
    np.testing.assert_allclose(posterior.predict_log_proba(model, rows, tasks), whole, rtol=1e-14)


def test_the_multinomial_documents_are_refused_and_the_bernoulli_ones_are_exact():
    """A multinomial document's predictive is a Dirichlet-multinomial of its word counts, no
    product of value probabilities that pseudo-counts could mix: refused by name. The
    Bernoulli model is the categorical one over (absent, present): its documents' predictive
    equals the categorical rows'."""
    from clusterednb.models.document_events import BernoulliDirichletNB, MultinomialDirichletNB

    counts = relevance_toy(4, seed=3)[1]
    tokens = MultinomialDirichletNB(FeatureSchema(("tokens",), (("a", "b", "c"),), (0, 1)))
    with pytest.raises(CNBError, match="MultinomialDirichletNB predicts a row otherwise"):
        fit_exact_relevance(tokens, Counts(counts.label_counts, counts.value_counts[..., :3]), 1.0)
    words = FeatureSchema(("w0", "w1", "w2"), ((0, 1),) * 3, (0, 1))
    binary = Counts(counts.label_counts, counts.value_counts[..., 1:7])  # 3 two-valued columns
    categorical = fit_exact_relevance(DirichletNB(words), binary, 1.0)
    bernoulli = fit_exact_relevance(BernoulliDirichletNB(words), binary, 1.0)
    rows = np.array([[0, 1, 1], [1, 0, 0]])
    documents = sparse.csr_matrix(rows)  # present words as counts
    task = np.array([0, 3])
    np.testing.assert_allclose(
        bernoulli.posterior.predict_log_proba(BernoulliDirichletNB(words), documents, task),
        categorical.posterior.predict_log_proba(DirichletNB(words), rows, task),
        atol=1e-12,
    )

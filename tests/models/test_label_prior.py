"""``alpha="auto"``: the label pseudo-counts that maximise the labels' evidence."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

import clusterednb
from clusterednb import ClusteredNB, NoSharingNB
from clusterednb.exceptions import CNBError
from clusterednb.models.label_prior import (
    ALPHA_BOUNDS,
    _negative_evidence,
    evidence_alpha,
    log_label_evidence,
)

COUNTS = np.array([[9, 1], [6, 4], [8, 2], [7, 3], [10, 0], [5, 5], [0, 0]])


def sequence_probability(labels: list[int], alpha: np.ndarray) -> float:
    """P(labels in this order | α) by the chain rule of the Pólya urn."""
    counts, probability = np.zeros_like(alpha), 1.0
    for label in labels:
        probability *= (alpha[label] + counts[label]) / (alpha.sum() + counts.sum())
        counts[label] += 1
    return probability


def test_the_evidence_is_the_polya_urn_probability_of_each_task_s_labels():
    alpha = np.array([0.7, 2.5])
    sequences = [[0, 0, 1], [1], [0, 1, 1, 0]]
    counts = np.array([np.bincount(s, minlength=2) for s in sequences])
    urn = sum(np.log(sequence_probability(s, alpha)) for s in sequences)
    assert log_label_evidence(alpha, counts) == pytest.approx(urn, rel=1e-12)


def test_the_gradient_is_the_finite_difference_of_the_evidence():
    rows, weight = np.unique(COUNTS[:-1], axis=0, return_counts=True)
    log_alpha = np.log(np.array([1.7, 0.4]))
    _, gradient = _negative_evidence(log_alpha, rows, rows.sum(1), weight.astype(float))
    step = 1e-6
    for c in range(2):
        shift = np.zeros(2)
        shift[c] = step
        up, _ = _negative_evidence(log_alpha + shift, rows, rows.sum(1), weight.astype(float))
        down, _ = _negative_evidence(log_alpha - shift, rows, rows.sum(1), weight.astype(float))
        assert gradient[c] == pytest.approx((up - down) / (2 * step), rel=1e-6)


def test_the_optimum_beats_every_point_of_a_fine_grid():
    alpha = evidence_alpha(COUNTS)
    best = log_label_evidence(alpha, COUNTS)
    grid = np.exp(np.linspace(np.log(0.1), np.log(200.0), 120))
    on_grid = max(log_label_evidence(np.array(a), COUNTS) for a in itertools.product(grid, grid))
    assert best >= on_grid - 1e-9
    assert best == pytest.approx(on_grid, abs=0.01)  # and the grid comes close to it


def test_the_optimum_is_a_stationary_point_inside_the_bounds():
    alpha = evidence_alpha(COUNTS)
    assert np.all((alpha > ALPHA_BOUNDS[0]) & (alpha < ALPHA_BOUNDS[1]))
    counts = COUNTS[:-1].astype(float)
    # d/dα_y Σ_u log DM = Σ_u ψ(S) − ψ(S + n_u) + ψ(α_y + m_uy) − ψ(α_y), by differences:
    for c in range(2):
        step = np.zeros(2)
        step[c] = 1e-5 * alpha[c]
        slope = (
            log_label_evidence(alpha + step, counts) - log_label_evidence(alpha - step, counts)
        ) / (2 * step[c])
        assert abs(slope) < 1e-3


def test_equal_rates_push_the_strength_to_its_bound_and_an_unseen_class_to_zero():
    same = np.tile([[45, 5]], (40, 1))  # every task 10 % exactly: no spread between tasks
    alpha = evidence_alpha(same)
    assert alpha.sum() > 1000  # the evidence rises ever more slowly towards the bound
    assert alpha[1] / alpha.sum() == pytest.approx(0.1, abs=0.01)
    unseen = evidence_alpha(np.array([[3, 0], [5, 0], [1, 0]]))
    assert unseen[1] == pytest.approx(ALPHA_BOUNDS[0])
    assert evidence_alpha(np.zeros((3, 2))).tolist() == [1.0, 1.0]


def rare_positive_tasks(n_tasks: int = 12, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    for task in range(n_tasks):
        n_rows = 1 if task == 0 else 80
        for _ in range(n_rows):
            colour = rng.choice(["red", "blue", "green"])
            label = int(rng.random() < (0.15 if colour == "red" else 0.05))
            rows.append({"colour": colour, "label": label, "task": f"t{task:02d}"})
    frame = pd.DataFrame(rows)
    frame.loc[0, "label"] = 0  # the new task's one label: negative
    return frame


def test_auto_starts_a_task_with_one_label_from_the_population_rate():
    frame = rare_positive_tasks(n_tasks=7)
    kwargs = {"inference": "exact", "progress": False}
    plain = ClusteredNB(**kwargs).fit(frame[["colour"]], frame["label"], frame["task"])
    auto = ClusteredNB(alpha="auto", **kwargs).fit(frame[["colour"]], frame["label"], frame["task"])
    np.testing.assert_allclose(auto.alpha_, evidence_alpha(auto.counts_.label_counts))
    # The label term does not depend on the partition: the same partition posterior.
    np.testing.assert_allclose(auto.coclustering_, plain.coclustering_, atol=1e-12)
    query = pd.DataFrame({"colour": ["blue"]})
    rate = frame["label"].iloc[1:].mean()
    p_plain = plain.predict_proba(query, ["t00"])[0, 1]
    p_auto = auto.predict_proba(query, ["t00"])[0, 1]
    assert p_plain > 2 * rate  # one negative label under α = 1: label prior 1/3 positive
    assert p_auto < rate  # the evidence's α: the population's rate, lowered by "blue"


def test_auto_survives_saving_and_is_refused_when_misspelt(tmp_path):
    frame = rare_positive_tasks(n_tasks=4)
    model = NoSharingNB(alpha="auto").fit(frame[["colour"]], frame["label"], frame["task"])
    path = tmp_path / "model.cnb"
    model.save(path)
    again = clusterednb.load(path)
    np.testing.assert_array_equal(again.alpha_, model.alpha_)
    query = frame[["colour"]].iloc[:5]
    np.testing.assert_array_equal(
        again.predict_proba(query, frame["task"][:5]), model.predict_proba(query, frame["task"][:5])
    )
    with pytest.raises(CNBError, match="alpha"):
        NoSharingNB(alpha="automatic").fit(frame[["colour"]], frame["label"], frame["task"])


def test_the_log_evidence_under_auto_is_at_least_that_under_one():
    frame = rare_positive_tasks(n_tasks=5)
    fits = {
        a: NoSharingNB(alpha=a).fit(frame[["colour"]], frame["label"], frame["task"])
        for a in (1.0, "auto")
    }
    assert fits["auto"].log_evidence_ >= fits[1.0].log_evidence_
    counts = fits["auto"].counts_.label_counts
    gain = log_label_evidence(fits["auto"].alpha_, counts) - log_label_evidence(np.ones(2), counts)
    assert fits["auto"].log_evidence_ - fits[1.0].log_evidence_ == pytest.approx(gain, rel=1e-9)

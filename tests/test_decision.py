"""Bayes decisions under a loss."""

from __future__ import annotations

import numpy as np
import pytest

from clusterednb import LossMatrix, bayes_decision, binary_threshold
from clusterednb.decision import as_loss_matrix, expected_loss, realised_loss
from clusterednb.exceptions import CNBError


def test_threshold_form_equals_general_rule(rng):
    proba1 = rng.random(500)
    proba = np.column_stack([1 - proba1, proba1])
    for fp, fn in [(1, 1), (1, 8), (3, 0.5), (2.5, 2.5)]:
        decided = bayes_decision(proba, LossMatrix.binary(fp, fn))
        np.testing.assert_array_equal(decided, proba1 > binary_threshold(fp, fn))


def test_thesis_family_thresholds():
    assert binary_threshold(1, 2.0**0) == 0.5
    assert binary_threshold(1, 2.0**-2) == pytest.approx(0.8)
    np.testing.assert_array_equal(LossMatrix.asymmetric(3).matrix, [[0, 1], [8, 0]])


def test_multiclass_decision_by_hand():
    loss = LossMatrix(np.array([[0, 1, 10], [1, 0, 1], [10, 1, 0]]))
    proba = np.array([[0.45, 0.1, 0.45], [0.9, 0.05, 0.05]])
    # Row 0: action 0 costs 0.1 + 4.5 = 4.6, action 1 costs 0.9, action 2 costs 4.6.
    # Row 1: action 0 costs 0.05 + 0.5 = 0.55, action 1 costs 0.95, action 2 costs 9.05.
    np.testing.assert_allclose(expected_loss(proba, loss)[0], [4.6, 0.9, 4.6])
    np.testing.assert_array_equal(bayes_decision(proba, loss), [1, 0])
    assert realised_loss(np.array([2, 0]), np.array([0, 0]), loss).tolist() == [10, 0]


def test_bad_losses():
    with pytest.raises(CNBError, match="square"):
        LossMatrix(np.ones((2, 3)))
    with pytest.raises(CNBError, match="finite"):
        LossMatrix(np.array([[0, np.inf], [1, 0]]))
    with pytest.raises(CNBError, match="3 classes"):
        as_loss_matrix(np.ones((2, 2)), 3)
    with pytest.raises(CNBError, match="dearer"):
        binary_threshold(0, 1)


def test_binary_costs_follow_pos_label_not_the_class_order():
    from clusterednb import NoSharingNB
    from clusterednb.exceptions import CNBError

    X = [["a"], ["a"], ["b"], ["b"], ["a"], ["b"]]
    y = ["accept", "accept", "decline", "accept", "decline", "decline"]
    tasks = ["u"] * 6
    model = NoSharingNB().fit(X, y, tasks)
    assert list(model.classes_) == ["accept", "decline"]  # the positive class comes first
    proba = model.predict_proba([["a"], ["b"]], ["u", "u"])
    with pytest.raises(CNBError, match="pos_label"):
        model.predict([["a"]], ["u"], loss=LossMatrix.binary(1, 8))
    # A false decline costs 8, a false accept 1: accept iff P(accept) > 1 / 9.
    loss = LossMatrix.binary(cost_false_positive=1, cost_false_negative=8, pos_label="accept")
    decided = model.predict([["a"], ["b"]], ["u", "u"], loss=loss)
    expected = np.where(proba[:, 0] > 1 / 9, "accept", "decline")
    np.testing.assert_array_equal(decided, expected)
    assert "accept" in decided  # P(accept | b) = 1/3 > 1/9, though "decline" is more probable
    with pytest.raises(CNBError, match="pos_label 'maybe' is not one of"):
        model.predict([["a"]], ["u"], loss=LossMatrix.binary(1, 8, pos_label="maybe"))
    with pytest.raises(CNBError, match=r"false positive \(predicting 'accept' wrongly\)"):
        LossMatrix.binary(-1, 8, pos_label="accept")

"""The collaborative-filtering baselines: user-based kNN by hand, ALS on a small matrix."""

from __future__ import annotations

import shutil

import numpy as np
import pandas as pd
import pytest

from clusterednb.evaluation.models.collaborative import als, user_knn
from clusterednb.exceptions import CNBError


def ratings(rows):
    return pd.DataFrame(rows, columns=["task", "item", "label"])


TRAIN = ratings(
    [("a", 1, 1), ("a", 2, 1), ("b", 1, 1), ("b", 2, 1), ("b", 3, 0), ("c", 1, 0), ("c", 3, 1)]
)


def test_user_knn_by_hand():
    # cos(a, b) = 2 / (√2 √3) > 0; cos(a, c) = −1 / 2 < 0: only b is a neighbour of a.
    # b disliked item 3: score (1 + (−1)) / 2 = 0. Nobody rated item 9: its add-one rate
    # is the global one, 5 of 7 liked: (5 + 1) / (7 + 2).
    test = ratings([("a", 3, 0), ("a", 9, 1)])
    np.testing.assert_allclose(user_knn(TRAIN, test), [0.0, 6 / 9])
    # A user with no training rows gets the items' add-one like rates: item 1 is 2/3 liked.
    np.testing.assert_allclose(user_knn(TRAIN, ratings([("z", 1, 1)])), [(2 + 1) / (3 + 2)])


def test_collaborative_models_need_items():
    with pytest.raises(CNBError, match="item"):
        user_knn(TRAIN.drop(columns="item"), TRAIN.drop(columns="item"))


def test_als_on_a_low_rank_matrix():
    pytest.importorskip("pyspark", reason="pyspark is not installed (extra [spark])")
    if shutil.which("java") is None:
        pytest.skip("no Java on this machine: ALS needs a JVM")
    rng = np.random.default_rng(0)
    users, items = np.arange(30), np.arange(20)
    taste = np.where(users[:, None] % 2 == items[None, :] % 2, 1, 0)  # two groups of users
    pairs = [(u, i) for u in users for i in items if rng.random() < 0.6]
    frame = ratings([(u, i, taste[u, i]) for u, i in pairs])
    test = frame.sample(40, random_state=0)
    train = frame.drop(test.index)
    scores = als(train, test, seed=0, rank=4)
    assert scores.shape == (40,) and ((scores >= 0) & (scores <= 1)).all()
    assert ((scores > 0.5) == test["label"].to_numpy().astype(bool)).mean() > 0.9

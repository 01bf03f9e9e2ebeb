"""Collaborative-filtering baselines for rating data: user-based kNN and Spark MLlib's ALS.

Both read an ``item`` column (MovieLens) besides ``task`` and ``label``; they ignore the
features. They return ``P(like)``-like scores in [0, 1] for the protocols' AUC and log-loss.
"""

from __future__ import annotations

import os
import sys
from typing import Any

import numpy as np
import pandas as pd
from scipy import sparse

from clusterednb.exceptions import CNBError


def _require_items(*frames: pd.DataFrame) -> None:
    if any("item" not in f.columns for f in frames):
        raise CNBError("collaborative baselines need an 'item' column (e.g. --dataset movielens)")


def _item_prior(train: pd.DataFrame, items: pd.Series) -> np.ndarray:
    """Add-one like rate of each item in the training rows (the global rate for a new item)."""
    stats = train.groupby("item")["label"].agg(["sum", "count"])
    global_rate = (train["label"].sum() + 1.0) / (len(train) + 2.0)
    likes = items.map(stats["sum"]).to_numpy(dtype=float)
    counts = items.map(stats["count"]).to_numpy(dtype=float)
    return np.where(np.isnan(counts), global_rate, (likes + 1.0) / (counts + 2.0))


def user_knn(train: pd.DataFrame, test: pd.DataFrame, n_neighbours: int = 30) -> np.ndarray:
    """User-based k-nearest neighbours on like (+1) / dislike (−1) vectors.

    Similarity is the cosine of two users' vectors over all items; a test item's score is
    ``(1 + Σ s_v r_vj / Σ |s_v|) / 2`` over the ``n_neighbours`` most similar users with a
    positive similarity who rated it, or the item's add-one like rate when none did.

    Returns
    -------
    ndarray of shape (len(test),)

    Examples
    --------
    Ann and bob agree on items 1 and 2; bob liked item 3, which ann has not rated:

    >>> train = pd.DataFrame({"task": ["ann", "ann", "bob", "bob", "bob"],
    ...                       "item": [1, 2, 1, 2, 3], "label": [1, 0, 1, 0, 1]})
    >>> test = pd.DataFrame({"task": ["ann"], "item": [3]})
    >>> user_knn(train, test).tolist()  # (1 + 1·1 / 1) / 2
    [1.0]
    """
    _require_items(train, test)
    users = pd.Index(pd.unique(train["task"]))
    items = pd.Index(pd.unique(pd.concat([train["item"], test["item"]])))
    ratings = sparse.csr_matrix(
        (
            2.0 * train["label"].to_numpy(dtype=float) - 1.0,
            (users.get_indexer(train["task"]), items.get_indexer(train["item"])),
        ),
        shape=(users.size, items.size),
    )
    norms = np.sqrt(np.asarray(ratings.multiply(ratings).sum(axis=1)).ravel())
    out = _item_prior(train, test["item"])
    for task, rows in test.groupby("task").indices.items():
        position = users.get_loc(task) if task in users else -1
        if position < 0 or norms[position] == 0:
            continue
        similarity = np.asarray(ratings @ ratings[position].T.toarray()).ravel()
        similarity /= np.where(norms > 0, norms, 1.0) * norms[position]
        similarity[position] = 0.0
        candidates = np.flatnonzero(similarity > 0)
        neighbours = candidates[np.argsort(-similarity[candidates], kind="stable")[:n_neighbours]]
        if neighbours.size == 0:
            continue
        columns = items.get_indexer(test["item"].iloc[rows])
        values = ratings[neighbours][:, columns].toarray()  # (n_neighbours, n_rows)
        weights = similarity[neighbours]
        numerator, denominator = weights @ values, weights @ (values != 0)
        rated = denominator > 0
        scores = out[rows]
        scores[rated] = 0.5 * (1.0 + numerator[rated] / denominator[rated])
        out[rows] = scores
    return out


def _spark_session() -> Any:
    """The process's active Spark session, or a new local one: the JVM starts once, and a
    session someone stopped is replaced rather than reused."""
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    spark = (
        SparkSession.builder.master("local[1]")
        .appName("clusterednb-als")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def als(
    train: pd.DataFrame,
    test: pd.DataFrame,
    seed: int,
    rank: int = 10,
    reg: float = 0.1,
    max_iter: int = 10,
) -> np.ndarray:
    """Spark MLlib's alternating least squares on the 0/1 labels, clipped to [0, 1].

    A user or item unseen in training (ALS's cold start) gets the item's add-one like rate.

    Examples
    --------
    >>> import pytest
    >>> from clusterednb.distributed.spark import spark_available
    >>> if not spark_available():  # the extra [spark] and Java; else this example is skipped
    ...     pytest.skip("needs pyspark and Java")
    >>> import os, sys
    >>> os.environ["PYSPARK_PYTHON"] = sys.executable
    >>> train = pd.DataFrame({"task": ["ann", "ann", "bob", "bob", "bob"],
    ...                       "item": [1, 2, 1, 2, 3], "label": [1, 0, 1, 0, 1]})
    >>> test = pd.DataFrame({"task": ["ann", "cy"], "item": [3, 1]})  # cy: never seen
    >>> scores = als(train, test, seed=0, rank=2, max_iter=5)
    >>> bool(((scores >= 0) & (scores <= 1)).all()), round(float(scores[1]), 3)  # item 1: 3/4
    (True, 0.75)
    """
    _require_items(train, test)
    try:
        from pyspark.ml.recommendation import ALS
    except ImportError as error:
        raise CNBError("the 'als' model needs pyspark (extra [spark]) and Java") from error
    users = pd.Index(pd.unique(pd.concat([train["task"], test["task"]])))
    items = pd.Index(pd.unique(pd.concat([train["item"], test["item"]])))
    spark = _spark_session()
    ratings = spark.createDataFrame(
        pd.DataFrame(
            {
                "user": users.get_indexer(train["task"]).astype(np.int32),
                "item": items.get_indexer(train["item"]).astype(np.int32),
                "rating": train["label"].to_numpy(dtype=float),
            }
        )
    )
    model = ALS(
        rank=rank,
        regParam=reg,
        maxIter=max_iter,
        userCol="user",
        itemCol="item",
        ratingCol="rating",
        coldStartStrategy="nan",
        seed=seed,
    ).fit(ratings)
    queries = pd.DataFrame(
        {
            "row": np.arange(len(test), dtype=np.int64),
            "user": users.get_indexer(test["task"]).astype(np.int32),
            "item": items.get_indexer(test["item"]).astype(np.int32),
        }
    )
    predicted = model.transform(spark.createDataFrame(queries)).toPandas().sort_values("row")
    scores = np.clip(predicted["prediction"].to_numpy(dtype=float), 0.0, 1.0)
    fallback = _item_prior(train, test["item"])
    return np.where(np.isnan(scores), fallback, scores)

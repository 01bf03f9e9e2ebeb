"""Checks that any fitted estimator of the package owes a model file, and the feature-relevance
problems that the engines judging columns are tested on, with their brute-force answer."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
from scipy.special import betaln, expit, gammaln, logsumexp

import clusterednb
from clusterednb import Counts, FeatureSchema
from clusterednb.inference.relevance import LABEL_FREE_SHARE
from clusterednb.models.observation import DirichletNB
from clusterednb.models.partition_prior import set_partitions


def log_dm(counts: np.ndarray, beta: np.ndarray) -> float:
    """``log DM(counts; beta)`` of one Dirichlet–multinomial, written out (the reference
    the relevance engines' evidences are tested against)."""
    return float(
        gammaln(beta + counts).sum()
        - gammaln((beta + counts).sum())
        - gammaln(beta).sum()
        + gammaln(beta.sum())
    )


def assert_relevance_survives_a_model_file(model, X, tasks, path, n_rows: int) -> None:
    """Save ``model`` to ``path`` and load it: the same ``feature_relevance_``, the same
    probabilities for the first ``n_rows`` rows, and a new task's rows still sum to one."""
    model.save(path)
    loaded = clusterednb.load(path)
    np.testing.assert_array_equal(loaded.feature_relevance_, model.feature_relevance_)
    rows, own = X.head(n_rows), tasks[:n_rows]
    np.testing.assert_allclose(loaded.predict_proba(rows, own), model.predict_proba(rows, own))
    new = model.predict_proba(rows, ["someone new"] * n_rows)
    np.testing.assert_allclose(new.sum(axis=1), 1.0)


def relevance_toy(
    n_tasks: int, seed: int, n_rows: tuple[int, int] = (2, 6)
) -> tuple[DirichletNB, Counts]:
    """Feature relevance's small exact problem: tasks (of ``n_rows[0]`` to ``n_rows[1] − 1``
    rows) in two groups that differ in feature ``a`` (ternary); ``b`` and ``c`` noise."""
    rng = np.random.default_rng(seed)
    schema = FeatureSchema(("a", "b", "c"), ((0, 1, 2), (0, 1), (0, 1)), ("no", "yes"))
    rows, labels, tasks = [], [], []
    for t in range(n_tasks):
        for _ in range(int(rng.integers(*n_rows))):
            y = int(rng.integers(2))
            a = (y + (t % 2)) % 2 if rng.random() < 0.8 else 2
            rows.append([a, int(rng.integers(2)), int(rng.integers(2))])
            labels.append(y)
            tasks.append(t)
    counts = Counts.from_codes(
        np.array(rows),
        np.array(labels),
        np.array(tasks),
        n_tasks=n_tasks,
        n_classes=2,
        offsets=schema.offsets,
    )
    return DirichletNB(schema, alpha=1.0, beta=np.array([0.7, 1.3, 1.0])), counts


def relevance_population(seed: int = 0, n_tasks: int = 24, n_rows: int = 12) -> tuple:
    """Feature relevance's population: two groups of tasks in which ``a`` and ``b`` follow
    the label in opposite ways; three noise columns with the same distribution everywhere."""
    rng = np.random.default_rng(seed)
    frames = []
    for task in range(n_tasks):
        y = rng.integers(2, size=n_rows)
        follows = y if task % 2 else 1 - y
        a = np.where(rng.random(n_rows) < 0.8, 2 * follows, rng.integers(3, size=n_rows))
        b = np.where(rng.random(n_rows) < 0.8, follows, rng.integers(2, size=n_rows))
        frames.append(
            pd.DataFrame(
                {
                    "a": a,
                    "b": b,
                    "noise_colour": rng.choice(list("rgbyk"), size=n_rows),
                    "noise_number": rng.normal(size=n_rows),
                    "noise_flag": rng.integers(2, size=n_rows),
                    "task": task,
                    "y": y,
                }
            )
        )
    frame = pd.concat(frames, ignore_index=True)
    return frame.drop(columns=["task", "y"]), frame.y.to_numpy(), frame.task.to_numpy()


def brute_force_relevance(model, counts, gamma, prior):
    """``log P(D)``, ``P(z | D)`` and ``P(r_f = 1 | D)`` by summing every (z, r, label-freedom)."""
    schema, beta = model.schema, model.beta
    n_tasks, n_features = counts.n_groups, schema.n_features
    offsets = schema.offsets
    a, b = prior

    def feature_ml(tasks, f):  # label-dependent: one Dirichlet per class
        n = counts.value_counts[list(tasks)].sum(axis=0)
        cut = slice(offsets[f], offsets[f + 1])
        return sum(log_dm(n[y, cut], beta[y, cut]) for y in range(schema.n_classes))

    def label_free_ml(f):
        n = counts.value_counts.sum(axis=(0, 1))
        cut = slice(offsets[f], offsets[f + 1])
        return log_dm(n[cut], beta[:, cut].mean(axis=0))

    everyone = range(n_tasks)
    shared = [
        np.logaddexp(
            np.log1p(-LABEL_FREE_SHARE) + feature_ml(everyone, f),
            np.log(LABEL_FREE_SHARE) + label_free_ml(f),
        )
        for f in range(n_features)
    ]
    partitions = [np.array(z) for z in set_partitions(n_tasks)]
    joint = np.full((len(partitions), 2**n_features), -np.inf)
    for i, z in enumerate(partitions):
        blocks = [np.flatnonzero(z == k) for k in range(z.max() + 1)]
        sizes = np.array([len(block) for block in blocks])
        log_crp = (
            len(blocks) * np.log(gamma)
            + gammaln(sizes).sum()
            + gammaln(gamma)
            - gammaln(gamma + n_tasks)
        )
        for j, r in enumerate(itertools.product((0, 1), repeat=n_features)):
            k = sum(r)
            log_r = betaln(a + k, b + n_features - k) - betaln(a, b)
            features = sum(
                sum(feature_ml(block, f) for block in blocks) if r[f] else shared[f]
                for f in range(n_features)
            )
            joint[i, j] = log_crp + log_r + features
    total = logsumexp(joint)
    labels = sum(log_dm(counts.label_counts[t], model.alpha) for t in range(n_tasks))
    switches = np.array(list(itertools.product((0, 1), repeat=n_features)))
    relevance = np.exp(logsumexp(joint, axis=0) - total) @ switches
    weights = np.exp(logsumexp(joint, axis=1) - total)
    return total + labels, np.array(partitions), weights, relevance


def mean_task_auc_of(model, test, features) -> float:
    """The model's test AUC within tasks (the evaluation's measure), averaged over tasks."""
    from clusterednb.stats.task_auc import mean_task_auc

    p1 = model.predict_proba(test[features], test.task)[:, 1]
    return mean_task_auc(test.y.to_numpy(), p1, test.task.to_numpy())


def same_rows_population(
    seed: int, n_noise: int, n_rows: int, n_train: int, correlated: bool = False
) -> pd.DataFrame:
    """``benchmarks/bench_irrelevant_columns.py``'s population with the noise added to the same
    rows (``--same-rows``): 60 tasks in three groups on x0..x3, ``n_train`` rows a task to
    train on of ``n_rows``; ``correlated``: the noise columns share a latent factor."""
    rng, noise_rng = np.random.default_rng(seed), np.random.default_rng([seed, 49])
    weights = 1.5 * np.array([[2, -2, 1, 0], [-2, 2, 0, 1], [0, 1, -2, 2]], dtype=float)
    frames = []
    for task in range(60):
        x = rng.normal(size=(n_rows, 4))
        y = (rng.random(n_rows) < expit(x @ weights[task % 3])).astype(int)
        frame = pd.DataFrame(x, columns=[f"x{i}" for i in range(4)])
        latent = rng.normal(size=n_rows)  # the correlated variant's factor
        for j in range(n_noise):
            values = noise_rng.normal(size=n_rows)
            values = 0.8 * latent + 0.6 * values if correlated else values
            colours = np.array(list("rgbyk"))[np.digitize(values, [-1, -0.3, 0.3, 1])]
            frame[f"noise{j}"] = colours if j % 2 else values
        frame["task"], frame["y"], frame["train"] = task, y, np.arange(n_rows) < n_train
        frames.append(frame)
    return pd.concat(frames, ignore_index=True)

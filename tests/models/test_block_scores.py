"""One observation-model interface for every partition engine (issue 48): a model new to the
package is one class with the five methods of ``BlockAlgebra``, and it runs through the
shared block engine (enumeration and Gibbs), checked here against brute force; the
Dirichlet naive Bayes through the same interface gives exactly what its conjugate engine
gives."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence

import numpy as np
import pytest
from scipy.special import gammaln, logsumexp
from scipy.stats import multivariate_normal

from clusterednb.examples import models as toy
from clusterednb.inference.blocks.engine import enumerate_blocks, gibbs_blocks
from clusterednb.inference.exact import fit_exact
from clusterednb.models.block_scores import BlockAlgebra


class GaussianMeans:
    """A toy model new to the package: each cluster has its own mean ``μ ~ N(0, τ²)`` and a
    task's numbers are ``N(μ, σ²)``. Its statistics (count, sum, sum of squares) add, and the
    marginal of a set is closed form."""

    def __init__(self, data: Sequence[np.ndarray], noise: float = 1.0, spread: float = 2.0):
        self.stats = [np.array([x.size, x.sum(), (x**2).sum()]) for x in data]
        self.noise, self.spread = noise**2, spread**2

    def of_members(self, members: Iterable[int]) -> np.ndarray:
        return sum((self.stats[u] for u in members), np.zeros(3))

    def added(self, stats: np.ndarray, task: int) -> np.ndarray:
        return stats + self.stats[task]

    def removed(self, stats: np.ndarray, task: int) -> np.ndarray:
        return stats - self.stats[task]

    def log_score(self, stats: np.ndarray) -> float:
        n, total, squares = stats
        joint = self.noise + n * self.spread
        quadratic = (squares - self.spread * total**2 / joint) / self.noise
        return float(
            -0.5 * n * np.log(2 * np.pi)
            - 0.5 * (n - 1) * np.log(self.noise)
            - 0.5 * np.log(joint)
            - 0.5 * quadratic
        )

    def log_scores_added(self, stats, task, also=None) -> np.ndarray:
        scores = [self.log_score(self.added(s, task)) for s in stats]
        return np.array(scores + ([] if also is None else [self.log_score(also)]))


def _partitions(n: int) -> Iterator[list[int]]:
    """Every set partition of ``range(n)`` as labels (restricted growth strings)."""

    def grow(labels: list[int]) -> Iterator[list[int]]:
        if len(labels) == n:
            yield labels
            return
        for label in range(max(labels, default=-1) + 2):
            yield from grow([*labels, label])

    yield from grow([])


def _brute_force(data: Sequence[np.ndarray], gamma: float, noise: float, spread: float):
    """The co-clustering and P(K) by summing every partition, each block's marginal from the
    multivariate normal density of its numbers (not from the model's statistics)."""
    n_tasks = len(data)
    log_joint, together, sizes = [], [], []
    for labels in _partitions(n_tasks):
        labels = np.array(labels)
        blocks = [np.flatnonzero(labels == k) for k in range(labels.max() + 1)]
        log_prior = len(blocks) * np.log(gamma) + sum(gammaln(b.size) for b in blocks)
        log_prior -= gammaln(gamma + n_tasks) - gammaln(gamma)
        log_like = 0.0
        for members in blocks:
            x = np.concatenate([data[u] for u in members])
            cov = noise**2 * np.eye(x.size) + spread**2 * np.ones((x.size, x.size))
            log_like += multivariate_normal(np.zeros(x.size), cov).logpdf(x)
        log_joint.append(log_prior + log_like)
        together.append(labels[:, None] == labels[None, :])
        sizes.append(len(blocks))
    weights = np.exp(np.array(log_joint) - logsumexp(log_joint))
    coclustering = np.tensordot(weights, np.array(together, dtype=float), axes=1)
    return coclustering, np.bincount(sizes, weights=weights, minlength=n_tasks + 1)


@pytest.fixture
def numbers() -> list[np.ndarray]:
    rng = np.random.default_rng(3)
    means = [-2.0, -2.0, 2.5, 2.5, 0.0]
    return [rng.normal(mean, 1.0, size=rng.integers(2, 5)) for mean in means]


def test_a_new_model_is_one_class_that_satisfies_the_interface(numbers):
    model: BlockAlgebra = GaussianMeans(numbers)
    assert all(
        callable(getattr(model, name))
        for name in ("of_members", "added", "removed", "log_score", "log_scores_added")
    )


def test_a_new_model_runs_through_the_enumeration_exactly(numbers):
    coclustering, n_clusters = _brute_force(numbers, gamma=1.5, noise=1.0, spread=2.0)
    exact = enumerate_blocks(len(numbers), GaussianMeans(numbers), gamma=1.5)
    assert np.allclose(exact.coclustering, coclustering, rtol=0, atol=1e-9)
    assert np.allclose(exact.n_clusters_probability, n_clusters, rtol=0, atol=1e-9)
    assert exact.partition[0] == exact.partition[1] != exact.partition[2] == exact.partition[3]


def test_a_new_model_runs_through_the_gibbs_sampler_to_the_exact_posterior(numbers):
    coclustering, _ = _brute_force(numbers, gamma=1.5, noise=1.0, spread=2.0)
    sampled = gibbs_blocks(
        len(numbers), GaussianMeans(numbers), 1.5, np.random.default_rng(0), 3000, 100
    )
    assert np.abs(sampled.coclustering - coclustering).max() < 0.04


def test_the_dirichlet_naive_bayes_through_the_interface_equals_its_conjugate_engine():
    model, counts = toy.colour_model(), toy.three_task_counts()
    conjugate = fit_exact(model, counts, 1.0)
    blocks = enumerate_blocks(counts.n_groups, model.block_scores(counts), 1.0)
    assert np.allclose(blocks.coclustering, conjugate.coclustering(), rtol=0, atol=1e-12)
    assert np.allclose(
        blocks.n_clusters_probability, conjugate.n_clusters_probability, rtol=0, atol=1e-12
    )
    sampled = gibbs_blocks(
        counts.n_groups, model.block_scores(counts), 1.0, np.random.default_rng(0), 4000, 100
    )
    assert np.abs(sampled.coclustering - conjugate.coclustering()).max() < 0.04

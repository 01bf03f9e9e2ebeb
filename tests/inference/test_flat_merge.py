"""Greedy merging of a partition's clusters: every merge raises the joint, none is left that
would, and randomised BHC's over-split cut is repaired."""

from __future__ import annotations

import itertools
import sys
from pathlib import Path

import numpy as np
from sklearn.metrics import adjusted_rand_score

from clusterednb import ClusteredNB
from clusterednb.data.synthetic import make_planted_population
from clusterednb.inference.bhc.engine import _leaf_statistics, fit_bhc_randomized
from clusterednb.inference.bhc.flat_merge import merge_clusters
from clusterednb.models.partition_prior import crp_log_prior

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))


def _joint(model, counts, partition, gamma):
    """``log P(features | z) + log P(z)`` computed directly from the grouped counts."""
    n_clusters = int(partition.max()) + 1
    grouped = counts.group_by(partition, n_clusters)
    return float(model.log_marginal_features(grouped.value_counts).sum()) + crp_log_prior(
        partition, gamma
    )


def test_merges_stop_where_no_merge_raises_the_joint():
    population = make_planted_population(
        np.random.default_rng(2), group_sizes=(3, 3, 2), rows_per_task=8, n_features=4
    )
    frame = population.frame
    fitted = ClusteredNB(inference="exact").fit(
        frame[population.feature_names], frame["label"], frame["task"]
    )
    model, counts = fitted.observation_, fitted.counts_
    cells, totals, tables = _leaf_statistics(model, counts)
    start = np.arange(counts.n_groups)  # every task alone
    merged = merge_clusters(start, cells, totals, 1.0, tables.packed())
    final = _joint(model, counts, merged, 1.0)
    assert final > _joint(model, counts, start, 1.0)
    for a, b in itertools.combinations(range(int(merged.max()) + 1), 2):
        joined = np.where(merged == b, a, merged)
        _, joined = np.unique(joined, return_inverse=True)
        assert _joint(model, counts, joined, 1.0) <= final + 1e-9


def test_randomised_bhc_no_longer_over_splits_planted_groups():
    """1 000 users in 50 planted groups: the randomised tree's cut alone had 128 clusters
    (adjusted Rand 0.82); merged, the 50 groups."""
    from bench_clustered import planted_counts

    rng = np.random.default_rng(1)
    model, counts, group = planted_counts(rng, 1000, 50, rows_per_user=10)
    result = fit_bhc_randomized(model, counts, 1.0, rng)
    assert int(result.partition.max()) + 1 == 50
    assert adjusted_rand_score(group, result.partition) > 0.99
    assert (
        result.log_evidence
        >= _joint(model, counts, result.partition, 1.0)
        + float(model.log_marginal_labels(counts.label_counts).sum())
        - 1e-6
    )

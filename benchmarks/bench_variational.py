"""Speed and recovery of the variational engine against the Gibbs sampler (issue 21).

A planted population (50 groups, 15 features x 7 values, 2 labels, 10 rows per user) is drawn
straight into sparse per-user counts in chunks (nothing dense per user but the label counts).
For each size: the variational fit's time, its adjusted Rand index against the planted groups,
and the process's peak memory; at the smallest size also a Gibbs fit of the same data
(``ClusteredNB`` defaults' engine, 20 sweeps) as the peer, with the time ratio, and
scikit-learn's ``BayesianGaussianMixture`` on the users' normalised count profiles (on
``--sklearn-users`` of them: it is much slower), with the time-per-user ratio.
Targets in issue 21: 500 000 users <= 15 s, 1 000 000 <= 30 s.
Usage: python benchmarks/bench_variational.py [--users 100000,500000,1000000]
"""

from __future__ import annotations

import argparse
import platform
import resource
import time

import numpy as np
from scipy import sparse
from sklearn.metrics import adjusted_rand_score

from clusterednb import Counts, DirichletNB, FeatureSchema
from clusterednb.inference.gibbs.engine import fit_gibbs
from clusterednb.inference.gibbs.state import GibbsSettings
from clusterednb.inference.variational.engine import VariationalSettings, fit_variational_sparse

N_FEATURES, N_VALUES, N_GROUPS, ROWS = 15, 7, 50, 10
CHUNK = 100_000


def schema() -> FeatureSchema:
    return FeatureSchema(
        tuple(f"f{j}" for j in range(N_FEATURES)),
        tuple(tuple(range(N_VALUES)) for _ in range(N_FEATURES)),
        (0, 1),
    )


def planted_sparse(rng: np.random.Generator, n_users: int):
    """Sparse counts (users x 2·F·V), label counts (users x 2) and the planted groups."""
    theta = rng.dirichlet(np.full(N_VALUES, 0.5), size=(N_GROUPS, 2, N_FEATURES))
    cumulative = theta.cumsum(axis=-1)
    group = rng.integers(0, N_GROUPS, size=n_users)
    offsets = np.arange(N_FEATURES) * N_VALUES
    width = 2 * N_FEATURES * N_VALUES
    blocks, labels = [], []
    for start in range(0, n_users, CHUNK):
        users = np.arange(start, min(start + CHUNK, n_users))
        task = np.repeat(users - start, ROWS)
        y = rng.integers(0, 2, size=task.size)
        draws = rng.random((task.size, N_FEATURES, 1))
        X = np.minimum((draws > cumulative[group[users][task], y]).sum(axis=-1), N_VALUES - 1)
        columns = (y[:, None] * N_FEATURES * N_VALUES + offsets + X).ravel()
        rows = np.repeat(task, N_FEATURES)
        blocks.append(
            sparse.csr_matrix((np.ones(rows.size), (rows, columns)), shape=(users.size, width))
        )
        labels.append(
            np.stack(
                [
                    np.bincount(task, weights=1 - y, minlength=users.size),
                    np.bincount(task, weights=y, minlength=users.size),
                ],
                axis=1,
            )
        )
    return sparse.vstack(blocks).tocsr(), np.concatenate(labels), group


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--users", default="100000,500000,1000000")
    parser.add_argument("--jobs", type=int, default=1, help="threads of the assignment step")
    parser.add_argument(
        "--sklearn-users",
        type=int,
        default=20_000,
        help="users for the scikit-learn BayesianGaussianMixture peer (0: skip)",
    )
    args = parser.parse_args()
    vi_settings = VariationalSettings(n_jobs=args.jobs)
    sizes = [int(n) for n in args.users.split(",")]
    model = DirichletNB(schema())
    print(
        f"machine: {platform.processor() or platform.machine()}, {platform.python_version()}, "
        f"{args.jobs} thread(s)"
    )
    small = planted_sparse(np.random.default_rng(9), 2000)
    fit_variational_sparse(model, small[0], small[1], 1.0, np.random.default_rng(0))  # JIT
    for n_users in sizes:
        task_counts, label_counts, group = planted_sparse(np.random.default_rng(1), n_users)
        start = time.perf_counter()
        result = fit_variational_sparse(
            model, task_counts, label_counts, 1.0, np.random.default_rng(0), vi_settings
        )
        seconds = time.perf_counter() - start
        ari = adjusted_rand_score(group, result.partition)
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6
        iterations = result.extras["elbo_trace"].size - 1
        print(
            f"variational {n_users:>9,} users: {seconds:6.2f} s, {iterations} iterations "
            f"(winning restart), ARI {ari:.3f}, {int(result.partition.max()) + 1} clusters, "
            f"peak RSS {peak:.2f} GB"
        )
        if n_users == sizes[0]:
            dense = task_counts.toarray().reshape(n_users, 2, N_FEATURES * N_VALUES)
            counts = Counts(label_counts, dense.astype(np.int64))
            settings = GibbsSettings(n_sweeps=20, burn_in=5, split_merge_moves=0, progress=False)
            empty = np.zeros((0, N_FEATURES), dtype=np.int32)
            start = time.perf_counter()
            gibbs = fit_gibbs(
                model,
                counts,
                empty,
                np.zeros(0, dtype=np.int64),
                1.0,
                settings,
                np.random.default_rng(0),
            )
            peer = time.perf_counter() - start
            print(
                f"gibbs       {n_users:>9,} users: {peer:6.2f} s (20 sweeps), ARI "
                f"{adjusted_rand_score(group, gibbs.partition):.3f}; "
                f"variational / gibbs time = {seconds / peer:.2f}"
            )
            if args.sklearn_users:
                sklearn_peer(task_counts, group, args.sklearn_users, seconds / n_users)


def sklearn_peer(task_counts, group, n_users: int, vi_seconds_per_user: float) -> None:
    """scikit-learn's ``BayesianGaussianMixture`` (Dirichlet-process prior, diagonal
    covariances, 100 components) on each user's normalised count profile: not the same
    model, but what a user would reach for. Fitted on the first ``n_users`` users."""
    from sklearn.mixture import BayesianGaussianMixture

    rows = task_counts[:n_users].toarray()
    rows /= rows.sum(axis=1, keepdims=True)
    start = time.perf_counter()
    mixture = BayesianGaussianMixture(
        n_components=100,
        weight_concentration_prior_type="dirichlet_process",
        covariance_type="diag",
        max_iter=200,
        random_state=0,
    ).fit(rows)
    seconds = time.perf_counter() - start
    labels = mixture.predict(rows)
    print(
        f"sklearn BayesianGaussianMixture {n_users:>9,} users: {seconds:6.2f} s "
        f"({mixture.n_iter_} iterations, converged {mixture.converged_}), ARI "
        f"{adjusted_rand_score(group[:n_users], labels):.3f}, {np.unique(labels).size} "
        f"clusters; its time per user / the variational engine's = "
        f"{seconds / n_users / vi_seconds_per_user:.1f}"
    )


if __name__ == "__main__":
    main()

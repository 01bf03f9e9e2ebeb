"""Bayesian Hierarchical Clustering of tasks (Heller & Ghahramani 2005; IJCAI paper §3).

:func:`fit_bhc` agglomerates greedily with a heap of candidate merges (O(U² log U));
:func:`fit_bhc_randomized` builds the tree top-down by filtering tasks through BHC trees of
random subsets (O(U log U) expected). Both then run the BHC recursion over the tree and
return the path-weighted predictive, the MAP cut (``r > 0.5``) and the lower bound on the
DP-mixture evidence.
"""

from __future__ import annotations

import numpy as np

from clusterednb.inference.bhc.flat_merge import merge_clusters
from clusterednb.inference.bhc.kernels import assign_to_sides, greedy_bhc, tree_quantities
from clusterednb.inference.gibbs.data import LogGammaTables
from clusterednb.inference.posterior import Posterior
from clusterednb.inference.result import ClusteringResult, require_conjugate
from clusterednb.models.observation import ConjugateModel
from clusterednb.models.partition_prior import crp_log_prior
from clusterednb.stats.counts import Counts
from clusterednb.stats.special import log_rising_factorial, segment_sum

_DISTRIBUTION_LIMIT = 2_000  # above this many tasks, P(number of clusters) is the MAP's
_LEAF_SIZE = 64  # randomised BHC: subsets of at most this many tasks get exact greedy BHC


def _leaf_statistics(
    model: ConjugateModel, counts: Counts
) -> tuple[np.ndarray, np.ndarray, LogGammaTables]:
    schema = model.schema
    n_tasks = counts.n_groups
    cells = np.ascontiguousarray(counts.value_counts.reshape(n_tasks, -1))
    totals = np.ascontiguousarray(
        segment_sum(counts.value_counts, schema.offsets).reshape(n_tasks, -1)
    )
    tables = LogGammaTables.build(
        model.beta.ravel(),
        segment_sum(model.beta, schema.offsets).ravel(),
        int(counts.label_counts.sum()),
    )
    return cells, totals, tables


def fit_bhc(model: ConjugateModel, counts: Counts, gamma: float) -> ClusteringResult:
    """Engine ``"bhc"``: greedy Bayesian Hierarchical Clustering of the tasks.

    The result's ``evidence_kind`` is ``"lower_bound"``; its ``extras`` hold ``tree`` (a
    scipy linkage matrix whose heights are merge ranks) and ``node_log_r``. Arguments as in
    :mod:`clusterednb.inference.result`.

    Examples
    --------
    >>> from clusterednb.examples import models as toy
    >>> from clusterednb.examples import naive_bayes as nb_toy
    >>> counts = toy.three_task_counts()
    >>> result = fit_bhc(toy.colour_model(), counts, 1.0)
    >>> result.extras["tree"][:, :2].tolist()  # tasks 0 and 1 first, then task 2
    [[0.0, 1.0], [2.0, 3.0]]
    >>> exact = nb_toy.exact_clustering().log_evidence_
    >>> result.evidence_kind, bool(result.log_evidence <= exact)
    ('lower_bound', True)
    """
    require_conjugate(model, "bhc")
    cells, totals, tables = _leaf_statistics(model, counts)
    children = greedy_bhc(cells, totals, np.log(gamma), tables.packed())
    return tree_result(model, counts, gamma, children, cells, totals, tables)


def fit_bhc_randomized(
    model: ConjugateModel,
    counts: Counts,
    gamma: float,
    rng: np.random.Generator,
    leaf_size: int = _LEAF_SIZE,
) -> ClusteringResult:
    """Randomised BHC (Heller & Ghahramani 2005b) for many tasks.

    A set of more than ``leaf_size`` tasks is split in two: greedy BHC runs on a random subset
    of ``leaf_size`` of them, and every task of the set goes to whichever of the subset's two
    top subtrees explains its data better (larger gain in log evidence when added to that
    subtree's pooled counts). The halves are split recursively; sets of at most
    ``leaf_size`` tasks are clustered by greedy BHC. The BHC recursion then runs over the
    resulting tree. A group whose tasks fall on both sides of a split cannot be joined again
    down the tree, so the cut over-splits (1 000 and 10 000 users in 50 planted groups: 128
    and 277 clusters); the cut's clusters are then merged greedily while the partition's
    joint probability rises (:mod:`clusterednb.inference.bhc.flat_merge`: 50 clusters, adjusted
    Rand 1.0 and 0.999), and the result predicts from that partition.

    Examples
    --------
    Twelve tasks in three planted groups, split into leaves of four:

    >>> from sklearn.metrics import adjusted_rand_score
    >>> from clusterednb import NoSharingNB
    >>> from clusterednb.data.synthetic import make_planted_population
    >>> population = make_planted_population(np.random.default_rng(0), group_sizes=(4, 4, 4))
    >>> model = NoSharingNB().fit(population.frame[population.feature_names],
    ...                           population.frame["label"], population.frame["task"])
    >>> result = fit_bhc_randomized(model.observation_, model.counts_, 1.0,
    ...                             np.random.default_rng(0), leaf_size=4)
    >>> adjusted_rand_score(population.labels_for(model.task_ids_), result.partition)
    1.0
    """
    cells, totals, tables = _leaf_statistics(model, counts)
    log_gamma = np.log(gamma)
    n_tasks = counts.n_groups
    merges: list[tuple[int, int]] = []

    def merge(a: int, b: int) -> int:
        merges.append((a, b))
        return n_tasks + len(merges) - 1

    def build(tasks: np.ndarray) -> int:
        if tasks.size <= leaf_size:
            local = greedy_bhc(cells[tasks], totals[tasks], log_gamma, tables.packed())
            ids = list(tasks)
            for a, b in local:
                ids.append(merge(ids[a], ids[b]))
            return ids[-1]
        subset = rng.choice(tasks, size=leaf_size, replace=False)
        local = greedy_bhc(cells[subset], totals[subset], log_gamma, tables.packed())
        top = _top_split(local, leaf_size)
        side_cells = np.stack([cells[subset[members]].sum(axis=0) for members in top])
        side_totals = np.stack([totals[subset[members]].sum(axis=0) for members in top])
        side = assign_to_sides(cells, totals, tasks, side_cells, side_totals, tables.packed())
        if side.min() == side.max():  # degenerate: every task prefers one side
            side = np.arange(tasks.size) % 2
        return merge(build(tasks[side == 0]), build(tasks[side == 1]))

    build(np.arange(n_tasks))
    children = np.array(merges, dtype=np.int64).reshape(-1, 2)
    result = tree_result(model, counts, gamma, children, cells, totals, tables)
    return _refined(model, counts, gamma, result, cells, totals, tables)


def _refined(
    model: ConjugateModel,
    counts: Counts,
    gamma: float,
    result: ClusteringResult,
    cells: np.ndarray,
    totals: np.ndarray,
    tables: LogGammaTables,
) -> ClusteringResult:
    """The tree's cut with the clusters it split apart merged again
    (:func:`~clusterednb.inference.bhc.flat_merge.merge_clusters`): the partition, its
    predictive and, when tighter, its joint as the bound. The tree stays in ``extras``."""
    partition = merge_clusters(result.partition, cells, totals, gamma, tables.packed())
    n_clusters = int(partition.max()) + 1
    if n_clusters == int(result.partition.max()) + 1:
        return result
    grouped = counts.group_by(partition, n_clusters)
    log_joint = (
        float(model.log_marginal_features(grouped.value_counts).sum())
        + crp_log_prior(partition, gamma)
        + float(model.log_marginal_labels(counts.label_counts).sum())
    )
    probability = np.zeros(counts.n_groups + 1)
    probability[n_clusters] = 1.0
    extras = {k: v for k, v in result.extras.items() if k != "coclustering"}
    return ClusteringResult(
        posterior=Posterior.of_partition(counts, partition, gamma),
        log_evidence=max(result.log_evidence, log_joint),
        evidence_kind="lower_bound",
        partition=partition,
        n_clusters_probability=probability,
        partitions=partition[None, :],
        partition_weights=np.ones(1),
        extras=extras,
    )


def _top_split(children: np.ndarray, n_leaves: int) -> list[np.ndarray]:
    """Leaves under the two children of the root of a local linkage."""
    a, b = children[-1]
    return [_leaves_under(children, n_leaves, a), _leaves_under(children, n_leaves, b)]


def _leaves_under(children: np.ndarray, n_leaves: int, node: int) -> np.ndarray:
    stack, leaves = [int(node)], []
    while stack:
        k = stack.pop()
        if k < n_leaves:
            leaves.append(k)
        else:
            stack.extend(int(c) for c in children[k - n_leaves])
    return np.array(sorted(leaves), dtype=np.int64)


def tree_result(
    model: ConjugateModel,
    counts: Counts,
    gamma: float,
    children: np.ndarray,
    cells: np.ndarray,
    totals: np.ndarray,
    tables: LogGammaTables,
) -> ClusteringResult:
    """Run the BHC recursion over a tree and build the predictive, MAP cut and bound.

    Examples
    --------
    Over the greedy tree it is what :func:`fit_bhc` returns:

    >>> from clusterednb.examples import models as toy
    >>> from clusterednb.inference.bhc.kernels import greedy_bhc
    >>> model, counts = toy.colour_model(), toy.three_task_counts()
    >>> cells = counts.value_counts.reshape(3, -1).astype(np.int64)
    >>> totals = np.array([[2, 0], [2, 0], [0, 2]])
    >>> tables = LogGammaTables.build(np.ones(4), np.full(2, 2.0), 10)
    >>> children = greedy_bhc(cells, totals, 0.0, tables.packed())
    >>> result = tree_result(model, counts, 1.0, children, cells, totals, tables)
    >>> bool(np.isclose(result.log_evidence, fit_bhc(model, counts, 1.0).log_evidence))
    True
    """
    n_tasks = counts.n_groups
    schema = model.schema
    node_cells, size, _, log_d, log_p, log_r, log_not_r = tree_quantities(
        children, cells, totals, np.log(gamma), tables.packed()
    )
    n_nodes = 2 * n_tasks - 1
    parent = np.full(n_nodes, -1, dtype=np.int64)
    parent[children.ravel()] = np.repeat(np.arange(n_tasks, n_nodes), 2)
    # log Π_{ancestors j of k} (1 − r_j), from the root down (parents have larger numbers).
    log_above = np.zeros(n_nodes)
    for k in range(n_nodes - 2, -1, -1):
        log_above[k] = log_above[parent[k]] + log_not_r[parent[k]]
    log_weight = log_r + log_above  # w_k = r_k Π_{j above k} (1 − r_j)

    paths = [_path(parent, leaf) for leaf in range(n_tasks)]
    path_nodes = np.concatenate(paths)
    cut = map_cut(children, log_r, n_tasks)
    partition = np.empty(n_tasks, dtype=np.int64)
    for label, node in enumerate(cut):
        partition[_leaves_under(children, n_tasks, node)] = label
    shape = (n_nodes, schema.n_classes, schema.n_values_total)
    empty = np.zeros((1, *shape[1:]), dtype=np.int64)
    cluster_sizes = size[cut]
    posterior = Posterior(
        component_counts=np.concatenate([node_cells.reshape(shape), empty]),
        task_label_counts=counts.label_counts,
        indptr=np.concatenate([[0], np.cumsum([p.size for p in paths])]),
        components=path_nodes,
        log_weights=log_weight[path_nodes],
        cold_label_counts=np.zeros(schema.n_classes, dtype=np.int64),
        cold_components=np.append(cut, n_nodes),
        cold_log_weights=np.log(np.append(cluster_sizes, gamma)) - np.log(n_tasks + gamma),
    )
    root = n_nodes - 1
    log_labels = float(model.log_marginal_labels(counts.label_counts).sum())
    bound = log_p[root] + log_d[root] - log_rising_factorial(gamma, n_tasks) + log_labels
    extras = {"node_log_r": log_r, "node_log_weight": log_weight}
    coclustering = _coclustering(children, log_weight, parent, n_tasks)
    if coclustering is not None:
        extras["coclustering"] = coclustering
    extras["tree"] = np.column_stack(
        [children.astype(float), np.arange(1, n_tasks, dtype=float), size[n_tasks:]]
    )
    return ClusteringResult(
        posterior=posterior,
        log_evidence=float(bound),
        evidence_kind="lower_bound",
        partition=partition,
        n_clusters_probability=_n_clusters_distribution(children, log_r, n_tasks, cut.size),
        partitions=partition[None, :],
        partition_weights=np.ones(1),
        extras=extras,
    )


def _path(parent: np.ndarray, leaf: int) -> np.ndarray:
    nodes = [leaf]
    while parent[nodes[-1]] >= 0:
        nodes.append(int(parent[nodes[-1]]))
    return np.array(nodes, dtype=np.int64)


def map_cut(children: np.ndarray, log_r: np.ndarray, n_tasks: int) -> np.ndarray:
    """Nodes of the MAP partition: top-down, the highest node with ``r > 0.5`` on each path.

    Examples
    --------
    Three tasks: node 3 joins tasks 0 and 1 (``r = 0.9``), the root joins node 3 and task 2
    (``r = 0.2``): the cut keeps node 3 and task 2:

    >>> log_r = np.log([1.0, 1.0, 1.0, 0.9, 0.2])
    >>> map_cut(np.array([[0, 1], [3, 2]]), log_r, 3).tolist()
    [3, 2]
    """
    stack, cut = [2 * n_tasks - 2], []
    while stack:
        node = stack.pop()
        if node < n_tasks or log_r[node] > np.log(0.5):
            cut.append(node)
        else:
            stack.extend(int(c) for c in children[node - n_tasks][::-1])
    return np.array(cut, dtype=np.int64)


def _n_clusters_distribution(
    children: np.ndarray, log_r: np.ndarray, n_tasks: int, map_clusters: int
) -> np.ndarray:
    """P(number of clusters) over the tree-consistent partitions the tree's mixture weights.

    With ``r_k`` the probability that node ``k`` is one cluster given its data,
    ``P_k = r_k δ_1 + (1 − r_k) (P_left * P_right)``. Above ``_DISTRIBUTION_LIMIT`` tasks the
    MAP partition's count gets probability one.
    """
    out = np.zeros(n_tasks + 1)
    if n_tasks > _DISTRIBUTION_LIMIT:
        out[map_clusters] = 1.0
        return out
    dist: dict[int, np.ndarray] = {leaf: np.array([0.0, 1.0]) for leaf in range(n_tasks)}
    for step, (a, b) in enumerate(children):
        node = n_tasks + step
        r = np.exp(log_r[node])
        split = np.convolve(dist.pop(int(a)), dist.pop(int(b))) * (1.0 - r)
        split[1] += r
        dist[node] = split
    root = dist[2 * n_tasks - 2]
    out[: root.size] = root
    return out


def _coclustering(
    children: np.ndarray, log_weight: np.ndarray, parent: np.ndarray, n_tasks: int
) -> np.ndarray | None:
    """P(u, v share a cluster) = Σ of the weights of the nodes at or above their join."""
    if n_tasks > _DISTRIBUTION_LIMIT:
        return None
    n_nodes = 2 * n_tasks - 1
    at_or_above = np.zeros(n_nodes)
    for k in range(n_nodes - 1, -1, -1):
        above = at_or_above[parent[k]] if parent[k] >= 0 else 0.0
        at_or_above[k] = np.exp(log_weight[k]) + above
    matrix = np.eye(n_tasks)
    for step, (a, b) in enumerate(children):
        node = n_tasks + step
        left = _leaves_under(children, n_tasks, a)
        right = _leaves_under(children, n_tasks, b)
        matrix[np.ix_(left, right)] = at_or_above[node]
        matrix[np.ix_(right, left)] = at_or_above[node]
    return matrix

"""The moves of the collapsed Gibbs sampler, each a function of ``(rng, state, data)``.

1. a sweep over the tasks' cluster assignments (Neal 2000, algorithm 3; compiled);
2. when there are unlabelled rows, a sweep over their labels given the clusters;
3. split–merge moves over tasks (Jain & Neal 2004, restricted Gibbs launch state);
4. the Escobar & West (1995) update of the DP concentration ``γ``.

:func:`gibbs_step` composes them into one step of the chain.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from scipy.special import gammaln

from clusterednb.inference.gibbs.data import GibbsData
from clusterednb.inference.gibbs.kernels import (
    merged_log_ml,
    move_task,
    resample_labels,
    restricted_scan,
)
from clusterednb.inference.gibbs.state import GibbsSettings, GibbsState

_INTERMEDIATE_SCANS = 3  # restricted Gibbs scans that build a split–merge launch state


AssignmentSweep = Callable[[np.random.Generator, GibbsState, GibbsData], dict[str, int]]
"""``sweep(rng, state, data) -> info``: one pass over the tasks' cluster assignments."""


def sequential_sweep(
    rng: np.random.Generator, state: GibbsState, data: GibbsData
) -> dict[str, int]:
    """Neal's algorithm 3 over every task in index order (compiled), in place.

    Examples
    --------
    >>> from clusterednb.examples import inference as toy
    >>> data, state = toy.gibbs_start()
    >>> sequential_sweep(np.random.default_rng(0), state, data)
    {}
    >>> int(state.sizes.sum()), state.cluster_cells.sum(axis=0).tolist()  # every task placed
    (3, [4, 0, 0, 2])
    """
    state.sweep(
        data.all_tasks,
        data.new_score,
        np.log(state.gamma),
        rng.random(data.n_tasks),
        data.tasks.packed(),
        data.tables.packed(),
    )
    return {}


def gibbs_step(
    rng: np.random.Generator,
    state: GibbsState,
    data: GibbsData,
    settings: GibbsSettings,
    label_probability: np.ndarray,
    sweep: AssignmentSweep = sequential_sweep,
) -> dict[str, float]:
    """One full step of the sampler; updates ``state`` in place.

    ``label_probability`` (n_unlabelled, n_classes) receives this step's conditional label
    probabilities of the unlabelled rows (overwritten). ``sweep`` moves the tasks'
    assignments (the sharded sweep of :mod:`.sharded` runs shards in parallel). Returns
    information on the step.

    Examples
    --------
    >>> from clusterednb.examples import inference as toy
    >>> from clusterednb.inference.gibbs.state import GibbsSettings
    >>> data, state = toy.gibbs_start()
    >>> info = gibbs_step(np.random.default_rng(0), state, data, GibbsSettings(),
    ...                   np.zeros((0, 2)))
    >>> sorted(info), info["n_clusters"] == state.n_clusters
    (['accepted', 'gamma', 'n_clusters'], True)
    """
    info = sweep(rng, state, data)
    if state.labels.size:
        resample_unlabelled(rng, state, data, label_probability, 1.0)
    accepted = sum(split_merge_move(rng, state, data) for _ in range(settings.split_merge_moves))
    if settings.sample_gamma:
        state.gamma = escobar_west_gamma(
            rng, state.gamma, state.n_clusters, data.n_tasks, settings.gamma_prior
        )
    return {"accepted": accepted, "n_clusters": state.n_clusters, "gamma": state.gamma, **info}


def resample_unlabelled(
    rng: np.random.Generator,
    state: GibbsState,
    data: GibbsData,
    label_probability: np.ndarray,
    temperature: float,
) -> None:
    """Resample every unlabelled row's label (likelihood raised to ``temperature``) and
    rebuild the tasks' counts; this sweep's conditional probabilities overwrite
    ``label_probability`` (n_unlabelled, n_classes).

    Examples
    --------
    The red row of :func:`.gibbs_kernels.resample_labels`' example, whose ``P(no) = 0.4``:

    >>> from clusterednb.examples import models as toy
    >>> from clusterednb.inference.gibbs.state import initial_state, prepare
    >>> data = prepare(toy.colour_model(), toy.three_task_counts(), np.array([[0]]),
    ...                np.array([2]))
    >>> state = initial_state(np.random.default_rng(0), data, 1.0, np.array([0, 0, 1]))
    >>> probability = np.zeros((1, 2))
    >>> resample_unlabelled(np.random.default_rng(1), state, data, probability, 1.0)
    >>> probability.round(6).tolist()
    [[0.4, 0.6]]
    """
    label_probability[:] = 0.0
    resample_labels(
        data.unlabelled_X,
        data.unlabelled_task,
        state.labels,
        data.model.offsets,
        state.assignment,
        state.task_label_counts,
        state.cluster_cells,
        state.cluster_totals,
        (data.model.alpha, data.cell_prior, data.total_prior),
        rng.random(state.labels.size),
        label_probability,
        temperature,
    )
    data.refresh(state.labels)


def escobar_west_gamma(
    rng: np.random.Generator,
    gamma: float,
    n_clusters: int,
    n_tasks: int,
    prior: tuple[float, float],
) -> float:
    """Draw ``γ`` from its conditional given the number of clusters (Escobar & West 1995).

    ``prior = (shape, rate)`` of a Gamma prior on ``γ``. Uses the auxiliary variable
    ``η ~ Beta(γ + 1, U)`` and a two-component Gamma mixture.

    Examples
    --------
    The chain of draws given 3 clusters of 10 tasks averages to the posterior mean of ``γ``
    under a Gamma(1, 1) prior and ``P(K | γ, U) ∝ γ^K Γ(γ) / Γ(γ + U)`` (by quadrature):

    >>> from scipy import integrate
    >>> from scipy.special import gammaln
    >>> def density(g):
    ...     return np.exp(-g + 3 * np.log(g) + gammaln(g) - gammaln(g + 10))
    >>> norm = integrate.quad(density, 0, 60)[0]
    >>> exact = integrate.quad(lambda g: g * density(g), 0, 60)[0] / norm
    >>> rng, gamma, draws = np.random.default_rng(0), 1.0, []
    >>> for _ in range(20000):
    ...     gamma = escobar_west_gamma(rng, gamma, 3, 10, (1.0, 1.0))
    ...     draws.append(gamma)
    >>> bool(abs(np.mean(draws) - exact) < 0.05)
    True
    """
    shape, rate = prior
    eta = rng.beta(gamma + 1.0, n_tasks)
    posterior_rate = rate - np.log(eta)
    odds = (shape + n_clusters - 1.0) / (n_tasks * posterior_rate)
    extra = 1.0 if rng.random() < odds / (1.0 + odds) else 0.0
    return float(rng.gamma(shape + n_clusters - 1.0 + extra, 1.0 / posterior_rate))


def split_merge_move(rng: np.random.Generator, state: GibbsState, data: GibbsData) -> bool:
    """One Jain & Neal (2004) split–merge Metropolis–Hastings move over tasks; True if accepted.

    Two distinct tasks ``i, j`` are drawn. The other members of their clusters get a launch
    state (random sides, then ``_INTERMEDIATE_SCANS`` restricted Gibbs scans). If ``i`` and
    ``j`` share a cluster, one more restricted scan proposes a split; otherwise the merge is
    proposed and the scan's probability of reproducing the current split enters the ratio.

    Examples
    --------
    >>> from clusterednb.examples import inference as toy
    >>> data, state = toy.gibbs_start()
    >>> rng = np.random.default_rng(0)
    >>> accepted = [split_merge_move(rng, state, data) for _ in range(20)]
    >>> int(state.sizes.sum()), state.cluster_cells.sum(axis=0).tolist()  # nothing lost
    (3, [4, 0, 0, 2])
    """
    n_tasks = data.n_tasks
    if n_tasks < 2:
        return False
    i, j = rng.choice(n_tasks, size=2, replace=False)
    slot_i, slot_j = int(state.assignment[i]), int(state.assignment[j])
    members = np.flatnonzero(np.isin(state.assignment, (slot_i, slot_j)))
    members = members[(members != i) & (members != j)]
    cells = np.zeros((2, state.cluster_cells.shape[1]), dtype=np.int64)
    totals = np.zeros((2, state.cluster_totals.shape[1]), dtype=np.int64)
    sizes = np.zeros(2, dtype=np.int64)
    side = rng.integers(0, 2, size=members.size)
    tasks, tables = data.tasks.packed(), data.tables.packed()
    for task, s in zip((i, j, *members), (0, 1, *side), strict=True):
        move_task(task, s, 1, tasks, cells, totals)
        sizes[s] += 1
    free_choice = np.full(members.size, -1, dtype=np.int64)

    def scan(forced: np.ndarray) -> float:
        return restricted_scan(
            members,
            side,
            cells,
            totals,
            sizes,
            forced,
            rng.random(members.size),
            tasks,
            tables,
        )

    for _ in range(_INTERMEDIATE_SCANS):
        scan(free_choice)
    if slot_i == slot_j:
        log_q = scan(free_choice)  # the proposed split; the ratio is evaluated on it
        log_ratio = log_split_ratio(state.gamma, sizes, cells, totals, 0, 1, data) - log_q
        if np.log(rng.random()) >= log_ratio:
            return False
        new_slot = state.take_free_slot()
        state.assignment[members[side == 0]] = new_slot
        state.assignment[i] = new_slot
        state.cluster_cells[[new_slot, slot_j]] = cells
        state.cluster_totals[[new_slot, slot_j]] = totals
        state.sizes[[new_slot, slot_j]] = sizes
        return True
    log_q = scan((state.assignment[members] == slot_j).astype(np.int64))
    log_ratio = log_q - log_split_ratio(
        state.gamma,
        state.sizes[[slot_i, slot_j]],
        state.cluster_cells,
        state.cluster_totals,
        slot_i,
        slot_j,
        data,
    )
    if np.log(rng.random()) >= log_ratio:
        return False
    state.merge_into(slot_i, slot_j)
    return True


def log_split_ratio(
    gamma: float,
    sizes: np.ndarray,
    cells: np.ndarray,
    totals: np.ndarray,
    a: int,
    b: int,
    data: GibbsData,
) -> float:
    """``log [P(split) L(split)] − log [P(merged) L(merged)]`` for clusters in rows a and b.

    Examples
    --------
    Clusters {0, 1} and {2} of :func:`clusterednb.examples.inference.gibbs_start` share no cell, so
    the
    likelihoods cancel and the CRP's ratio ``γ Γ(2) Γ(1) / Γ(3) = 1/2`` is left (``γ = 1``):

    >>> from clusterednb.examples import inference as toy
    >>> data, state = toy.gibbs_start()
    >>> ratio = log_split_ratio(1.0, np.array([2, 1]), state.cluster_cells,
    ...                         state.cluster_totals, 0, 1, data)
    >>> bool(np.isclose(ratio, np.log(1 / 2)))
    True
    """
    tables = data.tables.packed()
    log_prior = np.log(gamma) + gammaln(sizes).sum() - gammaln(sizes.sum())
    log_like = (
        merged_log_ml(cells, totals, a, -1, tables)
        + merged_log_ml(cells, totals, b, -1, tables)
        - merged_log_ml(cells, totals, a, b, tables)
    )
    return float(log_prior + log_like)

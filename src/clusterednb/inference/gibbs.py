"""Collapsed Gibbs sampling for Clustered Naive Bayes.

One step (:func:`gibbs_step`, a function of ``(rng, state)``) does:

1. a sweep over the tasks' cluster assignments (Neal 2000, algorithm 3; compiled);
2. when there are unlabelled rows, a sweep over their labels given the clusters;
3. optional split–merge moves over tasks (Jain & Neal 2004, restricted Gibbs launch state);
4. optional Escobar & West (1995) update of the DP concentration ``γ``.

The driver :func:`fit_gibbs` loops, records retained samples and builds the Rao-Blackwellised
posterior predictive: for each retained partition, each task's predictive uses its cluster's
counts and its own label counts.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy.special import gammaln

from clusterednb.inference.gibbs_kernels import (
    merged_log_ml,
    move_task,
    new_cluster_scores,
    resample_labels,
    restricted_scan,
    sweep_assignments,
)
from clusterednb.inference.posterior import Posterior
from clusterednb.inference.result import ClusteringResult
from clusterednb.observation import DirichletNB
from clusterednb.priors import canonical_partition, crp_log_prior
from clusterednb.progress import progress
from clusterednb.special import segment_sum
from clusterednb.stats import Counts

_TABLE_ENTRIES = 1 << 24  # cap on the size of each lgamma look-up table
_INTERMEDIATE_SCANS = 3  # restricted Gibbs scans that build a split–merge launch state


@dataclass(frozen=True)
class GibbsSettings:
    """Sampler settings (see :class:`clusterednb.ClusteredNB` for their meaning)."""

    n_sweeps: int = 200
    burn_in: int = 50
    thin: int = 1
    sample_gamma: bool = False
    gamma_prior: tuple[float, float] = (1.0, 1.0)
    split_merge_moves: int = 3
    progress: bool = False


@dataclass
class SparseTaskCounts:
    """Non-zero value cells and feature totals of each task, in CSR form.

    ``cell_key`` indexes ``c * V + v``; ``total_key`` indexes ``c * F + f``.
    """

    cell_ptr: np.ndarray
    cell_key: np.ndarray
    cell_count: np.ndarray
    total_ptr: np.ndarray
    total_key: np.ndarray
    total_count: np.ndarray

    @classmethod
    def from_dense(cls, value_counts: np.ndarray, offsets: np.ndarray) -> SparseTaskCounts:
        """From value counts of shape (n_tasks, n_classes, n_values_total)."""
        n_tasks = value_counts.shape[0]
        cells = value_counts.reshape(n_tasks, -1)
        totals = segment_sum(value_counts, offsets).reshape(n_tasks, -1)
        task_c, key_c = np.nonzero(cells)
        task_t, key_t = np.nonzero(totals)
        bounds = np.arange(n_tasks + 1)
        return cls(
            np.searchsorted(task_c, bounds),
            key_c.astype(np.int64),
            cells[task_c, key_c],
            np.searchsorted(task_t, bounds),
            key_t.astype(np.int64),
            totals[task_t, key_t],
        )

    def packed(self) -> tuple[np.ndarray, ...]:
        """The ``tasks`` tuple the kernels take (see :mod:`.gibbs_kernels`)."""
        return (
            self.cell_ptr,
            self.cell_key,
            self.cell_count,
            self.total_ptr,
            self.total_key,
            self.total_count,
        )


@dataclass
class LogGammaTables:
    """``lgamma(base + count)`` tables, one row per distinct prior value."""

    cell_row: np.ndarray
    cell_table: np.ndarray
    cell_base: np.ndarray
    total_row: np.ndarray
    total_table: np.ndarray
    total_base: np.ndarray
    cell_step: np.ndarray = field(init=False)

    def __post_init__(self) -> None:
        self.cell_step = np.diff(self.cell_table, axis=1)

    @classmethod
    def build(
        cls, cell_prior: np.ndarray, total_prior: np.ndarray, max_count: int
    ) -> LogGammaTables:
        """Tables for counts ``0 .. max_count`` (capped; larger counts call lgamma)."""
        parts = []
        for prior in (cell_prior, total_prior):
            base, row = np.unique(prior, return_inverse=True)
            length = int(min(max_count + 1, max(_TABLE_ENTRIES // base.size, 1)))
            parts += [row.astype(np.int64), gammaln(base[:, None] + np.arange(length)), base]
        return cls(*parts)

    def packed(self) -> tuple[np.ndarray, ...]:
        """The ``tables`` tuple the kernels take (see :mod:`.gibbs_kernels`)."""
        return (
            self.cell_row,
            self.cell_table,
            self.cell_base,
            self.total_row,
            self.total_table,
            self.total_base,
            self.cell_step,
        )


@dataclass
class GibbsData:
    """Everything a step reads but does not change (except the rebuilt task counts)."""

    model: DirichletNB
    labelled_value_counts: np.ndarray  # (U, C, V)
    labelled_label_counts: np.ndarray  # (U, C)
    unlabelled_X: np.ndarray  # (R, F) codes
    unlabelled_task: np.ndarray  # (R,)
    cell_prior: np.ndarray  # (C * V,)
    total_prior: np.ndarray  # (C * F,)
    tables: LogGammaTables
    tasks: SparseTaskCounts = field(init=False)
    new_score: np.ndarray = field(init=False)

    @property
    def n_tasks(self) -> int:
        return int(self.labelled_label_counts.shape[0])

    def refresh(self, labels: np.ndarray) -> np.ndarray:
        """Rebuild the tasks' counts with the unlabelled rows at ``labels``; return label counts."""
        schema = self.model.schema
        value_counts, label_counts = self.labelled_value_counts, self.labelled_label_counts
        if labels.size:
            extra = Counts.from_codes(
                self.unlabelled_X,
                labels,
                self.unlabelled_task,
                n_tasks=self.n_tasks,
                n_classes=schema.n_classes,
                offsets=schema.offsets,
            )
            value_counts = value_counts + extra.value_counts
            label_counts = label_counts + extra.label_counts
        self.tasks = SparseTaskCounts.from_dense(value_counts, schema.offsets)
        self.new_score = new_cluster_scores(self.tasks.packed(), self.tables.packed())
        return label_counts.copy()


@dataclass
class GibbsState:
    """The sampler's state; :func:`gibbs_step` updates it in place and returns it."""

    assignment: np.ndarray  # (U,) cluster slot of each task, -1 = not yet placed
    sizes: np.ndarray  # (U,)
    active: np.ndarray  # (U,) occupied slots in active[:counters[0]]
    position: np.ndarray  # (U,) index of a slot in active
    free: np.ndarray  # (U,) empty slots in free[:counters[1]]
    counters: np.ndarray  # (2,) [n_active, n_free]
    cluster_cells: np.ndarray  # (U, C * V)
    cluster_totals: np.ndarray  # (U, C * F)
    labels: np.ndarray  # (R,) current labels of the unlabelled rows
    task_label_counts: np.ndarray  # (U, C) including the unlabelled rows' current labels
    gamma: float

    def kernel_state(self) -> tuple[np.ndarray, ...]:
        """The ``state`` tuple of :func:`.gibbs_kernels.sweep_assignments` (views, not copies)."""
        return (self.assignment, self.sizes, self.active, self.position, self.free, self.counters)

    @property
    def n_clusters(self) -> int:
        return int(self.counters[0])

    def active_slots(self) -> np.ndarray:
        return self.active[: self.counters[0]]

    def take_free_slot(self) -> int:
        self.counters[1] -= 1
        slot = int(self.free[self.counters[1]])
        self.active[self.counters[0]] = slot
        self.position[slot] = self.counters[0]
        self.counters[0] += 1
        return slot

    def merge_into(self, source: int, target: int) -> None:
        """Move every task of cluster ``source`` to cluster ``target`` and free ``source``."""
        self.assignment[self.assignment == source] = target
        self.cluster_cells[target] += self.cluster_cells[source]
        self.cluster_totals[target] += self.cluster_totals[source]
        self.sizes[target] += self.sizes[source]
        self.cluster_cells[source] = 0
        self.cluster_totals[source] = 0
        self.sizes[source] = 0
        self.release_slot(source)

    def release_slot(self, slot: int) -> None:
        last = self.active[self.counters[0] - 1]
        self.active[self.position[slot]] = last
        self.position[last] = self.position[slot]
        self.counters[0] -= 1
        self.free[self.counters[1]] = slot
        self.counters[1] += 1


def prepare(
    model: DirichletNB, counts: Counts, unlabelled_X: np.ndarray, unlabelled_task: np.ndarray
) -> GibbsData:
    """Sampler inputs from per-task labelled counts and the unlabelled rows."""
    schema = model.schema
    cell_prior = model.beta.ravel()
    total_prior = segment_sum(model.beta, schema.offsets).ravel()
    max_count = int(counts.label_counts.sum()) + unlabelled_X.shape[0]
    return GibbsData(
        model=model,
        labelled_value_counts=counts.value_counts,
        labelled_label_counts=counts.label_counts,
        unlabelled_X=np.ascontiguousarray(unlabelled_X, dtype=np.int64),
        unlabelled_task=np.ascontiguousarray(unlabelled_task, dtype=np.int64),
        cell_prior=cell_prior,
        total_prior=total_prior,
        tables=LogGammaTables.build(cell_prior, total_prior, max_count),
    )


def initial_state(
    rng: np.random.Generator, data: GibbsData, gamma: float, assignment: np.ndarray | None = None
) -> GibbsState:
    """A state with unlabelled rows' labels drawn uniformly and tasks placed per ``assignment``.

    Tasks with ``assignment == -1`` (all of them by default) are placed by the first sweep.
    """
    schema = data.model.schema
    n_tasks = data.n_tasks
    labels = rng.integers(0, schema.n_classes, size=data.unlabelled_X.shape[0]).astype(np.int64)
    label_counts = data.refresh(labels)
    state = GibbsState(
        assignment=np.full(n_tasks, -1, dtype=np.int64),
        sizes=np.zeros(n_tasks, dtype=np.int64),
        active=np.zeros(n_tasks, dtype=np.int64),
        position=np.zeros(n_tasks, dtype=np.int64),
        free=np.arange(n_tasks, dtype=np.int64)[::-1].copy(),
        counters=np.array([0, n_tasks], dtype=np.int64),
        cluster_cells=np.zeros((n_tasks, schema.n_classes * schema.n_values_total), np.int64),
        cluster_totals=np.zeros((n_tasks, schema.n_classes * schema.n_features), np.int64),
        labels=labels,
        task_label_counts=label_counts,
        gamma=float(gamma),
    )
    if assignment is not None:
        slot_of_label: dict[int, int] = {}
        for task, label in enumerate(assignment):
            if label < 0:
                continue
            if label not in slot_of_label:
                slot_of_label[label] = state.take_free_slot()
            _move(state, data, task, slot_of_label[label], +1)
    return state


def _move(state: GibbsState, data: GibbsData, task: int, slot: int, sign: int) -> None:
    t = data.tasks
    cells = slice(t.cell_ptr[task], t.cell_ptr[task + 1])
    totals = slice(t.total_ptr[task], t.total_ptr[task + 1])
    state.cluster_cells[slot, t.cell_key[cells]] += sign * t.cell_count[cells]
    state.cluster_totals[slot, t.total_key[totals]] += sign * t.total_count[totals]
    state.sizes[slot] += sign
    state.assignment[task] = slot if sign > 0 else -1


def gibbs_step(
    rng: np.random.Generator,
    state: GibbsState,
    data: GibbsData,
    settings: GibbsSettings,
    label_probability: np.ndarray,
) -> dict[str, float]:
    """One full step of the sampler; updates ``state`` in place.

    ``label_probability`` (n_unlabelled, n_classes) receives this step's conditional label
    probabilities of the unlabelled rows (overwritten). Returns information on the step.
    """
    sweep_assignments(
        state.kernel_state(),
        data.new_score,
        np.log(state.gamma),
        rng.random(data.n_tasks),
        data.tasks.packed(),
        state.cluster_cells,
        state.cluster_totals,
        data.tables.packed(),
        1.0,
    )
    if state.labels.size:
        resample_unlabelled(rng, state, data, label_probability, 1.0)
    accepted = sum(split_merge_move(rng, state, data) for _ in range(settings.split_merge_moves))
    if settings.sample_gamma:
        state.gamma = escobar_west_gamma(
            rng, state.gamma, state.n_clusters, data.n_tasks, settings.gamma_prior
        )
    return {"accepted": accepted, "n_clusters": state.n_clusters, "gamma": state.gamma}


def resample_unlabelled(
    rng: np.random.Generator,
    state: GibbsState,
    data: GibbsData,
    label_probability: np.ndarray,
    temperature: float,
) -> None:
    """Resample every unlabelled row's label (likelihood raised to ``temperature``) and
    rebuild the tasks' counts; this sweep's conditional probabilities overwrite
    ``label_probability`` (n_unlabelled, n_classes)."""
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


def feature_log_ml(state: GibbsState, data: GibbsData) -> float:
    """``Σ_k Σ_{y,f} log DM(N[k, y, f]; β)`` over the occupied clusters of ``state``."""
    tables = data.tables.packed()
    return float(
        sum(
            merged_log_ml(state.cluster_cells, state.cluster_totals, int(slot), -1, tables)
            for slot in state.active_slots()
        )
    )


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
        log_ratio = _log_split_ratio(state.gamma, sizes, cells, totals, 0, 1, data) - log_q
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
    log_ratio = log_q - _log_split_ratio(
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


def _log_split_ratio(
    gamma: float,
    sizes: np.ndarray,
    cells: np.ndarray,
    totals: np.ndarray,
    a: int,
    b: int,
    data: GibbsData,
) -> float:
    """``log [P(split) L(split)] − log [P(merged) L(merged)]`` for clusters in rows a and b."""
    tables = data.tables.packed()
    log_prior = np.log(gamma) + gammaln(sizes).sum() - gammaln(sizes.sum())
    log_like = (
        merged_log_ml(cells, totals, a, -1, tables)
        + merged_log_ml(cells, totals, b, -1, tables)
        - merged_log_ml(cells, totals, a, b, tables)
    )
    return float(log_prior + log_like)


@dataclass
class _Recorder:
    """Retained samples of the sampler."""

    partitions: list[np.ndarray] = field(default_factory=list)
    components: list[np.ndarray] = field(default_factory=list)
    task_component: list[np.ndarray] = field(default_factory=list)
    label_counts: list[np.ndarray] = field(default_factory=list)
    sizes: list[np.ndarray] = field(default_factory=list)
    gammas: list[float] = field(default_factory=list)
    log_joint: list[float] = field(default_factory=list)

    def record(self, state: GibbsState, data: GibbsData) -> None:
        slots = state.active_slots()
        schema = data.model.schema
        shape = (slots.size, schema.n_classes, schema.n_values_total)
        self.components.append(state.cluster_cells[slots].reshape(shape).copy())
        self.task_component.append(state.position[state.assignment].copy())
        self.partitions.append(canonical_partition(state.assignment))
        self.label_counts.append(state.task_label_counts.copy())
        self.sizes.append(state.sizes[slots].copy())
        self.gammas.append(state.gamma)
        self.log_joint.append(_labelled_log_joint(state, data))


def _labelled_log_joint(state: GibbsState, data: GibbsData) -> float:
    """``log P(D_labelled | z) + log P(z)`` (feature part) for the current partition."""
    labelled = Counts(data.labelled_label_counts, data.labelled_value_counts)
    return partition_log_joint(
        data.model, labelled, state.position[state.assignment], state.n_clusters, state.gamma
    )


def partition_log_joint(
    model: DirichletNB, counts: Counts, cluster: np.ndarray, n_clusters: int, gamma: float
) -> float:
    """``log P(features of D | z) + log P(z)`` for tasks in clusters ``0..n_clusters-1``."""
    clusters = counts.group_by(cluster, n_clusters)
    return float(
        model.log_marginal_features(clusters.value_counts).sum() + crp_log_prior(cluster, gamma)
    )


def fit_gibbs(
    model: DirichletNB,
    counts: Counts,
    unlabelled_X: np.ndarray,
    unlabelled_task: np.ndarray,
    gamma: float,
    settings: GibbsSettings,
    rng: np.random.Generator,
    initial_assignment: np.ndarray | None = None,
) -> ClusteringResult:
    """Run the sampler and summarise its retained samples.

    Parameters
    ----------
    model : DirichletNB
    counts : Counts with one group per task (labelled rows)
    unlabelled_X : ndarray of shape (n_unlabelled, n_features)
    unlabelled_task : ndarray of shape (n_unlabelled,)
    gamma : float
        Initial (or fixed) DP concentration.
    settings : GibbsSettings
    rng : numpy.random.Generator
    initial_assignment : ndarray of shape (n_tasks,), optional
        Warm start (-1 for tasks to be placed by the first sweep).

    Returns
    -------
    ClusteringResult
        ``evidence_kind`` is ``"lower_bound"``: ``log P(D | z*) + log P(z*)`` for the best
        retained partition ``z*``, plus the label terms (thesis §4.3).
        ``extras`` holds ``assignment`` (final state), ``gamma_samples``,
        ``unlabelled_proba`` (Rao-Blackwellised label marginals of the unlabelled rows) and
        ``split_merge_accepted``.
    """
    data = prepare(model, counts, unlabelled_X, unlabelled_task)
    state = initial_state(rng, data, gamma, initial_assignment)
    n_classes = model.schema.n_classes
    step_probability = np.zeros((state.labels.size, n_classes))
    probability_sums = np.zeros_like(step_probability)
    recorder = _Recorder()
    accepted = 0
    reporter = progress(settings.n_sweeps, "Gibbs sweeps", enabled=settings.progress)
    for sweep in range(settings.n_sweeps):
        info = gibbs_step(rng, state, data, settings, step_probability)
        accepted += int(info["accepted"])
        if sweep >= settings.burn_in:
            probability_sums += step_probability
            if (sweep - settings.burn_in) % settings.thin == 0:
                recorder.record(state, data)
        reporter.update(1)
    reporter.close()
    if not recorder.partitions:
        recorder.record(state, data)
    n_post = max(settings.n_sweeps - settings.burn_in, 1)
    result = _summarise(model, counts, recorder)
    result.extras.update(
        assignment=canonical_partition(state.assignment),
        gamma_samples=np.array(recorder.gammas),
        unlabelled_proba=probability_sums / n_post,
        split_merge_accepted=np.array(accepted),
    )
    return result


def _summarise(model: DirichletNB, counts: Counts, recorder: _Recorder) -> ClusteringResult:
    n_samples = len(recorder.partitions)
    n_tasks = counts.n_groups
    starts = np.concatenate([[0], np.cumsum([c.shape[0] for c in recorder.components])])
    empty = np.zeros((1, *recorder.components[0].shape[1:]), dtype=np.int64)
    component_counts = np.concatenate([*recorder.components, empty])
    task_component = np.stack(recorder.task_component) + starts[:-1, None]  # (S, U)
    log_w = -np.log(n_samples)
    # Cold start: CRP over each sample's clusters, plus a new cluster (the empty component).
    gammas = np.array(recorder.gammas)
    sizes = np.concatenate(recorder.sizes)
    sample_of = np.repeat(np.arange(n_samples), [s.size for s in recorder.sizes])
    cold_existing = log_w + np.log(sizes) - np.log(n_tasks + gammas[sample_of])
    cold_new = log_w + np.logaddexp.reduce(np.log(gammas) - np.log(n_tasks + gammas))
    posterior = Posterior(
        component_counts=component_counts,
        task_label_counts=recorder.label_counts[-1],
        indptr=np.arange(n_tasks + 1, dtype=np.int64) * n_samples,
        components=task_component.T.ravel(),
        log_weights=np.full(n_tasks * n_samples, log_w),
        cold_label_counts=np.zeros(counts.label_counts.shape[1], dtype=np.int64),
        cold_components=np.append(np.arange(starts[-1]), starts[-1]),
        cold_log_weights=np.append(cold_existing, cold_new),
        entry_label_counts=np.stack(recorder.label_counts, axis=1).reshape(n_tasks * n_samples, -1),
    )
    partitions = np.stack(recorder.partitions)
    unique, inverse, frequency = np.unique(
        partitions, axis=0, return_inverse=True, return_counts=True
    )
    log_joint = np.array(recorder.log_joint)
    best_per_unique = np.full(unique.shape[0], -np.inf)
    np.maximum.at(best_per_unique, inverse.ravel(), log_joint)
    map_index = np.lexsort((best_per_unique, frequency))[-1]
    n_clusters = partitions.max(axis=1) + 1
    log_labels = float(model.log_marginal_labels(counts.label_counts).sum())
    return ClusteringResult(
        posterior=posterior,
        log_evidence=float(log_joint.max()) + log_labels,
        evidence_kind="lower_bound",
        partition=unique[map_index],
        n_clusters_probability=np.bincount(n_clusters, minlength=n_tasks + 1) / n_samples,
        partitions=unique,
        partition_weights=frequency / n_samples,
    )

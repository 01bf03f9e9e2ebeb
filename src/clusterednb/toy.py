"""Tiny ready-made objects: the ones the docstrings' examples start from.

Each function builds one small, fully specified object (a schema with one feature of two
values, a handful of tasks, a fitted toy model) so that an example can show the one call it
is about, and so that a reader at a prompt can try a function without making data first. The
objects are small enough to check by hand; their docstrings say what they hold.

Examples
--------
>>> from clusterednb import toy
>>> posterior = toy.three_task_posterior()
>>> posterior.components.tolist()  # tasks 0 and 1 share a cluster, task 2 is alone
[0, 0, 1]
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scipy import sparse

from clusterednb.clustered import ClusteredNB
from clusterednb.data.schema import FeatureSchema
from clusterednb.data.synthetic import make_planted_population
from clusterednb.document_events import MultinomialDirichletNB
from clusterednb.evaluation.datasets import EvalDataset, from_frame
from clusterednb.inference.gibbs_data import GibbsData, LogGammaTables
from clusterednb.inference.gibbs_state import GibbsState, initial_state, prepare
from clusterednb.inference.joint_blocks import JointLogisticBlocks, TaskExpansions, one_hot_design
from clusterednb.inference.posterior import Posterior
from clusterednb.inference.variational_problem import VariationalProblem
from clusterednb.logistic_clusters import LogisticClusters, fit_clusters
from clusterednb.logistic_fit import FitSettings, JointData
from clusterednb.observation import DirichletNB
from clusterednb.semi_supervised import Unlabelled
from clusterednb.service.store import ServiceStore
from clusterednb.stats import Counts


def colour_schema() -> FeatureSchema:
    """One feature, ``colour``, of values ``red`` (code 0) and ``blue`` (code 1); classes 0, 1.

    Examples
    --------
    >>> colour_schema().offsets.tolist()  # the value columns of each feature
    [0, 2]
    """
    return FeatureSchema(("colour",), (("red", "blue"),), (0, 1))


def colour_model() -> DirichletNB:
    """The Dirichlet–naive-Bayes model of :func:`colour_schema` with ``α = β = 1``.

    Examples
    --------
    >>> colour_model().log_marginal(one_row_counts()).round(4).tolist()  # log(1/2 · 1/2)
    [-1.3863]
    """
    return DirichletNB(colour_schema())


def one_row_counts() -> Counts:
    """The counts of one task with one row: ``red``, labelled 0.

    Examples
    --------
    >>> counts = one_row_counts()
    >>> counts.label_counts.tolist(), counts.value_counts.tolist()
    ([[1, 0]], [[[1, 0], [0, 0]]])
    """
    return Counts(np.array([[1, 0]]), np.array([[[1, 0], [0, 0]]]))


def three_task_counts() -> Counts:
    """Three tasks of two rows each: tasks 0 and 1 saw ``red`` → 0 twice, task 2 ``blue`` → 1.

    Examples
    --------
    >>> three_task_counts().label_counts.tolist()
    [[2, 0], [2, 0], [0, 2]]
    """
    return Counts(
        np.array([[2, 0], [2, 0], [0, 2]]),
        np.array([[[2, 0], [0, 0]], [[2, 0], [0, 0]], [[0, 0], [0, 2]]]),
    )


def own_tables(counts: Counts, feature_group: np.ndarray) -> Posterior:
    """The predictive in which every task keeps its own counts (No-Sharing's), for
    :func:`unlabelled_rows`; ``feature_group`` is unused.

    Examples
    --------
    >>> own_tables(three_task_counts(), np.arange(3)).components.tolist()
    [0, 1, 2]
    """
    n_tasks = counts.n_groups
    return Posterior.single(
        counts.value_counts, counts.label_counts, np.arange(n_tasks), np.zeros(2), 0
    )


def unlabelled_rows() -> Unlabelled:
    """Two unlabelled rows for :func:`three_task_counts`: ``red`` in task 0, ``blue`` in
    task 2; every task its own label and feature group; predictive :func:`own_tables`.

    Examples
    --------
    >>> unlabelled_rows().rows.tolist(), unlabelled_rows().task.tolist()
    ([[0], [1]], [0, 2])
    """
    alone = np.arange(3)
    return Unlabelled(np.array([[0], [1]]), np.array([0, 2]), (alone, alone), own_tables)


def three_task_posterior() -> Posterior:
    """The posterior of :func:`three_task_counts` given the partition ``{0, 1}, {2}``, ``γ = 1``.

    Examples
    --------
    >>> posterior = three_task_posterior()
    >>> posterior.components.tolist(), np.exp(posterior.cold_log_weights).round(4).tolist()
    ([0, 0, 1], [0.5, 0.25, 0.25])
    """
    return Posterior.of_partition(three_task_counts(), np.array([0, 0, 1]), gamma=1.0)


def variational_problem() -> VariationalProblem:
    """The three tasks of :func:`three_task_counts` as the variational engine's problem.

    Examples
    --------
    >>> problem = variational_problem()
    >>> problem.shape  # (classes, values)
    (2, 2)
    """
    counts = three_task_counts()
    n_tasks = counts.value_counts.shape[0]
    flat = sparse.csr_matrix(counts.value_counts.reshape(n_tasks, -1))
    return VariationalProblem(colour_model(), flat, counts.label_counts)


def gibbs_start() -> tuple[GibbsData, GibbsState]:
    """The sampler's data for :func:`three_task_counts` and a state with tasks 0 and 1 in one
    cluster (slot 0) and task 2 in another (slot 1), ``γ = 1``.

    Examples
    --------
    >>> data, state = gibbs_start()
    >>> data.n_tasks, state.n_clusters
    (3, 2)
    """
    no_rows = np.zeros((0, 1), dtype=np.int64)
    data = prepare(colour_model(), three_task_counts(), no_rows, np.zeros(0, dtype=np.int64))
    start = np.array([0, 0, 1])
    return data, initial_state(np.random.default_rng(0), data, 1.0, start)


def tokens_model() -> MultinomialDirichletNB:
    """A multinomial document model over the words ``cake`` and ``tea``; classes 0, 1.

    Examples
    --------
    >>> tokens_model().schema.n_values_total
    2
    """
    return MultinomialDirichletNB(FeatureSchema(("tokens",), (("cake", "tea"),), (0, 1)))


def logistic_rows() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Two tasks of two rows each, one-hot encoded with an intercept.

    Returns
    -------
    design : ndarray of shape (4, 3)
        The one-hot columns of one feature of two values, then the intercept.
    y : ndarray of shape (4,)
        Labels ``1, 0`` (task 0) and ``1, 1`` (task 1).
    starts : ndarray of shape (3,)
        Task ``u``'s rows are ``starts[u]:starts[u + 1]``.

    Examples
    --------
    >>> design, y, starts = logistic_rows()
    >>> design.tolist()[:2], y.tolist(), starts.tolist()
    ([[1.0, 0.0, 1.0], [0.0, 1.0, 1.0]], [1.0, 0.0, 1.0, 1.0], [0, 2, 4])
    """
    design = one_hot_design(np.array([[0], [1], [0], [1]]), np.array([0, 2]))
    return design, np.array([1.0, 0.0, 1.0, 1.0]), np.array([0, 2, 4])


def task_expansions() -> TaskExpansions:
    """The second-order expansions of :func:`logistic_rows`' tasks at their pooled MAP (``λ = 1``).

    Examples
    --------
    >>> task_expansions().hessian.shape  # two tasks, 2 values + intercept
    (2, 3, 3)
    """
    design, y, starts = logistic_rows()
    return TaskExpansions.at_pooled_map(design, y, starts, precision=1.0)


def joint_blocks() -> JointLogisticBlocks:
    """The joint block scores of :func:`logistic_rows`' two tasks, each of which saw both values.

    Examples
    --------
    >>> joint_blocks().n_tasks
    2
    """
    return JointLogisticBlocks(np.array([[1, 1], [1, 1]]), np.array([0, 2]), task_expansions())


def joint_data() -> JointData:
    """Three tasks of two rows over one feature of two values; one row of task 1 is unlabelled.

    Examples
    --------
    >>> data = joint_data()
    >>> data.task.tolist(), data.y.tolist()
    ([0, 0, 1, 1, 2, 2], [1, 0, -1, 1, 0, 1])
    """
    return JointData.from_codes(
        np.array([[0], [1], [0], [1], [1], [0]]),
        np.array([1, 0, -1, 1, 0, 1]),
        np.array([0, 0, 1, 1, 2, 2]),
        3,
        np.array([0, 2]),
    )


def fitted_clusters(floor: float = 1.0) -> LogisticClusters:
    """The clustered logistic fit of :func:`joint_data` (``R = 5`` effective rows, seed 0).

    Parameters
    ----------
    floor : float
        The weight every other cluster's rows keep in a cluster's regression.

    Examples
    --------
    >>> int(fitted_clusters().cluster_sizes.sum())  # every task in some cluster
    3
    """
    settings = FitSettings(effective_rows=5.0, floor=floor)
    return fit_clusters(joint_data(), settings, np.random.default_rng(0))


def colour_rows() -> tuple[pd.DataFrame, np.ndarray, np.ndarray]:
    """Nine labelled rows of three users: ``ann`` and ``bob`` like red, ``cy`` likes blue.

    Returns
    -------
    X : DataFrame of shape (9, 1)
        The column ``colour``.
    y : ndarray of shape (9,)
        ``"yes"`` or ``"no"``.
    tasks : ndarray of shape (9,)
        The user of each row.

    Examples
    --------
    >>> X, y, tasks = colour_rows()
    >>> tasks[:3].tolist(), X["colour"][:3].tolist(), y[:3].tolist()
    (['ann', 'ann', 'ann'], ['red', 'red', 'blue'], ['yes', 'yes', 'no'])
    """
    colour = ["red", "red", "blue", "red", "blue", "blue", "red", "blue", "blue"]
    y = ["yes", "yes", "no", "yes", "no", "no", "no", "yes", "yes"]
    tasks = ["ann"] * 3 + ["bob"] * 3 + ["cy"] * 3
    return pd.DataFrame({"colour": colour}), np.array(y), np.array(tasks)


def colour_csv() -> Path:
    """:func:`colour_rows` as a CSV file with the columns ``user``, ``colour`` and ``liked``
    (in a new scratch folder), for examples of the command line.

    Examples
    --------
    >>> colour_csv().read_text().splitlines()[:2]
    ['user,colour,liked', 'ann,red,yes']
    """
    X, y, tasks = colour_rows()
    path = scratch_file("colours.csv")
    X.assign(liked=y).rename_axis(None).assign(user=tasks)[["user", "colour", "liked"]].to_csv(
        path, index=False
    )
    return path


def transfer_split() -> tuple[pd.DataFrame, pd.DataFrame]:
    """A protocol-T split of :func:`colour_rows` with target ``ann`` and ``k = 1``.

    Columns ``task``, ``label`` (1 for ``yes``) and ``colour``. The training frame holds
    every row of ``bob`` and ``cy`` and ann's first row (red, liked); the test frame holds
    ann's other two rows: red (liked) and blue (not liked).

    Examples
    --------
    >>> train, test = transfer_split()
    >>> len(train), test[["colour", "label"]].values.tolist()
    (7, [['red', 1], ['blue', 0]])
    """
    X, y, tasks = colour_rows()
    frame = X.assign(task=tasks, label=(y == "yes").astype(int))[["task", "label", "colour"]]
    test = frame.index.isin([1, 2])
    return frame[~test].reset_index(drop=True), frame[test].reset_index(drop=True)


def auc_rows() -> pd.DataFrame:
    """Protocol-T rows of two models on three targets at ``k = 1``: ``lr-pooled`` and ``cnb``.

    Examples
    --------
    >>> auc_rows().groupby("model")["auc"].mean().round(3).to_dict()
    {'cnb': 0.79, 'lr-pooled': 0.75}
    """
    aucs = {"lr-pooled": (0.70, 0.80, 0.75), "cnb": (0.74, 0.83, 0.80)}
    return pd.DataFrame(
        [
            {"model": model, "k": 1, "target": target, "auc": auc, "skipped": False}
            for model, values in aucs.items()
            for target, auc in enumerate(values)
        ]
    )


def scratch_file(name: str) -> Path:
    """A path called ``name`` in a new, empty temporary folder, for examples that write files.

    Examples
    --------
    >>> path = scratch_file("model.cnb")
    >>> (path.name, path.exists(), path.parent.is_dir())
    ('model.cnb', False, True)
    """
    return Path(tempfile.mkdtemp(prefix="clusterednb-")) / name


def service_store() -> tuple[ServiceStore, str]:
    """A new service store in a scratch file with two accounts, ``ann`` (a wrong decline
    costs her 5) and ``bob``; returns the store and ann's API token.

    Examples
    --------
    >>> store, token = service_store()
    >>> [account.user for account in store.users()], token.startswith("ann.")
    (['ann', 'bob'], True)
    """
    store = ServiceStore(scratch_file("service.db"))
    token = store.add_user("ann", "ann@example.org", cost_false_decline=5.0)
    store.add_user("bob", "bob@example.org")
    return store, token


def request_record(uid: str = "m1@example.org") -> dict[str, Any]:
    """A decided invitation as :meth:`ServiceStore.add_request` stores it: a 10:00 meeting
    from carol, accepted with P(accept) = 0.8.

    Examples
    --------
    >>> request_record()["decision"]
    'accept'
    """
    return {
        "uid": uid,
        "recurrence_id": "",
        "sequence": 0,
        "ics": b"BEGIN:VCALENDAR\r\nEND:VCALENDAR\r\n",
        "summary": "Planning",
        "organizer": "carol@example.org",
        "starts_at": "2026-11-24T10:00:00+00:00",
        "features": {"hour": "10"},
        "missing": [],
        "decision": "accept",
        "p_accept": 0.8,
        "loss_accept": 0.2,
        "loss_decline": 4.0,
        "reasons": [],
    }


def eval_dataset() -> EvalDataset:
    """A planted population as an evaluation data set: two groups of three tasks (``u0`` …
    ``u5``), 20 labelled rows each, three features of three values (seed 0).

    Examples
    --------
    >>> dataset = eval_dataset()
    >>> dataset.features, dataset.frame["task"].nunique(), len(dataset.frame)
    (['f0', 'f1', 'f2'], 6, 120)
    """
    population = make_planted_population(
        np.random.default_rng(0), group_sizes=(3, 3), rows_per_task=20, n_features=3, n_values=3
    )
    return from_frame(population.frame, "task", "label", name="planted")


def exact_clustering() -> ClusteredNB:
    """Clustered NB fitted to :func:`three_task_counts` by enumerating every partition: the
    reference the approximate engines' examples compare with.

    Examples
    --------
    >>> model = exact_clustering()
    >>> model.evidence_kind_, round(float(model.coclustering_[0, 1]), 6)  # 9/14
    ('exact', 0.642857)
    """
    return ClusteredNB(inference="exact").fit_counts(
        three_task_counts(), ["a", "b", "c"], colour_schema()
    )


def dense_statistics() -> tuple[np.ndarray, np.ndarray, tuple[np.ndarray, ...]]:
    """:func:`three_task_counts` as the compiled kernels' dense cells (3, 4) and totals (3, 2)
    per task, with the packed lgamma tables of ``β = 1``.

    Examples
    --------
    >>> cells, totals, tables = dense_statistics()
    >>> cells.tolist(), totals.tolist()
    ([[2, 0, 0, 0], [2, 0, 0, 0], [0, 0, 0, 2]], [[2, 0], [2, 0], [0, 2]])
    """
    cells = np.array([[2, 0, 0, 0], [2, 0, 0, 0], [0, 0, 0, 2]])
    totals = np.array([[2, 0], [2, 0], [0, 2]])
    return cells, totals, LogGammaTables.build(np.ones(4), np.full(2, 2.0), 10).packed()

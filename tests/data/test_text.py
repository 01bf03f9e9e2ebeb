"""Text tasks: Bernoulli and multinomial event models, sparse input, mutual information."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pandas as pd
import pytest
from scipy import sparse

from clusterednb import ClusteredNB, CompleteSharingNB, NoSharingNB, PrototypeNB
from clusterednb.data.text import (
    Vocabulary,
    as_document_term,
    default_tokenizer,
    mutual_information,
    select_by_mutual_information,
)
from clusterednb.exceptions import CNBError, DataError
from clusterednb.loading import load

RNG = np.random.default_rng(0)
COUNTS = RNG.poisson(0.6, size=(40, 6))
LABELS = RNG.integers(0, 2, 40)
TASKS = np.repeat(["a", "b", "c", "d"], 10)
WORDS = [f"w{j}" for j in range(6)]
ENGINES = [
    (NoSharingNB, {}),
    (CompleteSharingNB, {}),
    (ClusteredNB, {"inference": "exact"}),
    (ClusteredNB, {"inference": "bhc"}),
    (
        ClusteredNB,
        {"inference": "gibbs", "progress": False, "random_state": 0, "n_sweeps": 30, "burn_in": 5},
    ),
]


@pytest.mark.parametrize(("cls", "settings"), ENGINES)
def test_bernoulli_equals_the_categorical_model_on_the_binary_matrix(cls, settings):
    binary = pd.DataFrame((COUNTS > 0).astype(int), columns=WORDS)
    # a table's columns are screened by default, a Bernoulli model's words are not
    plain = {"relevance": False} if cls is ClusteredNB else {}
    categorical = cls(**settings, **plain).fit(binary, LABELS, TASKS)
    bernoulli = cls(observation="bernoulli", **settings).fit(
        sparse.csr_matrix(COUNTS), LABELS, TASKS
    )
    assert bernoulli.log_evidence_ == pytest.approx(categorical.log_evidence_, abs=1e-9)
    for tasks in (TASKS[:8], np.array(["new"] * 8)):  # known tasks, then a cold start
        np.testing.assert_allclose(
            bernoulli.predict_proba(sparse.csr_matrix(COUNTS[:8]), tasks),
            categorical.predict_proba(binary.head(8), tasks),
            atol=1e-12,
        )


@pytest.mark.parametrize("observation", ["bernoulli", "multinomial"])
def test_sparse_and_dense_inputs_give_identical_results(observation):
    dense = NoSharingNB(observation=observation).fit(COUNTS, LABELS, TASKS)
    csr = NoSharingNB(observation=observation).fit(sparse.csr_matrix(COUNTS), LABELS, TASKS)
    frame = NoSharingNB(observation=observation).fit(
        pd.DataFrame(COUNTS, columns=WORDS), LABELS, TASKS
    )
    assert dense.log_evidence_ == csr.log_evidence_ == frame.log_evidence_
    np.testing.assert_array_equal(
        dense.predict_proba(COUNTS, TASKS), csr.predict_proba(sparse.csr_matrix(COUNTS), TASKS)
    )
    assert list(frame.feature_names_in_) == WORDS


@pytest.mark.parametrize(("cls", "settings"), ENGINES[:3])
def test_multinomial_predictive_is_the_ratio_of_evidences(cls, settings):
    model = cls(observation="multinomial", **settings).fit(COUNTS, LABELS, TASKS)
    document, task = COUNTS[3:4] + np.array([[0, 2, 0, 0, 1, 0]]), "a"
    log_joint = [
        cls(observation="multinomial", **settings)
        .fit(np.vstack([COUNTS, document]), np.append(LABELS, label), np.append(TASKS, task))
        .log_evidence_
        for label in (0, 1)
    ]
    expected = np.exp(np.array(log_joint) - np.logaddexp(*log_joint))
    np.testing.assert_allclose(model.predict_proba(document, [task])[0], expected, atol=1e-12)


def test_document_models_round_trip_and_refuse_bad_input(tmp_path):
    model = ClusteredNB(inference="bhc", observation="multinomial").fit(COUNTS, LABELS, TASKS)
    model.save(tmp_path / "m.cnb")
    np.testing.assert_array_equal(
        load(tmp_path / "m.cnb").predict_proba(COUNTS, TASKS), model.predict_proba(COUNTS, TASKS)
    )
    with pytest.raises(DataError, match="row 1, column 2 is -1;"):
        as_document_term(np.array([[0, 1, 0], [0, 0, -1]]))
    with pytest.raises(DataError, match=r"X has 5 words but the model.s vocabulary has 6"):
        model.predict_proba(COUNTS[:, :5], TASKS)
    with pytest.raises(CNBError, match="categorical"):
        PrototypeNB(observation="multinomial").fit(COUNTS, LABELS, TASKS)
    labels = LABELS.astype(float)
    labels[0] = np.nan
    with pytest.raises(CNBError, match="unlabelled documents"):
        NoSharingNB(observation="bernoulli", semi_supervised="em").fit(COUNTS, labels, TASKS)
    with pytest.raises(CNBError, match="observation must be one of"):
        NoSharingNB(observation="poisson").fit(COUNTS, LABELS, TASKS)


def test_mutual_information_of_the_lecture_notes_table():
    # "microsoft": present in 6 of 450 documents of one class and 107 of 450 of the other.
    present = np.zeros((900, 1))
    present[:6] = 1
    present[450:557] = 1
    labels = np.repeat([0, 1], 450)
    assert mutual_information(present, labels)[0] == pytest.approx(0.0984, abs=5e-5)
    # The notes' 0.095: add-one smoothing of the joint cells and, separately, the marginals.
    cells = np.array([[7, 108], [445, 344]]) / 904
    marginal_x = np.array([114, 788]) / 902
    marginal_y = np.array([451, 451]) / 902
    smoothed = (cells * np.log2(cells / np.outer(marginal_x, marginal_y))).sum()
    assert smoothed == pytest.approx(0.095, abs=5e-4)
    both = np.column_stack([present[:, 0], np.ones(900)])
    assert select_by_mutual_information(both, labels, 1).tolist() == [0]


def test_vocabulary_and_tokenizer():
    vocabulary = Vocabulary(min_df=2).fit(["Spam, spam!", "spam and eggs", "eggs"])
    assert vocabulary.words_ == ("eggs", "spam")
    assert vocabulary.transform(["EGGS eggs ham"]).toarray().tolist() == [[2, 0]]
    assert default_tokenizer("Don't e-mail ME!") == ["don", "t", "e", "mail", "me"]
    custom = Vocabulary(tokenizer=str.split).fit(["a-b c"])
    assert custom.words_ == ("a-b", "c")


def test_a_large_sparse_corpus_is_never_densified():
    """30 000 documents × 20 000 words, 6 users, Clustered NB (BHC) fit and 2 000 predictions.

    Measured peak of traced allocations (tracemalloc, numpy included): 66 MB with the
    Bernoulli model, 29 MB with the multinomial one; bound 250 MB. Densifying the matrix
    alone would take 4.8 GB.
    """
    rng = np.random.default_rng(1)
    n_docs, n_words, per_doc = 30_000, 20_000, 30
    rows = np.repeat(np.arange(n_docs), per_doc)
    columns = rng.integers(0, n_words, n_docs * per_doc)
    X = sparse.csr_matrix(
        (np.ones(rows.size, dtype=np.int64), (rows, columns)), shape=(n_docs, n_words)
    )
    y = rng.integers(0, 2, n_docs)
    tasks = rng.integers(0, 6, n_docs)
    for observation in ("bernoulli", "multinomial"):
        tracemalloc.start()
        model = ClusteredNB(inference="bhc", observation=observation).fit(X, y, tasks)
        proba = model.predict_proba(X[:2000], tasks[:2000])
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        assert proba.shape == (2000, 2) and np.isfinite(proba).all()
        assert peak < 250e6, f"{observation}: peak {peak / 1e6:.0f} MB"


def _corpus(seed: int = 0) -> pd.DataFrame:
    """Two kinds of users: for one, 'cheap' marks spam; for the other, 'meeting' does."""
    rng = np.random.default_rng(seed)
    rows = []
    for user in range(6):
        marker = "cheap" if user < 3 else "meeting"
        for _ in range(40):
            label = int(rng.random() < 0.5)
            words = list(rng.choice(["hello", "report", "today", "soon", "team"], size=5))
            if label == 1 or rng.random() < 0.1:
                words.append(marker)
            rows.append({"user": f"u{user}", "spam": label, "body": " ".join(words)})
    return pd.DataFrame(rows)


def test_transfer_protocol_on_documents(tmp_path):
    from clusterednb.evaluation import TransferSettings, run_transfer
    from clusterednb.evaluation.datasets import from_frame

    dataset = from_frame(_corpus(), "user", "spam", text="body", name="toy-spam")
    assert dataset.features == [] and list(dataset.frame.columns) == ["task", "label", "body"]
    settings = TransferSettings(
        models=("ns", "cnb-bhc", "lr-task", "lr-pooled", "lr-hier"),
        ks=(2, 8),
        repeats=1,
        n_targets=3,
    )
    summary = run_transfer(dataset, settings, tmp_path, progress=False)
    assert set(summary["model"]) == set(settings.models)
    cnb = summary[(summary["model"] == "cnb-bhc") & (summary["k"] == 8)]["auc_mean"].iloc[0]
    assert cnb > 0.8


@pytest.mark.parametrize("name", ["enron-spam", "multidomain-sentiment"])
def test_document_data_set_adapters_never_read_leaking_columns(name):
    from pathlib import Path

    from clusterednb.evaluation.datasets import load_dataset

    folder = Path(__file__).resolve().parents[3] / "shared" / "data"
    if not (folder / name).exists():
        pytest.skip(f"{name} is not in {folder}")
    dataset = load_dataset(name, folder)
    assert list(dataset.frame.columns) == ["task", "label", "text"]
    assert dataset.text == "text" and dataset.features == []
    assert set(dataset.frame["label"].unique()) == {0, 1}

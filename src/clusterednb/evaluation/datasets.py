"""Adapters for the real multi-task data sets (read from a folder; nothing is copied).

Each adapter returns an :class:`EvalDataset`: a long-format frame with a task column, a
0/1 label column and feature columns, plus which features are continuous (those are
discretised by quantiles fitted on each split's training rows only).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from clusterednb.exceptions import DataError


@dataclass(frozen=True)
class EvalDataset:
    """A multi-task classification data set ready for the protocols.

    Attributes
    ----------
    name : str
    frame : DataFrame
        Columns ``task``, ``label`` (0/1) and the features.
    features : list of str
    continuous : list of str
        Features to discretise per split (quantile bins on training rows).
    n_bins : int
        Bins per continuous feature.
    text : str, optional
        A column of documents: the models then see a bag of words built from each split's
        training documents only (``features`` is empty).

    Examples
    --------
    >>> frame = pd.DataFrame({"task": ["ann", "bob"], "label": [1, 0], "colour": ["red", "blue"]})
    >>> EvalDataset("colours", frame, ["colour"]).features
    ['colour']
    """

    name: str
    frame: pd.DataFrame
    features: list[str]
    continuous: list[str] = field(default_factory=list)
    n_bins: int = 5
    text: str | None = None


def _require(path: Path) -> Path:
    if not path.exists():
        raise DataError(f"data file not found: {path} (pass --data-dir with the data sets)")
    return path


def load_landmine(data_dir: Path) -> EvalDataset:
    """Landmine detection: 29 fields (tasks), 9 continuous radar features, 6 % positive.

    Examples
    --------
    The file it reads, ``landmine/landmine.csv.gz``, has columns ``task``, ``label`` and
    ``f1`` … ``f9``:

    >>> from clusterednb.examples import models as toy
    >>> folder = toy.scratch_file("data")
    >>> (folder / "landmine").mkdir(parents=True)
    >>> radar = {f"f{i}": [0.5, 0.7] for i in range(1, 10)}
    >>> pd.DataFrame({"task": [1, 1], "label": [0, 1], **radar}).to_csv(
    ...     folder / "landmine" / "landmine.csv.gz", index=False)
    >>> dataset = load_landmine(folder)
    >>> dataset.continuous == dataset.features, dataset.frame.shape
    (True, (2, 11))
    """
    frame = pd.read_csv(_require(data_dir / "landmine" / "landmine.csv.gz"))
    features = [f"f{i}" for i in range(1, 10)]
    return EvalDataset("landmine", frame[["task", "label", *features]], features, features)


def load_computer_survey(data_dir: Path) -> EvalDataset:
    """Computer survey: 180 people, 13 binary attributes, like = rating ≥ 5.

    Examples
    --------
    >>> from clusterednb.examples import models as toy
    >>> folder = toy.scratch_file("data")
    >>> (folder / "computer-survey").mkdir(parents=True)
    >>> names = ["TE", "RAM", "SC", "CPU", "HD", "CD", "CA", "CO", "AV", "WA", "SW", "GU", "PR"]
    >>> pd.DataFrame({"person": [7, 7], "rating": [9, 2], **{n: [1, -1] for n in names}}).to_csv(
    ...     folder / "computer-survey" / "computer_survey.csv.gz", index=False)
    >>> load_computer_survey(folder).frame[["task", "label", "RAM"]].values.tolist()
    [[7, 1, 1], [7, 0, -1]]
    """
    raw = pd.read_csv(_require(data_dir / "computer-survey" / "computer_survey.csv.gz"))
    features = ["TE", "RAM", "SC", "CPU", "HD", "CD", "CA", "CO", "AV", "WA", "SW", "GU", "PR"]
    frame = raw[features].copy()
    frame.insert(0, "label", (raw["rating"] >= 5).astype(int))
    frame.insert(0, "task", raw["person"])
    return EvalDataset("computer-survey", frame, features)


def load_movielens(data_dir: Path) -> EvalDataset:
    """MovieLens-100k (internal use only): 943 users; genres, decade, popularity; like = ≥ 4.

    Popularity is the item's number of ratings in the whole file, in four quartile buckets
    (a property of the catalogue, not of the user being predicted).

    Examples
    --------
    >>> load_movielens(Path("no-such-folder"))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    clusterednb.exceptions.DataError: data file not found: no-such-folder/movielens-100k/...
    """
    folder = data_dir / "movielens-100k"
    ratings = pd.read_csv(
        _require(folder / "u.data.gz"),
        sep="\t",
        header=None,
        names=["user", "item", "rating", "ts"],
    )
    genres = [
        line.split("|")[0] for line in (folder / "u.genre").read_text().splitlines() if line.strip()
    ]
    items = pd.read_csv(
        folder / "u.item.gz",
        sep="|",
        header=None,
        encoding="latin-1",
        names=["item", "title", "release", "video", "url", *genres],
    )
    year = pd.to_datetime(items["release"], format="%d-%b-%Y", errors="coerce").dt.year
    items["decade"] = (year // 10 * 10).astype("Int64").astype(str).replace("<NA>", np.nan)
    popularity = ratings["item"].value_counts()
    items["popularity"] = pd.qcut(
        items["item"].map(popularity).fillna(0), 4, labels=["q1", "q2", "q3", "q4"]
    ).astype(str)
    merged = ratings.merge(items, on="item")
    genre_columns = [f"genre_{g}" for g in genres]
    frame = merged[genres].copy()
    frame.columns = genre_columns
    frame["decade"] = merged["decade"]
    frame["popularity"] = merged["popularity"]
    frame.insert(0, "label", (merged["rating"] >= 4).astype(int))
    frame.insert(0, "task", merged["user"])
    frame["item"] = merged["item"]  # not a feature: for the collaborative baselines
    return EvalDataset("movielens", frame, [*genre_columns, "decade", "popularity"])


def load_enron_spam(data_dir: Path) -> EvalDataset:
    """Enron-Spam: 6 mailboxes (tasks), ham (0) or spam (1), the message text only.

    The ``file`` and ``date`` columns are never read: they leak the label (file names say
    ham/spam; ham and spam come from different years).

    Examples
    --------
    >>> from clusterednb.examples import models as toy
    >>> folder = toy.scratch_file("data")
    >>> (folder / "enron-spam").mkdir(parents=True)
    >>> pd.DataFrame({"user": ["kaminski"], "label": [1], "text": ["cheap pills"],
    ...               "file": ["0001.spam.txt"], "date": ["2005"]}).to_csv(
    ...     folder / "enron-spam" / "enron_spam.csv.gz", index=False)
    >>> dataset = load_enron_spam(folder)
    >>> list(dataset.frame.columns), dataset.text  # no file name, no date
    (['task', 'label', 'text'], 'text')
    """
    raw = pd.read_csv(
        _require(data_dir / "enron-spam" / "enron_spam.csv.gz"),
        usecols=["user", "label", "text"],
        keep_default_na=False,
    )
    frame = pd.DataFrame({"task": raw["user"], "label": raw["label"], "text": raw["text"]})
    return EvalDataset("enron-spam", frame, [], text="text")


def load_multidomain_sentiment(data_dir: Path) -> EvalDataset:
    """Multi-domain sentiment: 4 product domains (tasks), positive (1) or negative (0).

    The documents are the title and the review body; ``rating`` defines the label and is
    never read.

    Examples
    --------
    >>> from clusterednb.examples import models as toy
    >>> folder = toy.scratch_file("data")
    >>> (folder / "multidomain-sentiment").mkdir(parents=True)
    >>> pd.DataFrame({"domain": ["books"], "label": [1], "rating": [5], "title": ["Great"],
    ...               "review_text": ["Read it twice."]}).to_csv(
    ...     folder / "multidomain-sentiment" / "reviews.csv.gz", index=False)
    >>> [text.splitlines() for text in load_multidomain_sentiment(folder).frame["text"]]
    [['Great', 'Read it twice.']]
    """
    raw = pd.read_csv(
        _require(data_dir / "multidomain-sentiment" / "reviews.csv.gz"),
        usecols=["domain", "label", "title", "review_text"],
        keep_default_na=False,
    )
    frame = pd.DataFrame(
        {
            "task": raw["domain"],
            "label": raw["label"],
            "text": raw["title"] + "\n" + raw["review_text"],
        }
    )
    return EvalDataset("multidomain-sentiment", frame, [], text="text")


LOADERS = {
    "landmine": load_landmine,
    "computer-survey": load_computer_survey,
    "movielens": load_movielens,
    "enron-spam": load_enron_spam,
    "multidomain-sentiment": load_multidomain_sentiment,
}


def load_dataset(name: str, data_dir: str | Path) -> EvalDataset:
    """Load a real data set by name from ``data_dir`` (the folder holding the data sets).

    Examples
    --------
    >>> load_dataset("iris", "../shared/data")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    clusterednb.exceptions.DataError: unknown data set 'iris'; known: ['computer-survey', ...]
    """
    if name not in LOADERS:
        raise DataError(f"unknown data set {name!r}; known: {sorted(LOADERS)}")
    return LOADERS[name](Path(data_dir))


def from_frame(
    frame: pd.DataFrame,
    task: str,
    label: str,
    features: list[str] | None = None,
    continuous: list[str] | None = None,
    name: str = "data",
    text: str | None = None,
) -> EvalDataset:
    """An :class:`EvalDataset` from any long-format frame with a binary label.

    With ``text``, that column holds documents and is the only input of the models. The
    label becomes 0/1: 1 for the larger of its two values (in sorted order).

    Examples
    --------
    >>> frame = pd.DataFrame({"user": ["ann", "ann", "bob"], "liked": ["yes", "no", None],
    ...                       "colour": ["red", "blue", "red"]})
    >>> dataset = from_frame(frame, task="user", label="liked")
    >>> dataset.features, dataset.frame["label"].tolist()
    (['colour'], [1.0, 0.0, nan])
    """
    if text is not None:
        if text not in frame.columns:
            raise DataError(f"text column {text!r} not found")
        features = []
    else:
        features = features or [c for c in frame.columns if c not in (task, label)]
    labels = frame[label]
    classes = sorted(labels.dropna().unique().tolist())
    if len(classes) != 2:
        raise DataError(f"the transfer protocol needs a binary label; {label!r} has {classes}")
    out = frame[[*features, *([text] if text else [])]].copy()
    out.insert(0, "label", (labels == classes[1]).astype(int).where(labels.notna()))
    out.insert(0, "task", frame[task].to_numpy())
    return EvalDataset(name, out, features, continuous or [], text=text)

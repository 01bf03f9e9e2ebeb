"""What naive Bayes's screen costs: a ``ClusteredNB`` fit with ``relevance="auto"`` (the
default, which screens the columns) against the same fit with ``relevance=False``, on every
labelled row of a data set, and the screen alone (``relevance_screen.screened``) inside the
first.

Fits alternate (auto, plain) in one interpreter after one untimed fit of each; the medians
and their ratio are printed. Run the script with ``PYTHONPATH=<worktree>/src`` to time
another commit.

``--dataset`` may also be a CSV file with ``--task`` and ``--label`` (the simulated
organisation: ``cnb meeting simulate -o DIR``, then ``--dataset DIR/requests.csv --task user
--label accepted``); its columns are read as the estimator reads them.

Usage: python benchmarks/bench_screen.py [--dataset landmine] [--inference bhc]
       [--repeats 15] [--data-dir ../shared/data] [--task user --label accepted]
"""

from __future__ import annotations

import argparse
import platform
import statistics
import time
from datetime import date


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default="landmine")
    parser.add_argument("--inference", default="bhc")
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--data-dir", default="../shared/data")
    parser.add_argument("--task", default="user", help="a CSV's task column")
    parser.add_argument("--label", default="accepted", help="a CSV's label column")
    args = parser.parse_args()

    import pandas as pd

    from clusterednb import ClusteredNB
    from clusterednb.evaluation.datasets import load_dataset
    from clusterednb.evaluation.transfer import discretised
    from clusterednb.inference import relevance_screen
    from clusterednb.naive_bayes import engines

    if args.dataset.endswith(".csv"):
        table = pd.read_csv(args.dataset)
        train = table[table[args.label].notna()]
        X = train.drop(columns=[args.task, args.label])
        y, tasks = train[args.label], train[args.task]
    else:
        dataset = load_dataset(args.dataset, args.data_dir)
        frame = dataset.frame[dataset.frame["label"].notna()]
        train, _ = discretised(dataset, frame, frame.iloc[:1])
        X, y, tasks = train[dataset.features], train["label"], train["task"]

    screen_seconds: list[float] = []
    screened = engines.screened

    def timed_screen(*arguments, **keywords):
        start = time.perf_counter()
        answer = screened(*arguments, **keywords)
        screen_seconds.append(time.perf_counter() - start)
        return answer

    engines.screened = timed_screen  # the engines' own reference, timed

    def fit(relevance) -> float:
        model = ClusteredNB(inference=args.inference, relevance=relevance, random_state=0)
        start = time.perf_counter()
        model.set_params(progress=False).fit(X, y, tasks)
        return time.perf_counter() - start

    fit("auto"), fit(False)  # compiled kernels loaded
    screen_seconds.clear()
    auto, plain = [], []
    for _ in range(args.repeats):
        auto.append(fit("auto"))
        plain.append(fit(False))
    print(f"{platform.node()} · {platform.processor() or platform.machine()} · {date.today()}")
    print(f"{args.dataset}, {len(train)} rows, inference={args.inference!r}:")
    print(f"  relevance='auto'  {statistics.median(auto) * 1e3:.2f} ms")
    print(f"  relevance=False   {statistics.median(plain) * 1e3:.2f} ms")
    print(f"  the screen alone  {statistics.median(screen_seconds) * 1e3:.2f} ms")
    print(f"  auto / False      {statistics.median(auto) / statistics.median(plain):.2f}")
    assert relevance_screen.screened is screened  # the module itself untouched


if __name__ == "__main__":
    main()

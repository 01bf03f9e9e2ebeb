"""One ``cnb-logistic`` fit of protocol T, timed: the harness's split of one target, fitted and
predicted as ``cnb evaluate --kind cnb-logistic`` does (settings chosen on the training tasks;
on a data set of documents, such as ``enron-spam``, the model on word counts).

Each timing runs in its own interpreter with ``OPENBLAS_NUM_THREADS`` set to ``--threads``
(one by default: evaluation workers compute with one thread each). ``--baseline DIR`` times
the same split with ``PYTHONPATH=DIR`` (e.g. a worktree of an earlier commit's ``src``),
alternating the two versions, and prints the ratio of the medians. Each repetition also times
the peer, scikit-learn's pooled ``LogisticRegression`` with a one-hot of the task on the same
rows and columns (``lr-pooled+raw``: the bins' one-hot and the raw numbers, as the model
reads them), and prints the ratio model / peer; ``--peer KIND`` times another kind of the
harness instead (``lgbm-pooled``: LightGBM, the tree a practitioner tries first); ``--kind``
times another kind in place of ``cnb-logistic`` (``cnb-hgb``, ``cnb-lgbm``: a
``ClusteredLearner``).
``--beside`` runs that many copies at once, to show what sharing the cores costs. ``--warm``
times each fit (model and peer alike) after the same fit once untimed in its interpreter: the
cost of a worker's later splits, without the first call's loading of compiled kernels (about
0.2 s).

Usage: python benchmarks/bench_clustered_logistic.py [--dataset landmine] [--k 128]
       [--target 0] [--repeats 3] [--threads 1] [--beside 1] [--warm] [--baseline DIR]
       [--peer lgbm-pooled] [--kind cnb-hgb]
       [--data-dir ../shared/data]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

PEER = "lr-pooled+raw"


def run_one(
    dataset_name: str,
    data_dir: str,
    k: int,
    target_position: int,
    model: str = "cnb-logistic",
    warm: bool = False,
) -> dict:
    """Fit and predict once; the seconds and the test AUC. ``warm``: the same fit is run once
    before, untimed, in this interpreter (as in an evaluation worker's second split: the
    compiled kernels loaded, the first-call costs paid)."""
    import numpy as np
    import pandas as pd
    from sklearn.metrics import roc_auc_score

    from clusterednb.evaluation.datasets import load_dataset
    from clusterednb.evaluation.models.registry import fit_predict
    from clusterednb.evaluation.transfer import discretised

    dataset = load_dataset(dataset_name, data_dir)
    frame = dataset.frame[dataset.frame["label"].notna()]
    target = sorted(frame["task"].unique())[target_position]
    own = frame[frame["task"] == target]
    order = own.index.to_numpy()[np.random.default_rng(0).permutation(len(own))]
    train = pd.concat([frame[frame["task"] != target], frame.loc[order[:k]]])
    train, test = discretised(dataset, train, frame.loc[order[k:]])
    if warm:
        fit_predict(
            model, train, test, dataset.features, 0, text=dataset.text, n_bins=dataset.n_bins
        )
    start = time.perf_counter()
    p1 = fit_predict(
        model, train, test, dataset.features, 0, text=dataset.text, n_bins=dataset.n_bins
    )
    seconds = time.perf_counter() - start
    return {"seconds": seconds, "auc": roc_auc_score(test["label"].astype(int), p1)}


def launch(
    args: argparse.Namespace, pythonpath: str | None, model: str = "cnb-logistic"
) -> list[subprocess.Popen]:
    env = dict(os.environ, OPENBLAS_NUM_THREADS=str(args.threads))
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    command = [sys.executable, __file__, "--one", args.dataset, args.data_dir, str(args.k)]
    command += [str(args.target), model, "warm" if args.warm else "cold"]
    return [
        subprocess.Popen(command, stdout=subprocess.PIPE, text=True, env=env)
        for _ in range(args.beside)
    ]


def measure(args: argparse.Namespace, pythonpath: str | None, model: str = "cnb-logistic") -> dict:
    """Run ``--beside`` copies at once; the first copy's result."""
    processes = launch(args, pythonpath, model)
    outputs = [process.communicate()[0] for process in processes]
    if any(process.returncode for process in processes):
        raise SystemExit("a timed fit failed")
    return json.loads(outputs[0].strip().splitlines()[-1])


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--one":
        dataset, data_dir, k, target, model, warmth = sys.argv[2:8]
        result = run_one(dataset, data_dir, int(k), int(target), model, warmth == "warm")
        print(json.dumps(result))
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default="landmine")
    parser.add_argument("--data-dir", default="../shared/data")
    parser.add_argument("--k", type=int, default=128)
    parser.add_argument("--target", type=int, default=0)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--beside", type=int, default=1)
    parser.add_argument(
        "--warm", action="store_true", help="time each fit after an untimed one in its process"
    )
    parser.add_argument("--baseline", help="PYTHONPATH of the code to compare with")
    parser.add_argument(
        "--kind", default="cnb-logistic", help="the harness kind timed (default cnb-logistic)"
    )
    parser.add_argument(
        "--peer", default=PEER, help=f"the harness kind timed beside it (default {PEER})"
    )
    args = parser.parse_args()
    peer = args.peer
    versions = {"now": None, **({"baseline": args.baseline} if args.baseline else {})}
    seconds: dict[str, list[float]] = {name: [] for name in [*versions, peer]}
    for _ in range(args.repeats):
        for name, pythonpath in versions.items():
            result = measure(args, pythonpath, args.kind)
            seconds[name].append(result["seconds"])
            print(name, json.dumps(result), flush=True)
        result = measure(args, None, peer)
        seconds[peer].append(result["seconds"])
        print(peer, json.dumps(result), flush=True)
    medians = {name: statistics.median(times) for name, times in seconds.items()}
    print("median seconds:", json.dumps({k: round(v, 2) for k, v in medians.items()}))
    print(f"now / {peer}: {medians['now'] / medians[peer]:.2f}")
    if args.baseline:
        print(f"baseline / now: {medians['baseline'] / medians['now']:.2f}")


if __name__ == "__main__":
    main()

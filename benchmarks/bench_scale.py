"""How the engines grow with the number of users: time and peak memory at 10^4 .. 10^6.

Each (engine, size) runs in its own process, so its peak resident memory is its own:

- ``gibbs``: a Gibbs fit of one sweep (no split-merge), from building the sampler's state to
  the summarised result, on sparse counts drawn straight from rows
  (``bench_variational.planted_sparse``, ``fit_gibbs_sparse``);
- ``gibbs-2-threads``: the same with the sweep sharded over 2 threads (``n_jobs=2``);
- ``bhc-randomized``: randomised BHC with the flat merge of its cut, on dense per-user counts
  (``bench_clustered.planted_counts``);
- ``variational``: the variational engine (1 thread) on sparse counts drawn straight from
  rows (``bench_variational.planted_sparse``).

Planted population: 50 groups, 15 features x 7 values, 2 labels, 10 rows per user. Writes
``scale.csv`` and ``scale.png`` (log-log, one line per engine) into ``--out`` and prints a
Markdown table and each engine's fitted slope of log time on log users (1 = linear).

Usage: python benchmarks/bench_scale.py [--users 10000,100000,1000000] [--out DIR]
"""

from __future__ import annotations

import argparse
import gc
import json
import platform
import resource
import subprocess
import sys
import time
from datetime import date
from pathlib import Path

import numpy as np

ENGINES = ("gibbs", "gibbs-2-threads", "bhc-randomized", "variational")
HERE = Path(__file__).resolve().parent


def reset_peak_memory() -> None:
    """Start the process's peak resident memory afresh (Linux: ``clear_refs``), so that the
    peak read after a fit is the fit's, with its input resident, not the input's drawing."""
    gc.collect()
    Path("/proc/self/clear_refs").write_text("5")


def peak_memory_gb() -> float:
    """Peak resident memory since :func:`reset_peak_memory` (``VmHWM``), in GB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024 / 1e9
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6


def run_one(engine: str, n_users: int) -> dict:
    """Fit once in this process; return seconds, peak memory and recovery."""
    sys.path.insert(0, str(HERE))
    from sklearn.metrics import adjusted_rand_score

    rng = np.random.default_rng(1)
    if engine in ("variational", "gibbs", "gibbs-2-threads"):
        from bench_variational import planted_sparse, schema
        from clusterednb import DirichletNB

        task_counts, label_counts, group = planted_sparse(rng, n_users)
        if engine != "variational":  # counts as integers, as a user would hold them
            task_counts = task_counts.astype(np.int32)
        model = DirichletNB(schema())
        reset_peak_memory()
        start = time.perf_counter()
        if engine == "variational":
            from clusterednb.inference.variational.engine import fit_variational_sparse

            result = fit_variational_sparse(model, task_counts, label_counts, 1.0, rng)
        else:
            from clusterednb.inference.gibbs.engine import fit_gibbs_sparse
            from clusterednb.inference.gibbs.state import GibbsSettings

            jobs = 2 if engine == "gibbs-2-threads" else 1
            settings = GibbsSettings(n_sweeps=1, burn_in=0, split_merge_moves=0, n_jobs=jobs)
            result = fit_gibbs_sparse(model, task_counts, label_counts, 1.0, settings, rng)
    else:
        from bench_clustered import planted_counts
        from clusterednb.inference.bhc.engine import fit_bhc_randomized

        model, counts, group = planted_counts(rng, n_users, 50, rows_per_user=10)
        reset_peak_memory()
        start = time.perf_counter()
        result = fit_bhc_randomized(model, counts, 1.0, rng)
    seconds = time.perf_counter() - start
    return {
        "engine": engine,
        "users": n_users,
        "seconds": seconds,
        "peak_gb": peak_memory_gb(),
        "ari": adjusted_rand_score(group, result.partition),
        "clusters": int(result.partition.max()) + 1,
    }


def warm() -> None:
    """Compile (or load) every kernel once, so no measured run pays for it."""
    for engine in ENGINES:
        run_one(engine, 500)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", default="10000,100000,1000000")
    parser.add_argument("--out", type=Path, default=Path("scale-output"))
    parser.add_argument("--timeout", type=float, default=900, help="seconds per run")
    parser.add_argument("--one", nargs=2, metavar=("ENGINE", "USERS"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(run_one(args.one[0], int(args.one[1]))))
        return
    import pandas as pd

    sizes = [int(n) for n in args.users.split(",")]
    print(f"{date.today()} {platform.machine()}, Python {platform.python_version()}")
    subprocess.run(
        [
            sys.executable,
            "-c",
            f"import sys; sys.path.insert(0, {str(HERE)!r}); "
            "import bench_scale; bench_scale.warm()",
        ],
        check=True,
    )
    rows = []
    for engine in ENGINES:
        for n_users in sizes:
            command = [sys.executable, __file__, "--one", engine, str(n_users)]
            try:
                done = subprocess.run(
                    command, capture_output=True, text=True, timeout=args.timeout, check=True
                )
                rows.append(json.loads(done.stdout.strip().splitlines()[-1]))
            except subprocess.TimeoutExpired:
                rows.append({"engine": engine, "users": n_users, "seconds": np.nan})
            print(rows[-1], flush=True)
    table = pd.DataFrame(rows)
    args.out.mkdir(parents=True, exist_ok=True)
    table.to_csv(args.out / "scale.csv", index=False)
    print("| " + " | ".join(table.columns) + " |")
    print("|" + "---|" * len(table.columns))
    for row in table.itertuples(index=False):
        print("| " + " | ".join(f"{v:.3g}" if isinstance(v, float) else str(v) for v in row) + " |")
    for engine, part in table.dropna(subset=["seconds"]).groupby("engine"):
        if len(part) > 1:
            slope = np.polyfit(np.log10(part["users"]), np.log10(part["seconds"]), 1)[0]
            print(f"{engine}: time grows as users^{slope:.2f}")
    plot(table, args.out / "scale.png")


def plot(table, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    for engine, part in table.groupby("engine"):
        axes[0].plot(part["users"], part["seconds"], marker="o", label=engine)
        if "peak_gb" in part:
            axes[1].plot(part["users"], part["peak_gb"], marker="o", label=engine)
    for ax, label in zip(axes, ("seconds per fit", "peak resident memory (GB)"), strict=True):
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("users")
        ax.set_ylabel(label)
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=8)
    fig.suptitle("Scale: one Gibbs sweep, randomised BHC, variational (50 planted groups)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


if __name__ == "__main__":
    main()

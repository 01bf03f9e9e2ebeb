"""The built-in demonstration: the meeting assistant on a simulated organisation.

Simulates the default organisation (21 users in the thesis' 9 groups, with calendars and
pending invitations), fits No-Sharing, Complete-Sharing and Clustered NB (BHC and Gibbs),
and writes a thesis-style HTML report: the evidence table and log Bayes factors, the
recovered partition beside the true one, AUC against the number of a user's own labelled
requests, the asymmetric-loss sweep (its clustered models calibrated, as the assistant's are),
per-feature log-odds for two contrasting users, and one invitation decided by the assistant's
own model (BHC with calibrated probabilities) with its reply.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from sklearn.metrics import adjusted_rand_score

from clusterednb.evaluation.datasets import EvalDataset
from clusterednb.evaluation.plots import _pyplot, model_style, plot_coclustering
from clusterednb.evaluation.provenance import provenance
from clusterednb.evaluation.report import write_report
from clusterednb.evaluation.sweeps import run_loss_sweep
from clusterednb.evaluation.transfer import TransferSettings, run_transfer
from clusterednb.exceptions import CNBError
from clusterednb.meeting.assistant import decide, fit_from_frames
from clusterednb.meeting.directory import Directory
from clusterednb.meeting.explain import feature_log_odds
from clusterednb.meeting.features import FEATURE_NAMES, meeting_schema
from clusterednb.meeting.simulation.calendars import write_world
from clusterednb.meeting.simulation.organisation import simulate_organisation
from clusterednb.naive_bayes.clustered import ClusteredNB
from clusterednb.naive_bayes.estimator import TaskNaiveBayes
from clusterednb.naive_bayes.sharing import CompleteSharingNB, NoSharingNB

DEMO_MODELS = ("ns", "cs", "cnb-bhc", "cnb-gibbs", "cnb-logistic", "lr-pooled")
"""Protocol T's models (a calibration map would not change their rankings), the assistant's
own (``cnb-logistic``, what ``cnb meeting fit`` makes) among them."""
DEMO_DECISION_MODELS = (
    "ns",
    "cs",
    "cnb-bhc+sigmoid",
    "cnb-gibbs+sigmoid",
    "cnb-logistic",
    "lr-pooled",
)
"""Protocol A's models: decisions threshold probabilities, so the clustered naive-Bayes ones
are calibrated, as the assistant's are; the assistant's clustered logistic regression gives
its probabilities from regressions."""


def _fit_all(requests: pd.DataFrame, seed: int) -> dict[str, TaskNaiveBayes]:
    schema = meeting_schema()
    models: dict[str, TaskNaiveBayes] = {
        "No-Sharing": NoSharingNB(schema=schema),
        "Complete-Sharing": CompleteSharingNB(schema=schema),
        "Clustered (BHC)": ClusteredNB(inference="bhc", schema=schema),
        "Clustered (Gibbs)": ClusteredNB(
            inference="gibbs", schema=schema, random_state=seed, progress=False
        ),
    }
    for model in models.values():
        model.fit(requests[list(FEATURE_NAMES)], requests["accepted"], requests["user"])
    return models


def _evidence_table(models: dict[str, TaskNaiveBayes], truth: pd.DataFrame) -> pd.DataFrame:
    rows = []
    baseline = models["No-Sharing"].log_evidence_
    for name, model in models.items():
        row = {
            "model": name,
            "log_evidence": model.log_evidence_,
            "kind": model.evidence_kind_,
            "log_bayes_factor_vs_ns": model.log_evidence_ - baseline,
        }
        if isinstance(model, ClusteredNB):
            groups = truth.set_index("user").loc[model.task_ids_, "group"].to_numpy()
            row["n_clusters"] = int(model.partition_.max()) + 1
            row["adjusted_rand_index"] = adjusted_rand_score(groups, model.partition_)
        rows.append(row)
    return pd.DataFrame(rows)


def _partition_table(models: dict[str, TaskNaiveBayes], truth: pd.DataFrame) -> pd.DataFrame:
    table = truth.rename(columns={"group": "true_group"}).copy()
    for name in ("Clustered (BHC)", "Clustered (Gibbs)"):
        model = models[name]
        cluster = pd.Series(model.partition_, index=model.task_ids_)
        table[name] = cluster.loc[table["user"]].to_numpy()
    return table


def _plot_log_odds(contributions: dict[str, pd.Series], path: Path) -> None:
    plt = _pyplot()
    frame = pd.DataFrame(contributions).loc[list(FEATURE_NAMES)]
    fig, ax = plt.subplots(figsize=(7, 5))
    frame.plot.barh(ax=ax)
    ax.axvline(0, color="black", linewidth=0.8)
    ax.set_xlabel("log-odds of accepting contributed by the feature's value")
    ax.set_title("Same request, two users from different groups (Clustered NB, Gibbs)", fontsize=9)
    ax.invert_yaxis()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _plot_per_user_accuracy(splits: pd.DataFrame, path: Path) -> None:
    """Accuracy of every target user against k, one panel per model (thin lines per user,
    the mean thick)."""
    plt = _pyplot()
    models = [m for m in DEMO_MODELS if m in set(splits["model"])]
    fig, axes = plt.subplots(
        1, len(models), figsize=(3.2 * len(models), 3.4), sharey=True, squeeze=False
    )
    for ax, model in zip(axes[0], models, strict=True):
        rows = splits[splits["model"] == model]
        style = model_style(model)
        for _, user in rows.groupby("target"):
            user = user.groupby("k")["accuracy"].mean()
            ax.plot(user.index, user.to_numpy(), color=style["color"], alpha=0.45, linewidth=0.9)
        mean = rows.groupby("k")["accuracy"].mean()
        ax.plot(mean.index, mean.to_numpy(), linewidth=2.2, **style)
        ax.set_xscale("log", base=2)
        ax.set_title(model, fontsize=9)
        ax.set_xlabel("own answers k (requests)")
        ax.grid(alpha=0.3)
    axes[0][0].set_ylabel("accuracy on held-out requests")
    fig.suptitle("Per-user accuracy against the number of a user's answers", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    fig.savefig(path.with_suffix(".svg"))
    plt.close(fig)


def run_demo(
    seed: int = 0, out: str | Path = "demo-output", jobs: int = 2, image_format: str = "svg"
) -> Path:
    """Run the demonstration and write ``OUT/report.html``; return the report's path.

    ``image_format`` ("svg" or "png") is how the report embeds its figures.

    Examples
    --------
    The whole run takes a few minutes (``make demo``); a bad setting is refused before any work:

    >>> run_demo(image_format="gif")
    Traceback (most recent call last):
    ...
    clusterednb.exceptions.CNBError: image_format must be 'svg' or 'png', got 'gif'
    """
    if image_format not in ("svg", "png"):
        raise CNBError(f"image_format must be 'svg' or 'png', got {image_format!r}")
    started = time.perf_counter()
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    organisation, world = _simulate(np.random.default_rng(seed), out)
    truth, requests = organisation.truth, organisation.requests
    models = _fit_all(requests, seed)
    evidence = _evidence_table(models, truth)
    print("\n" + evidence.to_string(index=False, float_format=lambda v: f"{v:.2f}"))
    partitions = _partition_table(models, truth)
    _plot_partitions(models, truth, out)
    dataset = _meeting_dataset(requests)
    _run_protocols(dataset, out, seed, jobs)
    contrasting = [truth.loc[truth["group"] == 0, "user"].iloc[0]]
    contrasting.append(truth.loc[truth["role"] != "military", "user"].iloc[0])
    _plot_contrasting_users(models["Clustered (Gibbs)"], requests, truth, contrasting, out)
    assistant = fit_from_frames([requests], seed=seed)  # as `cnb meeting fit`
    decided = _decide_one(assistant, world, contrasting[1], out)
    report = write_report(
        out,
        "Meeting assistant: Clustered Naive Bayes demo",
        _report_sections(out, evidence, partitions, decided),
        provenance=provenance(
            "meeting requests (simulated organisation)", dataset.frame, seed, started
        ),
        dataset="the simulated organisation's meeting requests",
        image_format=image_format,
    )
    _prepare_service(out, world, assistant, contrasting, requests)
    print(f"\nReport: {report.resolve()} ({time.perf_counter() - started:.0f} s)")
    return report


def _simulate(rng: np.random.Generator, out: Path) -> tuple[Any, Path]:
    """The default organisation, written with calendars and pending invitations under ``out``."""
    organisation = simulate_organisation(rng)
    world = out / "organisation"
    organisation.write(world)
    truth, requests = organisation.truth, organisation.requests
    write_world(rng, world, list(truth["user"]), list(truth["role"]), n_pending=2)
    print(
        f"Simulated organisation: {len(truth)} users in {truth['group'].nunique()} groups, "
        f"{len(requests)} requests ({(requests['accepted'] == 'accept').mean():.0%} accepted); "
        f"data, calendars and pending invitations in {world}/"
    )
    return organisation, world


def _plot_partitions(models: dict[str, TaskNaiveBayes], truth: pd.DataFrame, out: Path) -> None:
    """Gibbs' co-clustering in the true groups' order, and BHC's beside its tree."""
    gibbs = models["Clustered (Gibbs)"]
    order = truth.set_index("user").loc[gibbs.task_ids_, "group"].to_numpy()
    plot_coclustering(
        gibbs.coclustering_,
        order,
        out / "demo_coclustering.png",
        "Gibbs co-clustering, users grouped by their TRUE group",
        labels=[str(user) for user in gibbs.task_ids_],
    )
    bhc = models["Clustered (BHC)"]
    plot_coclustering(
        bhc.coclustering_,
        bhc.partition_,
        out / "demo_bhc_tree.png",
        "BHC: co-clustering beside the tree, users in the tree's order",
        labels=[str(user) for user in bhc.task_ids_],
        tree=bhc.tree_,
    )


def _meeting_dataset(requests: pd.DataFrame) -> EvalDataset:
    """The requests as the evaluation harness reads a data set (task, label, features)."""
    frame = pd.concat(
        [
            requests[["user"]].rename(columns={"user": "task"}),
            (requests["accepted"] == "accept").astype(int).rename("label"),
            requests[list(FEATURE_NAMES)],
        ],
        axis=1,
    )
    return EvalDataset("meeting", frame, list(FEATURE_NAMES), [])


def _run_protocols(dataset: EvalDataset, out: Path, seed: int, jobs: int) -> None:
    """Protocol T (AUC against k, printed) and protocol A, then the per-user accuracy figure."""
    settings = TransferSettings(
        models=DEMO_MODELS, ks=(1, 2, 4, 8, 16, 32, 64), repeats=1, n_targets=8, seed=seed
    )
    transfer = run_transfer(dataset, settings, out, jobs=jobs, progress=False)
    print("\nAUC against k own labelled requests (8 target users):")
    print(
        transfer.pivot(index="model", columns="k", values="auc_mean").to_string(
            float_format=lambda v: f"{v:.3f}"
        )
    )
    run_loss_sweep(
        dataset, DEMO_DECISION_MODELS, out, repeats=3, seed=seed, jobs=jobs, progress=False
    )
    _plot_per_user_accuracy(
        pd.read_csv(out / "transfer_splits.csv"), out / "demo_per_user_accuracy.png"
    )


def _plot_contrasting_users(
    gibbs: TaskNaiveBayes,
    requests: pd.DataFrame,
    truth: pd.DataFrame,
    contrasting: list[str],
    out: Path,
) -> None:
    """The first request as two users of different groups see it: per-feature log-odds."""
    request_row = requests.iloc[[0]][list(FEATURE_NAMES)]
    roles = truth.set_index("user")["role"]
    contributions = {
        f"{user} ({roles.loc[user]})": feature_log_odds(gibbs, request_row, user, "accept")
        for user in contrasting
    }
    _plot_log_odds(contributions, out / "demo_log_odds.png")


def _decide_one(assistant: Any, world: Path, user: str, out: Path) -> tuple[str, str]:
    """One of ``user``'s pending invitations decided by the assistant's model (a false
    decline 4× worse), its reply and the model written; the invitation and the summary."""
    candidates = (world / "pending" / user).glob("request-*.ics")
    pending = sorted(p for p in candidates if p.stem.removeprefix("request-").isdigit())[0]
    decision = decide(
        assistant,
        pending,
        user,
        world / "calendars" / f"{user}.ics",
        Directory.from_json(world / "directory.json"),
        cost_false_accept=1.0,
        cost_false_decline=4.0,
    )
    reply_path = world / "replies" / f"{user}-{pending.stem}-reply.ics"
    reply_path.parent.mkdir(exist_ok=True)
    reply_path.write_bytes(decision.reply)
    model_path = out / "model.cnb"
    assistant.save(model_path)
    print(f"\nInvitation {pending.relative_to(out)} for {user} (false decline 4× worse):")
    print(decision.summary())
    print(f"the reply to mail the organiser: {reply_path.relative_to(out)}")
    print(
        f"the assistant's model: {model_path} (cnb meeting decide/learn/sync --model, "
        f"cnb serve --model)"
    )
    return f"Invitation {pending.name} for {user}", decision.summary()


def _report_sections(
    out: Path, evidence: pd.DataFrame, partitions: pd.DataFrame, decided: tuple[str, str]
) -> list[tuple[str, str, pd.DataFrame | None, list[Path]]]:
    """The demo's own sections of the report (title, words, table, figures)."""
    invitation, summary = decided
    return [
        (
            "Evidence and recovered groups",
            "Log evidence of all requests under each model (exact for No-Sharing and "
            "Complete-Sharing; lower bounds for Clustered NB), log Bayes factors against "
            "No-Sharing, and the adjusted Rand index of the MAP partition against the "
            "simulation's true groups.",
            evidence,
            [],
        ),
        (
            "Partitions",
            "Each user's true group beside the clusters found (cluster numbers are arbitrary).",
            partitions,
            [out / "demo_coclustering.png", out / "demo_bhc_tree.png"],
        ),
        (
            "Accuracy per user",
            "How well the assistant predicts each of the 8 target users' held-out requests "
            "as they answer more of their own (protocol T's splits below, user by user).",
            None,
            [out / "demo_per_user_accuracy.png"],
        ),
        (
            "Why: per-feature log-odds for two users",
            "The same request seen by two users of different groups: each feature value's "
            "contribution to the log-odds of accepting (thesis Fig. 4-2).",
            None,
            [out / "demo_log_odds.png"],
        ),
        (
            "One decision",
            f"{invitation}, decided by the model cnb meeting fit "
            "makes (the clustered logistic regression, saved as model.cnb); a false decline "
            "costs 4 times a false accept.\n" + summary,
            None,
            [],
        ),
    ]


def _prepare_service(
    out: Path, world: Path, model: Any, users: list[str], history: pd.DataFrame
) -> None:
    """A service store for ``make serve``: the organisation's answers as its learning data,
    two demo users with tokens, their calendars and their pending invitations decided by the
    model of those answers."""
    from clusterednb.meeting.invitation import read_calendar
    from clusterednb.service.intake import receive_invitation
    from clusterednb.service.store import ServiceStore

    store_path = out / "service.db"
    for leftover in (
        store_path,
        *(store_path.with_name(store_path.name + s) for s in ("-wal", "-shm")),
    ):
        leftover.unlink(missing_ok=True)
    directory = Directory.from_json(world / "directory.json")
    lines = []
    with ServiceStore(store_path) as store:
        store.import_history(
            [
                (row["user"], {n: row[n] for n in FEATURE_NAMES}, row["accepted"] == "accept")
                for _, row in history.iterrows()
            ]
        )
        for user in users:
            entry = directory.user(user)
            token = store.add_user(user, entry.email, cost_false_accept=1.0, cost_false_decline=4.0)
            lines.append(f"{user}\t{token}")
            store.set_calendar(user, (world / "calendars" / f"{user}.ics").read_bytes())
            who = store.authenticate(token)
            for path in sorted((world / "pending" / user).glob("request-*.ics")):
                if path.stem.removeprefix("request-").isdigit():
                    data = path.read_bytes()
                    receive_invitation(store, model, directory, who, read_calendar(data), data)
    tokens = out / "service-tokens.txt"
    tokens.touch(mode=0o600)
    tokens.chmod(0o600)  # the tokens and the store are secrets: readable by their owner only
    tokens.write_text("\n".join(lines) + "\n")
    for path in (
        store_path,
        *(store_path.with_name(store_path.name + s) for s in ("-wal", "-shm")),
    ):
        if path.exists():
            path.chmod(0o600)
    print(
        f"\nThe service, on this organisation: `make serve` (or `cnb serve --store {store_path} "
        f"--directory {world / 'directory.json'}`; its {len(history)} answers are in the store), "
        "then sign in "
        f"at http://127.0.0.1:8000/login with a token of {out / 'service-tokens.txt'} "
        f"({', '.join(users)}; their pending invitations are waiting)."
    )

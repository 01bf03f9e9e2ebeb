"""Files and numbers of the estimators as commit 2510d9c (before issue 48's second step) saves
and predicts them: tests/data/v3-*.cnb and v3-expected.json."""

import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd

import clusterednb as cnb


def v3_models() -> dict:
    """The estimators the files hold, unfitted, by file name (the test fits them again)."""
    return {
        "nosharing": cnb.NoSharingNB(),
        "completesharing": cnb.CompleteSharingNB(),
        "clustered-bhc": cnb.ClusteredNB(inference="bhc", random_state=0, progress=False),
        "clustered-gibbs": cnb.ClusteredNB(inference="gibbs", random_state=0, progress=False),
        "clustered-variational": cnb.ClusteredNB(
            inference="variational", random_state=0, progress=False
        ),
        "prototype": cnb.PrototypeNB(random_state=0),
        "clustered-logistic": cnb.ClusteredLogisticRegression(random_state=0),
    }


def main(out: Path) -> None:
    """Fit, save and predict every estimator of :func:`v3_models`; write the expected numbers."""
    rng = np.random.default_rng(7)
    n_tasks, n_rows = 8, 24
    tasks = np.repeat([f"u{i}" for i in range(n_tasks)], n_rows)
    group = np.repeat(np.arange(n_tasks) % 2, n_rows)
    colour = rng.choice(["red", "blue", "green"], size=tasks.size)
    hour = rng.uniform(8, 18, size=tasks.size).round(2)
    logit = np.where(group == 0, 1.5, -1.5) * (colour == "red") + 0.3 * (hour - 13)
    y = np.where(rng.uniform(size=tasks.size) < 1 / (1 + np.exp(-logit)), "yes", "no")
    frame = pd.DataFrame({"colour": colour, "hour": hour})
    X_test = pd.DataFrame(
        {"colour": ["red", "blue", "green", "red"], "hour": [9.5, 12.0, 16.25, 17.5]}
    )
    t_test = ["u0", "u1", "u5", "new"]
    expected = {}
    for name, model in v3_models().items():
        model.fit(frame, y, tasks)
        model.save(out / f"v3-{name}.cnb")
        expected[name] = {
            "proba": model.predict_proba(X_test, t_test).tolist(),
            "log_evidence": float(getattr(model, "log_evidence_", float("nan"))),
        }
    # an integer-coded array, as the speed benchmark reads it
    codes = rng.integers(0, 7, size=(400, 5))
    labels = rng.integers(0, 2, size=400)
    groups = rng.integers(0, 10, size=400)
    array_model = cnb.CompleteSharingNB().fit(codes, labels, groups)
    expected["integer-array"] = {
        "proba": array_model.predict_proba(codes[:6], groups[:6]).tolist(),
        "log_evidence": float(array_model.log_evidence_),
    }
    (out / "v3-expected.json").write_text(
        json.dumps(
            {
                "commit": "2510d9c",
                "train": {
                    "colour": colour.tolist(),
                    "hour": hour.tolist(),
                    "y": y.tolist(),
                    "tasks": tasks.tolist(),
                },
                "X": X_test.to_dict(orient="list"),
                "tasks": t_test,
                "codes": {"X": codes.tolist(), "y": labels.tolist(), "tasks": groups.tolist()},
                "expected": expected,
            },
            indent=1,
        )
    )
    print("written", sorted(expected))


if __name__ == "__main__":
    main(Path(sys.argv[1]))

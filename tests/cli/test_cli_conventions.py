"""One command line: the same flags everywhere, JSON output, exit codes, a light start."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from clusterednb.cli import build_parser, main
from clusterednb.data.synthetic import make_planted_population
from clusterednb.exceptions import DataError
from clusterednb.progress import LogProgress
from clusterednb.version import __version__

HEAVY = ("sklearn", "numba", "matplotlib", "pandas", "scipy")


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    population = make_planted_population(
        np.random.default_rng(0), group_sizes=(3, 3), rows_per_task=24, n_features=3
    )
    frame = population.frame.rename(columns={"task": "user"})
    frame["label"] = np.where(frame["label"] == 1, "accept", "decline")
    frame.insert(0, "row", [f"r{i}" for i in range(len(frame))])
    path = tmp_path_factory.mktemp("conventions") / "data.csv"
    frame.to_csv(path, index=False)
    return path


def test_help_and_version_import_nothing_heavy():
    listing = (
        "import sys, contextlib, io\n"
        "from clusterednb.cli import build_parser\n"
        "p = build_parser()\n"
        "for c in (['fit'], ['predict'], ['evidence'], ['evaluate'], ['demo'],"
        " ['meeting', 'decide'], ['meeting', 'fit']):\n"
        "    with contextlib.redirect_stdout(io.StringIO()):\n"
        "        try: p.parse_args([*c, '--help'])\n"
        "        except SystemExit: pass\n"
        f"print(sorted({{m.split('.')[0] for m in sys.modules}} & set({HEAVY!r})))\n"
    )
    result = subprocess.run([sys.executable, "-c", listing], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"
    version = subprocess.run(
        [sys.executable, "-m", "clusterednb.cli", "--version"], capture_output=True, text=True
    )
    assert version.stdout.strip() == f"cnb {__version__}"


def _fit(data, tmp_path, *extra):
    model = tmp_path / "m.cnb"
    args = ["fit", str(data), "--task", "user", "--label", "label", "--features", "f0,f1"]
    return main([*args, "--features", "f2", "-o", str(model), *extra]), model


def test_json_on_fit_predict_and_output_to_stdout(data, tmp_path, capsys):
    status, model = _fit(data, tmp_path, "--kind", "cnb-bhc", "--json")
    assert status == 0
    fitted = json.loads(capsys.readouterr().out)
    assert fitted["kind"] == "cnb-bhc" and fitted["tasks"] == 6 and fitted["clusters"] >= 1
    costs = ["--cost-false-positive", "1", "--cost-false-negative", "9"]
    predict = ["predict", str(model), str(data), "--task", "user", "--id", "row"]
    assert main([*predict, "-o", "-", *costs]) == 1  # accept/decline: which is positive?
    assert "--pos-label" in capsys.readouterr().err
    assert main([*predict, "-o", "-", *costs, "--pos-label", "accept"]) == 0
    captured = capsys.readouterr()
    table = pd.read_csv(pd.io.common.StringIO(captured.out))
    assert list(table.columns[:2]) == ["row", "user"] and len(table) == 144
    assert "wrote 144 predictions" in captured.err
    # a false decline costs 9 times a false accept: accept above P = 0.1
    expected = np.where(table["p_accept"] > 0.1, "accept", "decline")
    np.testing.assert_array_equal(table["decision"], expected)
    assert main([*predict, "-o", str(tmp_path / "p.csv"), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["rows"] == 144 and sum(summary["decisions"].values()) == 144
    assert main(["fit", str(data), "--task", "user", "--label", "label", "-o", "-"]) == 1
    assert "not -" in capsys.readouterr().err


def test_old_spellings_still_work_with_a_warning(data, tmp_path, capsys):
    model = tmp_path / "m.cnb"
    args = ["fit", str(data), "--task", "user", "--label", "label", "--model", "cs"]
    assert main([*args, "-o", str(model)]) == 0
    assert "--model is deprecated" in capsys.readouterr().err
    predict = ["predict", str(model), str(data), "--task", "user", "-o", str(tmp_path / "p.csv")]
    assert main([*predict, "--cost-fp", "2", "--pos-label", "accept"]) == 0
    assert "--cost-fp is deprecated" in capsys.readouterr().err


def test_exit_codes_and_debug(data, tmp_path, capsys):
    assert (
        main(["fit", str(tmp_path / "absent.csv"), "--task", "u", "--label", "y", "-o", "m"]) == 1
    )
    error = capsys.readouterr().err
    assert error.startswith("cnb: error:") and "absent.csv" in error and "Traceback" not in error
    with pytest.raises(SystemExit) as usage:
        main(["fit", "--no-such-flag"])
    assert usage.value.code == 2
    with pytest.raises(DataError):
        main(
            [
                "--debug",
                "fit",
                str(tmp_path / "absent.csv"),
                "--task",
                "u",
                "--label",
                "y",
                "-o",
                "m",
            ]
        )


@pytest.mark.parametrize("protocol", ["transfer", "curves", "loss", "evidence", "partitions"])
def test_every_evaluation_protocol_runs_from_the_command_line(data, tmp_path, capsys, protocol):
    args = [
        "evaluate",
        str(data),
        "--task",
        "user",
        "--label",
        "label",
        "--protocol",
        protocol,
        "--kind",
        "ns,cnb-bhc",
        "--k",
        "2,8",
        "--repeats",
        "1",
        "--targets",
        "2",
        "-o",
        str(tmp_path / protocol),
        "--json",
    ]
    if protocol == "evidence":
        args += ["--temperatures", "5"]
    assert main(args) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["protocol"] == protocol and document["summary"]
    if protocol == "evidence":
        assert all(row["log_conditional_mean"] is not None for row in document["summary"])


def test_evidence_json_names_what_it_could_not_compute(data, capsys):
    args = ["evidence", str(data), "--task", "user", "--label", "label", "--json"]
    assert main(args) == 0
    document = json.loads(capsys.readouterr().out)
    kinds = [row["model"] for row in document["models"]]
    assert "prototype" not in kinds and kinds[0] == "ns"
    assert all(row["log_evidence"] is not None for row in document["models"])


def test_progress_lines_off_a_terminal():
    import io

    stream = io.StringIO()
    reporter = LogProgress(4, "cells", stream=stream, interval=0.0)
    for _ in range(4):
        reporter.update()
    reporter.close()
    lines = stream.getvalue().splitlines()
    assert lines[0].startswith("cells: 1/4 (25%)") and "left" in lines[0]
    assert lines[-1].startswith("cells: 4/4 (100%)")


def test_the_parser_documents_every_command():
    parser = build_parser()
    text = parser.format_help()
    for command in ("fit", "predict", "evidence", "evaluate", "demo", "meeting"):
        assert command in text

"""``cnb users``: a user missing from the directory is named in a warning; ``users list``
imports nothing heavy."""

from __future__ import annotations

import json
import subprocess
import sys

from clusterednb.cli import main


def _directory(tmp_path):
    from clusterednb.examples.meeting import world

    _, directory = world()
    path = tmp_path / "directory.json"
    directory.to_json(path)
    return path, sorted(directory.users)


def test_users_add_warns_about_a_user_missing_from_the_directory(tmp_path, capsys):
    path, known = _directory(tmp_path)
    store = tmp_path / "service.db"
    argv = ["users", "add", "zed", "--email", "zed@example.org", "--store", str(store)]
    assert main([*argv, "--directory", str(path)]) == 0
    captured = capsys.readouterr()
    assert "cnb: warning: user 'zed' is not in the directory" in captured.err
    assert captured.out.startswith("zed.")  # the account is made all the same
    argv = ["users", "add", known[0], "--email", "a@example.org", "--store", str(store)]
    assert main([*argv, "--directory", str(path)]) == 0
    assert "warning" not in capsys.readouterr().err


def test_users_list_imports_no_numeric_library(tmp_path):
    store = tmp_path / "service.db"
    assert main(["users", "add", "ann", "--email", "ann@example.org", "--store", str(store)]) == 0
    code = (
        "import sys, json\n"
        "from clusterednb.cli import main\n"
        f"main(['users', 'list', '--store', {str(store)!r}])\n"
        "print(json.dumps(sorted(m for m in ('sklearn', 'pandas', 'numba', 'scipy') "
        "if m in sys.modules)))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(done.stdout.splitlines()[-1]) == []

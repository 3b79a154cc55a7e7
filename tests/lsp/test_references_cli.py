"""``puppet-xpp --references``: the command-line view of the reference index, checked against the places
the tests' own workspace writes the name."""

from __future__ import annotations

import os
import subprocess
import sys

from tests.lsp.test_references import REPO, build_workspace, name_pattern, occurrences, write_files


def _run(env, *args):
    p = subprocess.run(
        [sys.executable, "-m", "puppet_xpp", "--references", *args],
        cwd=env,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": REPO},
        timeout=300,
    )
    rows = set()
    for line in p.stdout.splitlines():
        where, _, _rest = line.partition(": ")
        path, ln, col = where.rsplit(":", 2)
        rows.add((path, int(ln) - 1, int(col) - 1))
    return p.returncode, rows, p.stdout, p.stderr


def test_references_cli(tmp_path):
    env = build_workspace(tmp_path)
    rc, rows, out, err = _run(env, "mymod::app")
    assert rc == 0, err
    assert rows == occurrences(env, name_pattern("mymod::app")), out
    rc, rows, out, err = _run(env, "mymod::vhost", env)
    assert rc == 0 and rows == occurrences(env, "(?i)" + name_pattern("mymod::vhost")), out
    # a class parameter: its definition, body uses, the named argument, the qualified use, the Hiera key
    rc, rows, out, err = _run(env, "$mymod::app::user")
    assert rc == 0
    assert rows == {
        ("modules/mymod/manifests/app.pp", 3, 10),
        ("modules/mymod/manifests/app.pp", 11, 31),
        ("modules/mymod/manifests/db.pp", 2, 44),
        ("data/common.yaml", 2, 1),
    }, out
    rc, rows, out, err = _run(env, "mymod::app", "--callers")
    assert rc == 0 and "used by class mymod::db" in out and "used by node default" in out, out
    rc, rows, out, err = _run(env, "nothing::here")
    assert rc == 1 and rows == set() and "no definition or use found" in err
    rc, rows, out, err = _run(env, "x", os.path.join(env, "missing"))
    assert rc == 2 and "not a directory" in err


def test_references_cli_names_in_strings(tmp_path):
    env = build_workspace(tmp_path)
    write_files(
        env,
        {
            "modules/mymod/manifests/strings.pp": (
                "class mymod::strings {\n"
                "  create_resources('mymod::vhost', {})\n"
                "  ensure_resource('Mymod::Vhost', 'x', {})\n"
                "  if defined('mymod::vhost') { notice(1) }\n"
                "}\n"
            )
        },
    )
    rc, rows, out, err = _run(env, "mymod::vhost")
    assert rc == 0, err
    # each place once (defined('x') means the type here: mymod::vhost is a define)
    assert len(out.splitlines()) == len(rows), out
    assert rows == occurrences(env, "(?i)" + name_pattern("mymod::vhost")), out
    assert ("modules/mymod/manifests/strings.pp", 3, 14) in rows

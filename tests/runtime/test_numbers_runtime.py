"""An integer literal outside Puppet's range, through runtime/xpp (issue 26 item 8): its ``.xpp`` (the error
recorded, the literal stored saturated: grammar.numbers) is served, and Puppet 7.23 and OpenVox 8 report the
same errors as their own parse of the source (message with the value in hex, file, line, column), through
the test driver and through ``puppet apply --xpp`` as the README runs it.
"""

from __future__ import annotations

import os
import re
import subprocess

import pytest

from tests.conformance.puppets import ruby_command
from tests.runtime.test_puppet_runtime import (
    PUPPETS,
    RUNTIME_LIB,
    compile_tree,
    production,  # noqa: F401 (fixture)
    run,
    xpp_warnings,
)

LINES = (
    "  $big = 9223372036854775808\n"
    "  $hex = 0xFFFFFFFFFFFFFFFF\n"
    f"  $long = {'9' * 4400}\n"
    "  notice($big, $hex, $long)\n"
)


def _break(envdir: str) -> str:
    user = os.path.join(envdir, "modules", "base", "manifests", "user.pp")
    text = open(user, encoding="utf-8").read()
    open(user, "w", encoding="utf-8").write(text.rstrip()[:-1] + LINES + "}\n")
    return user


@pytest.mark.parametrize("puppet", PUPPETS)
def test_overflow_error_replayed_from_the_xpp(puppet, production, tmp_path):  # noqa: F811
    user = _break(production)
    compile_tree(production, puppet)
    xpp = os.path.join(production, ".xpp", "modules", "base", "manifests", "user.xpp")
    assert os.path.isfile(xpp)
    plain = run(puppet, production, tmp_path, False)
    fast = run(puppet, production, tmp_path, True)
    assert "error" in plain and "catalog" not in plain, plain
    assert fast.get("error") == plain["error"] and "catalog" not in fast
    assert not xpp_warnings(fast) and fast["served"] == fast["loaded"] == plain["loaded"]
    errors = [
        (lg["message"], lg["file"], lg["line"], lg["pos"]) for lg in plain["logs"] if lg["level"] == "err"
    ]
    assert [
        (lg["message"], lg["file"], lg["line"], lg["pos"]) for lg in fast["logs"] if lg["level"] == "err"
    ] == errors
    assert sum("outside of Puppet Integer max range" in e[0] for e in errors) == 3
    assert all(e[1] == user for e in errors if "Integer" in e[0])


@pytest.mark.parametrize("puppet", PUPPETS)
def test_puppet_apply_reports_the_same_overflow(puppet, production, tmp_path):  # noqa: F811
    """``puppet apply --xpp`` (RUBYLIB + RUBYOPT, the README's way) prints the errors Puppet prints without
    the runtime, and serves the file (no fallback)."""
    _break(production)
    compile_tree(production, puppet)
    site = os.path.join(production, "manifests", "site.pp")
    # `puppet` as its bin/ starts it (OpenVox's tarball has no bin/), the runtime loaded the README's way
    launch = "require 'puppet/util/command_line'; Puppet::Util::CommandLine.new('puppet', ARGV).execute"
    options = ["--noop", "--environmentpath", os.path.dirname(production), "--environment", "production"]
    options += ["--certname", "web1.example.com"]  # the node that includes class base (user.pp)
    for name in ("confdir", "vardir", "publicdir"):
        options += [f"--{name}", str(tmp_path / name)]
    booted = dict(os.environ, RUBYLIB=RUNTIME_LIB, RUBYOPT="-rpuppet_x/xpp/boot")
    texts = {}
    for switch in ("--no-xpp", "--xpp"):
        argv = [*ruby_command(puppet), "-e", launch, "--", "apply", switch, *options, site]
        done = subprocess.run(
            argv, capture_output=True, text=True, timeout=300, cwd=str(tmp_path), env=booted
        )
        assert done.returncode == 1, (done.stdout + done.stderr)[-3000:]
        texts[switch == "--xpp"] = done.stdout + done.stderr
    assert "xpp: not using" not in texts[True]
    errors = {
        xpp: [
            line
            for line in re.sub(r"\x1b\[[0-9;]*m", "", text).splitlines()
            if line.startswith("Error:") and "Facter:" not in line
        ]
        for xpp, text in texts.items()
    }
    assert errors[True] == errors[False]
    assert sum("outside of Puppet Integer max range" in line for line in errors[True]) == 3

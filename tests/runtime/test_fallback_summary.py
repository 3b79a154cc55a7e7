"""Issue 25 item 7: a compile that cannot use the ``.xpp`` tree (none written yet, a module not compiled)
logs one summary warning per catalog compile, not one per file: the count, each reason with its first
files, and how to write the missing files; each file's own line is at debug level.  Counted in the
output of ``puppet apply --xpp`` started the README's way (RUBYLIB + RUBYOPT), on both Puppets.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess

import pytest

from tests.conformance.puppets import ruby_command
from tests.runtime.test_puppet_runtime import PUPPETS, RUNTIME_LIB, compile_tree, production  # noqa: F401

BIN_PUPPET = "require 'puppet/util/command_line'; Puppet::Util::CommandLine.new('puppet', ARGV).execute"


def apply_lines(puppet: str, envdir: str, tmp_path, *flags: str) -> list[str]:
    """The lines ``puppet apply --xpp --noop`` of the environment's site.pp prints (colours removed)."""
    argv = [*ruby_command(puppet), "-e", BIN_PUPPET, "--", "apply", "--xpp", "--noop", "-v", *flags]
    argv += ["--environmentpath", os.path.dirname(envdir), "--environment", os.path.basename(envdir)]
    argv += ["--certname", "web1.example.com"]
    for name in ("confdir", "vardir", "publicdir"):
        argv += [f"--{name}", str(tmp_path / name)]
    argv.append(os.path.join(envdir, "manifests", "site.pp"))
    env = dict(os.environ, RUBYLIB=RUNTIME_LIB, RUBYOPT="-rpuppet_x/xpp/boot")
    done = subprocess.run(argv, capture_output=True, text=True, timeout=300, cwd=str(tmp_path), env=env)
    text = re.sub(r"\x1b\[[0-9;]*m", "", done.stdout + done.stderr)
    assert done.returncode == 0, text[-3000:]
    return text.splitlines()


@pytest.mark.parametrize("puppet", PUPPETS)
def test_one_warning_per_compile(puppet, production, tmp_path):  # noqa: F811
    # no tree at all (a new deploy not compiled yet)
    lines = apply_lines(puppet, production, tmp_path)
    warned = [ln for ln in lines if ln.startswith("Warning: xpp:")]
    (info,) = [ln for ln in lines if "manifests loaded from .xpp" in ln] or [""]
    assert len(warned) == 1, lines
    total = int(re.search(r"0 manifests loaded from \.xpp, (\d+) parsed instead", info).group(1))
    assert total >= 3
    assert f"not using the .xpp of {total} of {total} manifests (parsed instead)" in warned[0]
    assert f"{total} because it does not exist (" in warned[0] and ", and " in warned[0]
    assert f"`puppet-xpp --compile {production}` writes the missing files" in warned[0]
    # the details at debug level: one line per file
    lines = apply_lines(puppet, production, tmp_path, "--debug")
    details = [ln for ln in lines if ln.startswith("Debug: xpp: not using ") and "it does not exist" in ln]
    assert len(details) == total and len([ln for ln in lines if ln.startswith("Warning: xpp:")]) == 1
    # one module not compiled: its files are named (up to three), the rest are served
    compile_tree(production, puppet)
    shutil.rmtree(os.path.join(production, ".xpp", "modules", "base"))
    lines = apply_lines(puppet, production, tmp_path)
    (warned,) = [ln for ln in lines if ln.startswith("Warning: xpp:")]
    missing = re.search(r"of (\d+) of (\d+) manifests", warned)
    assert missing and 0 < int(missing.group(1)) < int(missing.group(2)) == total, warned
    assert os.path.join(production, ".xpp", "modules", "base", "") in warned

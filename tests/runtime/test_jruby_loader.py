"""The runtime's loader in Puppet Server's own JRuby (Debian's puppetserver 7.9.5: JRuby 9.3, Puppet 7.23, no
msgpack gem) gives the AST Puppet's parser gives in that same JRuby, on a sample of the corpus.

The loader decodes payloads with String#getbyte/byteslice and builds nodes through constructors compiled
with class_eval (constructors.rb); JRuby differs from MRI in exactly those (String internals, eval, Struct),
so MRI's comparisons (tests/runtime/test_puppet_runtime.py) do not vouch for Puppet Server.  The script run
(tests/runtime/ast_positions.rb) compares each loaded Program with Puppet's own parse of the source: ``==``
(which ignores positions), and the class, offset and length of every positioned node, every node on the
Program's one Locator, its text and file.
"""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from bench.bench_runtime import usable_pairs
from tests.conformance.puppets import missing_reason
from tests.runtime.test_puppet_runtime import CORPUS, RUNTIME_LIB, corpus_env

POSITIONS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "ast_positions.rb")
JAR = "/usr/share/puppetserver/puppetserver.jar"
ETC = "/etc/puppet/puppetserver"
JAVA = [
    "java",
    "-Xms256m",
    "-Xmx1g",
    "-Djruby.lib=/usr/share/jruby/lib",
    "--add-opens",
    "java.base/sun.nio.ch=ALL-UNNAMED",
    "--add-opens",
    "java.base/java.io=ALL-UNNAMED",
]

pytestmark = pytest.mark.skipif(
    not os.path.exists(JAR) or missing_reason("7.23") is not None or not os.path.isdir(CORPUS),
    reason="no Puppet Server or module corpus (bash .ci/install installs them)",
)


def jruby_command(config: str = os.path.join(ETC, "conf.d"), java: tuple[str, ...] = ()) -> list[str]:
    """What ``puppetserver ruby`` runs: a Ruby script in Puppet Server's JRuby with the server's load path
    (its jar's puppetserver-lib, vendor_ruby, the vendored gems), as ``config``'s jruby-puppet section says."""
    return (
        JAVA
        + list(java)
        + [
            "-cp",
            JAR,
            "clojure.main",
            "-m",
            "puppetlabs.puppetserver.cli.ruby",
            "--config",
            config,
            "--",
        ]
    )


def test_jruby_loader_gives_puppets_ast(tmp_path):
    env = corpus_env("7.23")
    sample = sorted(usable_pairs(env))[::4]  # every fourth corpus manifest Puppet would load from its .xpp
    assert len(sample) >= 60
    req = {
        "runtime_lib": RUNTIME_LIB,
        "dir": str(tmp_path),
        "pairs": [[xpp, src] for src, xpp in sample],
        "out": str(tmp_path / "out.json"),
    }
    path = tmp_path / "req.json"
    path.write_text(json.dumps(req))
    out = subprocess.run(
        # (JIT logging: a method JRuby refuses to compile, e.g. one over jruby.jit.maxsize, is named)
        # (-XX:+PrintCompilation: the JVM names a method its compilers skip, e.g. "out of virtual
        # registers", which left MsgpackReader#value to the JVM's bytecode interpreter)
        jruby_command(java=("-Djruby.jit.logging=true", "-XX:+PrintCompilation")) + [POSITIONS, str(path)],
        capture_output=True,
        text=True,
        timeout=900,
        cwd=str(tmp_path),
    )
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-3000:]
    report = json.loads((tmp_path / "out.json").read_text())
    results = report["results"]
    assert len(results) == len(sample)
    wrong = [(src, why) for (src, _xpp), why in zip(sample, results) if why != "ok"]
    assert not wrong, wrong
    # JRuby compiled every method of the loader (a method it refuses, such as one over 1000 IR
    # instructions, stays interpreted for ever: MsgpackReader#value did, and loading ran at half speed)
    refused = [
        ln
        for ln in (out.stdout + out.stderr).splitlines()
        if "could not compile" in ln and "puppet_x/xpp" in ln
    ]
    assert not refused, refused
    # the JVM compiled every method of the loader it tried to (HotSpot's C1 gave up on MsgpackReader#value
    # at 6.4 KB of bytecode, "out of virtual registers": it ran interpreted, 85% of the samples of a warm
    # Puppet Server's loading)
    skipped = [ln for ln in out.stdout.splitlines() if "COMPILE SKIPPED" in ln and "puppet_x.xpp" in ln]
    assert not skipped, skipped
    # every type of the AST table is built by its flattened constructor (constructors.rb), none through
    # Puppet's `new` and the eval'd checker
    assert report["no_builder"] == [], report["no_builder"]

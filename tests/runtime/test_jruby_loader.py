"""The runtime's loader in Puppet Server's own JRuby (Debian's puppetserver 7.9.5: JRuby 9.3, Puppet 7.23, no
msgpack gem) gives the AST Puppet's parser gives in that same JRuby, on a sample of the corpus.

The loader decodes payloads with String#getbyte/byteslice and builds nodes through constructors compiled
with class_eval (constructors.rb); JRuby differs from MRI in exactly those (String internals, eval, Struct),
so MRI's comparisons (tests/runtime/test_puppet_runtime.py) do not vouch for Puppet Server.  The script run
is tests/runtime/catalog.rb's "read" mode, the one MRI's tests use: each loaded Program ``==`` Puppet's own
parse of the source, every node sharing the Locator, the Locator's file the source's path.
"""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from bench.bench_runtime import usable_pairs
from tests.conformance.puppets import missing_reason
from tests.runtime.test_puppet_runtime import CORPUS, DRIVER, RUNTIME_LIB, corpus_env

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


def jruby_command(config: str = os.path.join(ETC, "conf.d")) -> list[str]:
    """What ``puppetserver ruby`` runs: a Ruby script in Puppet Server's JRuby with the server's load path
    (its jar's puppetserver-lib, vendor_ruby, the vendored gems), as ``config``'s jruby-puppet section says."""
    return JAVA + [
        "-cp",
        JAR,
        "clojure.main",
        "-m",
        "puppetlabs.puppetserver.cli.ruby",
        "--config",
        config,
        "--",
    ]


def test_jruby_loader_gives_puppets_ast(tmp_path):
    env = corpus_env("7.23")
    sample = sorted(usable_pairs(env))[::4]  # every fourth corpus manifest Puppet would load from its .xpp
    assert len(sample) >= 60
    # catalog.rb's settings (its own directories), then the read mode's pairs
    req: dict = {key: str(tmp_path / key[:-3]) for key in ("confdir", "vardir", "codedir")}
    req.update(
        runtime_lib=RUNTIME_LIB,
        environmentpath=os.path.dirname(env),
        environment=os.path.basename(env),
        xpp=True,
    )
    req.update(mode="read", pairs=[[xpp, src] for src, xpp in sample])
    path = tmp_path / "req.json"
    path.write_text(json.dumps(req))
    out = subprocess.run(
        jruby_command() + [DRIVER, str(path)], capture_output=True, text=True, timeout=900, cwd=str(tmp_path)
    )
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-3000:]
    results = json.loads(out.stdout.strip().splitlines()[-1])["results"]
    assert len(results) == len(sample)
    wrong = [(src, why) for (src, _xpp), (ok, why) in zip(sample, results) if not ok]
    assert not wrong, wrong

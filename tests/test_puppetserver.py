"""runtime/xpp inside a real Puppet Server (Debian's puppetserver 7.9.5: JRuby 9.3 running Puppet 7.23), set
up the way runtime/xpp/README.md documents it: the module's ``lib`` on ``jruby-puppet.ruby-load-path``,
``catalog_terminus = xpp`` and ``xpp = true`` in ``puppet.conf``, nothing else (no msgpack gem: Puppet
Server's JRuby has none, so the loader's plain-Ruby reader is what runs).

One server serves every step, as an agent would be served: catalogs are requested over HTTPS
(``POST /puppet/v3/catalog/<node>`` with facts). The reference is the same server compiling from the
``.pp`` files (the ``.xpp`` tree removed), and Puppet 7.23 on MRI without the runtime
(tests/runtime/catalog.rb); the server's own log lines say what came from ``.xpp``.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import ssl
import subprocess
import time
import urllib.error
import urllib.parse
import urllib.request

import pytest

from puppet_xpp.xpp import compile as xcompile
from tests.conformance.puppets import missing_reason
from tests.runtime.test_puppet_runtime import DAMAGES, FACTS, RUNTIME_LIB, compile_tree, damage, run
from tests.runtime.test_replay_exact import CASES

# the cases of tests/runtime/test_replay_exact.py asked of the server too
EXACT = ("eoi_class", "bom", "latin1", "json")

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
JAR = "/usr/share/puppetserver/puppetserver.jar"
ETC = "/etc/puppet/puppetserver"
NODE = "web1.example.com"

pytestmark = pytest.mark.skipif(
    not os.path.exists(JAR) or missing_reason("7.23") is not None,
    reason="no Puppet Server (bash .ci/install installs Debian's puppetserver)",
)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _configure(root, envroot: str, port: int) -> str:
    """A private copy of Puppet Server's configuration: own directories, a free port, logs on stdout at
    info, and the v3 catalog endpoint open to this test's unauthenticated client (no agent certificate)."""
    conf = root / "conf.d"
    shutil.copytree(os.path.join(ETC, "conf.d"), conf)
    for d in ("etc", "var", "run", "log", "gems"):
        (root / d).mkdir()
    (conf / "puppetserver.conf").write_text(
        "jruby-puppet: {\n"
        f"  ruby-load-path: [/usr/lib/puppetserver/ruby/vendor_ruby, {RUNTIME_LIB}]\n"
        f"  gem-home: {root / 'gems'}\n"
        f"  gem-path: [{root / 'gems'}, /usr/lib/puppetserver/vendored-jruby-gems]\n"
        f"  server-conf-dir: {root / 'etc'}\n"
        f"  server-code-dir: {os.path.dirname(envroot)}\n"
        f"  server-var-dir: {root / 'var'}\n"
        f"  server-run-dir: {root / 'run'}\n"
        f"  server-log-dir: {root / 'log'}\n"
        "  max-active-instances: 1\n"
        "}\nhttp-client: {}\nprofiler: {}\n"
    )
    (conf / "webserver.conf").write_text(
        f"webserver: {{\n  client-auth: want\n  ssl-host: 127.0.0.1\n  ssl-port: {port}\n}}\n"
    )
    (root / "logback.xml").write_text(
        '<configuration><appender name="OUT" class="ch.qos.logback.core.ConsoleAppender"><encoder>'
        "<pattern>%-5p [%c{2}] %m%n</pattern></encoder></appender>"
        '<logger name="org.eclipse.jetty" level="WARN"/>'
        '<root level="info"><appender-ref ref="OUT"/></root></configuration>\n'
    )
    (conf / "global.conf").write_text(f"global: {{ logging-config: {root / 'logback.xml'} }}\n")
    auth = (conf / "auth.conf").read_text()
    opened = re.sub(
        r'allow: "\$1"(\s+sort-order: 500\s+name: "puppetlabs v3 catalog from agents")',
        r"allow-unauthenticated: true\1",
        auth,
    )
    assert opened != auth, "Puppet Server's auth.conf has no v3 catalog rule to open"
    (conf / "auth.conf").write_text(opened)
    (root / "etc" / "puppet.conf").write_text(
        f"[server]\nxpp = true\ncatalog_terminus = xpp\nenvironmentpath = {envroot}\n"
    )
    return str(conf)


class Server:
    """A Puppet Server process with its log; `catalog` asks it for one catalog as an agent would."""

    def __init__(self, root, envroot: str) -> None:
        self.port = _free_port()
        conf = _configure(root, envroot, self.port)
        self.log_path = root / "server.log"
        self.log = open(self.log_path, "wb")
        self.proc = subprocess.Popen(
            ["java", "-Xms256m", "-Xmx1g", "-Djruby.lib=/usr/share/jruby/lib"]
            + [
                "--add-opens",
                "java.base/sun.nio.ch=ALL-UNNAMED",
                "--add-opens",
                "java.base/java.io=ALL-UNNAMED",
            ]
            + ["-jar", JAR, "--config", conf, "--bootstrap-config", os.path.join(ETC, "services.d")],
            stdout=self.log,
            stderr=subprocess.STDOUT,
            cwd=str(root),
        )
        deadline = time.monotonic() + 600
        while "ready to handle requests" not in self.text():
            assert self.proc.poll() is None, "Puppet Server exited:\n" + self.text()[-4000:]
            assert time.monotonic() < deadline, (
                "Puppet Server did not start in 600 s:\n" + self.text()[-4000:]
            )
            time.sleep(1)
        self.seen = len(self.text())

    def text(self) -> str:
        with open(self.log_path, encoding="utf-8", errors="replace") as f:
            return f.read()

    def catalog(self) -> tuple[int, dict, list[str]]:
        """(HTTP status, the JSON body, the xpp log lines this request produced)."""
        body = urllib.parse.urlencode(
            {
                "environment": "production",
                "facts_format": "application/json",
                "facts": json.dumps({"name": NODE, "values": FACTS}),
            }
        ).encode()
        ctx = ssl.create_default_context()
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
        url = f"https://127.0.0.1:{self.port}/puppet/v3/catalog/{NODE}?environment=production"
        req = urllib.request.Request(url, data=body, headers={"Accept": "application/json"})
        try:
            with urllib.request.urlopen(req, context=ctx, timeout=300) as r:
                status, data = r.status, json.loads(r.read())
        except urllib.error.HTTPError as e:
            status, data = e.code, json.loads(e.read())
        text = self.text()
        new, self.seen = text[self.seen :], len(text)
        return status, data, [ln for ln in new.splitlines() if "Puppet xpp: " in ln]

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.log.close()


def _shape(cat: dict) -> dict:
    return {k: cat[k] for k in ("resources", "edges", "classes")}


def test_puppet_server_serves_xpp(tmp_path):
    envroot = tmp_path / "code" / "environments"
    envroot.mkdir(parents=True)
    env = str(envroot / "production")
    shutil.copytree(os.path.join(REPO, "examples", "production"), env, ignore=shutil.ignore_patterns(".xpp"))
    reference = run("7.23", env, tmp_path, False)  # Puppet 7.23 on MRI, without the runtime
    assert "error" not in reference, reference
    loaded = reference["loaded"]
    assert loaded >= 5

    server = Server(tmp_path, str(envroot))
    try:
        # 1. every file from its .xpp: the catalog is MRI Puppet's and the server's own from the .pp files
        compile_tree(env, "7.23")
        status, fast, lines = server.catalog()
        assert status == 200, fast
        assert _shape(fast) == reference["catalog"]
        assert (
            len(lines) == 1 and f"xpp: {loaded} manifests loaded from .xpp, 0 parsed instead" in lines[0]
        ), lines
        shutil.rmtree(os.path.join(env, ".xpp"))
        # no tree (a deploy not compiled yet): one warning per catalog request, not one per file (issue 25
        # item 7), twice in a row (the second request of an environment parses again: still one)
        for _ in range(2):
            status, plain, lines = server.catalog()
            assert status == 200 and _shape(plain) == reference["catalog"]
            warns = [ln for ln in lines if ln.startswith("WARN")]
            assert len(warns) == 1, lines
            warned = warns[0]
            assert f"not using the .xpp of {loaded} of {loaded} manifests" in warned, lines
            assert f"{loaded} because it does not exist (" in warned and f"--compile {env}`" in warned, warned

        # 2. damaged, stale and missing .xpp files: one warning naming each, the .pp parsed, the same catalog
        compile_tree(env, "7.23")
        jobs = {os.path.relpath(j.src, env): j for j in xcompile.plan(xcompile.detect_environment(env))[0]}
        for src, how, _reason in DAMAGES:
            damage(jobs[src].out, how, jobs[src].src)
        status, damaged, lines = server.catalog()
        assert status == 200 and _shape(damaged) == _shape(run("7.23", env, tmp_path, False)["catalog"])
        warns = [ln for ln in lines if ln.startswith("WARN")]
        assert len(warns) == 1, lines
        warned = warns[0]
        assert f"not using the .xpp of {len(DAMAGES)} of {loaded} manifests" in warned, lines
        for src, _how, reason in DAMAGES:
            assert jobs[src].out in warned and reason in warned, warned
        n = loaded - len(DAMAGES)
        assert any(
            f"xpp: {n} manifests loaded from .xpp, {len(DAMAGES)} parsed instead" in ln for ln in lines
        )

        # 3. a recorded syntax error is raised from the .xpp as the server's own parse raises it
        user = os.path.join(env, "modules", "base", "manifests", "user.pp")
        with open(user, encoding="utf-8") as f:
            text = f.read()
        with open(user, "w", encoding="utf-8") as f:
            f.write(text.rstrip()[:-1] + "  $x = [1, 2\n}\n")
        compile_tree(env, "7.23")
        status, err_fast, lines = server.catalog()
        assert not [ln for ln in lines if "xpp: not using" in ln], lines
        shutil.rmtree(os.path.join(env, ".xpp"))
        status_plain, err_plain, _ = server.catalog()
        assert status == status_plain == 500
        assert err_fast == err_plain and "Syntax error" in err_fast["message"], (err_fast, err_plain)

        # 4. issue 25 items 1-4 in the server: the error from the .xpp is the server's own, byte for byte (a
        # syntax error at the end of the input without a position, a byte order mark and a source that is
        # not UTF-8 wrapped at the include, the json checker's text from the server's JRuby)
        with open(user, "w", encoding="utf-8") as f:
            f.write(text)
        demo = os.path.join(env, "modules", "demo", "manifests")
        os.makedirs(demo)
        for name in EXACT:
            with open(os.path.join(demo, f"{name}.pp"), "wb") as f:
                f.write(CASES[name])
        for name in EXACT:
            with open(os.path.join(env, "manifests", "site.pp"), "w", encoding="utf-8") as f:
                f.write(f"include demo::{name}\n")
            compile_tree(env, "7.23")
            status, err_fast, lines = server.catalog()
            assert any(" 0 parsed instead" in ln for ln in lines) and not [
                ln for ln in lines if ln.startswith("WARN")
            ], lines
            shutil.rmtree(os.path.join(env, ".xpp"))
            status_plain, err_plain, _ = server.catalog()
            assert status == status_plain == 500 and err_fast == err_plain, (name, err_fast, err_plain)
    finally:
        server.stop()

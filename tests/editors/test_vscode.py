"""editors/vscode: TextMate grammar cases, TypeScript build, unit tests, .vsix packaging, and the
extension's launch/settings/commands against the real server and CLI.

Needs node + the extension's npm packages (``bash .ci/editors`` runs ``npm ci`` in editors/vscode).
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
import shutil
import subprocess
import time
import zipfile
from pathlib import Path

import pytest

from tests.editors import VSCODE, editor_tool_missing, server_wrapper

BIN = VSCODE / "node_modules" / ".bin"
TIMEOUT = 300

# documented, so that lint (on by default) has nothing to say: the syntax error is the only diagnostic
BROKEN = """\
# @summary A module for the test.
class mymod {
  file { '/tmp/mymod':
    ensure  => ,
  }
}
"""
FIXED = BROKEN.replace("ensure  => ,", "ensure  => file,")
DUPKEY = "$h = { 'a' => 1, 'a' => 2 }\nnotice($h)\n"


def _run(cmd, *, cwd=VSCODE, timeout=TIMEOUT, env=None, check=True) -> subprocess.CompletedProcess:
    try:
        p = subprocess.run(
            cmd, cwd=cwd, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=timeout
        )
    except subprocess.TimeoutExpired as e:
        pytest.fail(f"{cmd} did not finish in {timeout}s: {e.stdout!r} {e.stderr!r}")
    if check:
        assert p.returncode == 0, f"{cmd} exited {p.returncode}:\n{p.stdout[-5000:]}\n{p.stderr[-5000:]}"
    return p


def _sources_digest() -> str:
    h = hashlib.sha256()
    for p in sorted(
        [
            *VSCODE.glob("src/**/*.ts"),
            *VSCODE.glob("test/**/*.ts"),
            VSCODE / "tsconfig.json",
            VSCODE / "package-lock.json",
        ]
    ):
        h.update(str(p.relative_to(VSCODE)).encode() + b"\0" + p.read_bytes() + b"\0")
    return h.hexdigest()


@pytest.fixture(scope="module")
def built() -> Path:
    """tsc -p editors/vscode, once for all pytest-xdist workers (a lock, and a stamp of the sources)."""
    if shutil.which("node") is None:
        editor_tool_missing("node")
    if not (BIN / "tsc").exists():
        editor_tool_missing("the npm packages of editors/vscode")
    out = VSCODE / "out"
    stamp = out / ".sources.sha256"
    with open(VSCODE / "node_modules" / ".puppet-xpp-build.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        digest = _sources_digest()
        if not (stamp.exists() and stamp.read_text() == digest):
            t0 = time.monotonic()
            _run([str(BIN / "tsc"), "-p", "."])
            stamp.write_text(digest)
            print(f"tsc: {time.monotonic() - t0:.1f}s")
    return out


def test_generated_grammars_are_up_to_date():
    if shutil.which("node") is None:
        editor_tool_missing("node")
    _run(["node", "scripts/build-grammars.js", "--check"])


def test_textmate_grammar_cases():
    if not (BIN / "vscode-tmgrammar-test").exists():
        editor_tool_missing("vscode-tmgrammar-test (npm packages of editors/vscode)")
    cases = sorted((VSCODE / "test" / "grammar").glob("*.test.*"))
    assert len(cases) >= 7
    p = _run(
        [
            str(BIN / "vscode-tmgrammar-test"),
            "-g",
            "syntaxes/puppet.tmLanguage.json",
            "-g",
            "syntaxes/epp.tmLanguage.json",
        ]
        + [str(c.relative_to(VSCODE)) for c in cases],
        timeout=120,
    )
    ok = re.findall(r"^✓ (\S+) run successfuly", p.stdout, re.M)
    assert sorted(ok) == sorted(str(c.relative_to(VSCODE)) for c in cases), p.stdout
    # each case file makes many assertions
    for c in cases:
        n = sum(1 for line in c.read_text().splitlines() if re.match(r"^(#|<%#)\s*(\^|<)", line))
        assert n >= 20, (c, n)


def test_unit_tests(built):
    p = _run(["node", "--test", "out/test/unit/"])
    passed = int(re.search(r"^# pass (\d+)", p.stdout, re.M).group(1))
    assert passed >= 10 and re.search(r"^# fail 0$", p.stdout, re.M), p.stdout


def test_vsix_package(built, tmp_path):
    out = tmp_path / "puppet-xpp.vsix"
    t0 = time.monotonic()
    _run([str(BIN / "vsce"), "package", "--out", str(out)])
    print(f"vsce package: {time.monotonic() - t0:.1f}s, {out.stat().st_size} bytes")
    size = out.stat().st_size
    assert 50_000 < size < 2_000_000, size
    with zipfile.ZipFile(out) as z:
        names = set(z.namelist())
        manifest = json.loads(z.read("extension/package.json"))
    for need in (
        "extension/out/src/extension.js",
        "extension/out/src/config.js",
        "extension/out/src/layout.js",
        "extension/syntaxes/puppet.tmLanguage.json",
        "extension/syntaxes/epp.tmLanguage.json",
        "extension/language-configuration.json",
        "extension/epp-language-configuration.json",
        "extension/LICENSE.txt",
        "extension/node_modules/vscode-languageclient/node.js",
    ):
        assert need in names, need
    bad = [
        n
        for n in names
        if n.startswith(
            (
                "extension/src/",
                "extension/test/",
                "extension/out/test/",
                "extension/node_modules/typescript/",
                "extension/node_modules/@vscode/vsce",
            )
        )
        or n.endswith(".ts")
    ]
    assert bad == []
    assert manifest["main"] == "./out/src/extension.js" and manifest["version"]
    # every module the extension requires at run time is inside the .vsix (`vscode` itself is stubbed)
    root = tmp_path / "unpacked"
    with zipfile.ZipFile(out) as z:
        z.extractall(root)
    probe = r"""
const Module = require('module');
const orig = Module._resolveFilename;
Module._resolveFilename = function (req, ...rest) { return req === 'vscode' ? 'vscode' : orig.call(this, req, ...rest); };
const stub = () => new Proxy(function () {}, { get: (t, k) => (k === 'prototype' ? {} : stub()), construct: () => stub() });
require.cache['vscode'] = { id: 'vscode', filename: 'vscode', loaded: true, exports: stub() };
const ext = require(process.argv[1]);
if (typeof ext.activate !== 'function' || typeof ext.deactivate !== 'function') process.exit(3);
console.log('loaded');
"""
    p = _run(
        ["node", "-e", probe, str(root / "extension" / "out" / "src" / "extension.js")],
        cwd=tmp_path,
        env={**os.environ, "NODE_PATH": ""},
    )
    assert p.stdout.strip() == "loaded"


def test_extension_launch_settings_and_commands_against_server(built, tmp_path, oracle):
    env_dir = tmp_path / "production"
    for rel, text in {
        "environment.conf": "modulepath = modules\n",
        "manifests/site.pp": "include mymod\n",
        "modules/mymod/manifests/init.pp": BROKEN,
    }.items():
        (env_dir / rel).parent.mkdir(parents=True, exist_ok=True)
        (env_dir / rel).write_text(text)
    perr = [d for d in oracle.call("validate", source=BROKEN, path="init.pp") if d["severity"] == "error"]
    assert len(perr) == 1
    dup = oracle.call("validate", source=DUPKEY, path="dup.pp", strict="error")
    assert [(d["code"], d["severity"]) for d in dup] == [("DUPLICATE_KEY", "error")], dup
    spec = {
        # the extension starts `serverPath serverArgs` and runs `serverPath --compile/--dump ...`
        "serverPath": str(server_wrapper(tmp_path / "bin")),
        "serverArgs": ["--stdio"],
        "env": str(env_dir),
        "broken": BROKEN,
        "fixed": FIXED,
        "dupkey": DUPKEY,
        "expect": {"line": perr[0]["line"], "column": perr[0]["pos"]},
        "result": str(tmp_path / "result.json"),
    }
    (tmp_path / "spec.json").write_text(json.dumps(spec))
    env = {**os.environ, "PUPPET_XPP_E2E": str(tmp_path / "spec.json")}
    t0 = time.monotonic()
    p = subprocess.Popen(
        ["node", str(VSCODE / "out/test/e2e/server.e2e.js")],
        cwd=tmp_path,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        out, err = p.communicate(timeout=240)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, 9)
        out, err = p.communicate()
        pytest.fail(f"server.e2e.js timed out:\n{out}\n{err}")
    finally:
        try:
            os.killpg(p.pid, 9)
        except ProcessLookupError:
            pass
    assert p.returncode == 0, f"{out}\n{err}"
    res = json.loads((tmp_path / "result.json").read_text())
    print(f"vscode client e2e: {time.monotonic() - t0:.1f}s; steps (ms): {res['timings']}")
    # the server asked for section "puppet" and got the puppetXpp.* values
    assert any(item.get("section") == "puppet" for items in res["configRequests"] for item in items), res
    assert "mymod" in res["pn"] and "HostClassDefinition" in res["tree"], res
    assert (env_dir / ".xpp/modules/mymod/manifests/init.xpp").is_file()

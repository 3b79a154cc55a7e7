"""editors/vscode: TextMate grammar cases, TypeScript build, unit tests, the bundled .vsix (esbuild: no
node_modules/, what it needs at run time inside one file), the README against package.json's settings, and
the bundled extension's server discovery, version check, settings and commands against the real server and CLI.

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
from xml.etree import ElementTree

import pytest

import puppet_xpp
from tests.editors import VSCODE, editor_tool_missing, server_wrapper
from tests.test_versions import newest_heading_version

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


@pytest.fixture(scope="module")
def vsix(built, tmp_path_factory) -> Path:
    """``vsce package --no-dependencies`` (its ``vscode:prepublish`` bundles with esbuild), unpacked: the
    directory holding ``extension/``. Packaged once per worker, under the build lock (dist/ is shared)."""
    if not (BIN / "vsce").exists() or not (BIN / "esbuild").exists():
        editor_tool_missing("vsce/esbuild (npm packages of editors/vscode)")
    where = tmp_path_factory.mktemp("vsix")
    out = where / "puppet-xpp.vsix"
    with open(VSCODE / "node_modules" / ".puppet-xpp-build.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        t0 = time.monotonic()
        _run([str(BIN / "vsce"), "package", "--no-dependencies", "--out", str(out)])
        print(f"vsce package: {time.monotonic() - t0:.1f}s, {out.stat().st_size} bytes")
    with zipfile.ZipFile(out) as z:
        z.extractall(where / "unpacked")
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
    assert passed >= 19 and re.search(r"^# fail 0$", p.stdout, re.M), p.stdout
    # the server-discovery order and the version check are among them
    ran = re.findall(r"^ok \d+ - (discovery|version check|install plan|incumbent)", p.stdout, re.M)
    assert ran.count("discovery") == 4 and "version check" in ran and "install plan" in ran, p.stdout


def test_vsix_package(vsix, tmp_path):
    size = vsix.stat().st_size
    assert 50_000 < size < 2_000_000, size
    with zipfile.ZipFile(vsix) as z:
        names = set(z.namelist())
        manifest = json.loads(z.read("extension/package.json"))
        icon = z.read("extension/images/icon.png")
        vsixmanifest = z.read("extension.vsixmanifest").decode()
    for need in (
        "extension/dist/extension.js",
        "extension/images/icon.png",
        "extension/changelog.md",  # vsce writes them lower-case
        "extension/readme.md",
        "extension/syntaxes/puppet.tmLanguage.json",
        "extension/syntaxes/epp.tmLanguage.json",
        "extension/language-configuration.json",
        "extension/epp-language-configuration.json",
        "extension/LICENSE.txt",
    ):
        assert need in names, need
    # bundled: no node_modules/ at all, nor the compiled tree, sources or tests
    bad = sorted(
        n
        for n in names
        if "node_modules/" in n
        or n.startswith(("extension/src/", "extension/test/", "extension/out/", "extension/scripts/"))
        or n.endswith((".ts", ".map"))
    )
    assert bad == []
    js = [n for n in names if n.endswith(".js")]
    assert js == ["extension/dist/extension.js"], js
    assert manifest["main"] == "./dist/extension.js" and manifest["version"] == puppet_xpp.__version__
    # the Marketplace's listing: icon (a 128x128 PNG), categories and keywords (the manifest's tags)
    assert manifest["icon"] == "images/icon.png"
    assert icon[:8] == b"\x89PNG\r\n\x1a\n" and icon[12:16] == b"IHDR"
    assert (int.from_bytes(icon[16:20], "big"), int.from_bytes(icon[20:24], "big")) == (128, 128)
    assert {"Programming Languages", "Linters"} <= set(manifest["categories"])
    assert {"puppet", "puppet-lint", "epp"} <= set(manifest["keywords"])
    ns = {"vsx": "http://schemas.microsoft.com/developer/vsx-schema/2011"}
    metadata = ElementTree.fromstring(vsixmanifest).find("vsx:Metadata", ns)
    assert metadata.findtext("vsx:Icon", namespaces=ns) == "extension/images/icon.png"
    assert {"puppet", "puppet-lint"} <= set(metadata.findtext("vsx:Tags", namespaces=ns).split(","))
    assert "Linters" in metadata.findtext("vsx:Categories", namespaces=ns).split(",")
    # the bundle loads with nothing else beside it (no node_modules anywhere above it), `vscode` a stand-in
    # with the API's names
    alone = tmp_path / "alone"
    shutil.copytree(vsix.parent / "unpacked" / "extension", alone)
    p = _run(
        ["node", str(VSCODE / "out/test/e2e/vscode-stub.js"), str(alone / "dist" / "extension.js")],
        cwd=tmp_path,
        env={**os.environ, "NODE_PATH": ""},
    )
    assert p.stdout.strip() == "loaded"


def _readme_settings(readme: str) -> dict[str, tuple[str, str]]:
    """The README's settings table: setting -> (default cell, meaning cell)."""
    section = readme.split("## Settings", 1)[1]
    rows = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 3 and cells[0].startswith("`puppetXpp."):
            rows[cells[0].strip("`")] = (cells[1], cells[2])
    return rows


def test_readme_settings_match_package_json():
    """Every setting of package.json is in the README's table with its default (as JSON) and every value
    of its enum, and the table has no other setting."""
    package = json.loads((VSCODE / "package.json").read_text())
    properties = package["contributes"]["configuration"]["properties"]
    rows = _readme_settings((VSCODE / "README.md").read_text())
    assert sorted(rows) == sorted(properties)
    for name, spec in properties.items():
        default, meaning = rows[name]
        assert default.startswith("`") and default.endswith("`"), (name, default)
        assert json.loads(default.strip("`")) == spec["default"], (name, default, spec["default"])
        for value in spec.get("enum", []):
            assert f"`{value}`" in meaning, (name, value, meaning)


def test_changelog_names_the_extension_version():
    package = json.loads((VSCODE / "package.json").read_text())
    assert newest_heading_version(VSCODE / "CHANGELOG.md") == package["version"]


def test_bundled_extension_against_server(built, vsix, tmp_path, oracle):
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
    bundle = vsix.parent / "unpacked" / "extension" / "dist" / "extension.js"
    spec = {
        # the bundle from the .vsix finds `puppet-xpp` on PATH (no serverPath setting), starts it with
        # serverArgs and runs it with --compile/--dump
        "bundle": str(bundle),
        "pathDir": str(server_wrapper(tmp_path / "bin").parent),
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
    assert res["bundle"] == str(bundle)
    assert res["serverInfo"] == {"name": "puppet-xpp", "version": puppet_xpp.__version__}
    assert any(item.get("section") == "puppet" for items in res["configRequests"] for item in items), res
    assert "mymod" in res["pn"] and "HostClassDefinition" in res["tree"], res
    assert (env_dir / ".xpp/modules/mymod/manifests/init.xpp").is_file()

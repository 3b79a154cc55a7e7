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
import sys
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


def _run_node_e2e(script: str, spec_file: Path, cwd: Path) -> None:
    """``node out/test/e2e/<script>`` with ``$PUPPET_XPP_E2E`` naming its spec; it and whatever it started
    (the language server) are killed when it is done or after 240 s. Fails on a non-zero exit."""
    p = subprocess.Popen(
        ["node", str(VSCODE / "out" / "test" / "e2e" / script)],
        cwd=cwd,
        env={**os.environ, "PUPPET_XPP_E2E": str(spec_file)},
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
        pytest.fail(f"{script} timed out:\n{out}\n{err}")
    finally:
        try:
            os.killpg(p.pid, 9)
        except ProcessLookupError:
            pass
    assert p.returncode == 0, f"{script} exited {p.returncode}:\n{out}\n{err}"


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
    t0 = time.monotonic()
    _run_node_e2e("server.e2e.js", tmp_path / "spec.json", tmp_path)
    res = json.loads((tmp_path / "result.json").read_text())
    print(f"vscode client e2e: {time.monotonic() - t0:.1f}s; steps (ms): {res['timings']}")
    # the server asked for section "puppet" and got the puppetXpp.* values
    assert res["bundle"] == str(bundle)
    assert res["serverInfo"] == {"name": "puppet-xpp", "version": puppet_xpp.__version__}
    assert any(item.get("section") == "puppet" for items in res["configRequests"] for item in items), res
    assert "mymod" in res["pn"] and "HostClassDefinition" in res["tree"], res
    assert (env_dir / ".xpp/modules/mymod/manifests/init.xpp").is_file()


# --- activation of the bundled extension: a recording stand-in for VS Code's API, the real language client
# (inside the bundle) and the real server (editors/vscode/test/e2e/activate.e2e.ts)


def _activate(vsix: Path, tmp_path: Path, **spec) -> dict:
    """Activate the .vsix's bundle with ``spec`` (see activate.e2e.ts); what VS Code would have shown."""
    spec = {
        "bundle": str(vsix.parent / "unpacked" / "extension" / "dist" / "extension.js"),
        "workspace": str(tmp_path / "workspace"),
        "storage": str(tmp_path / "storage"),
        "incumbent": False,
        "version": puppet_xpp.__version__,
        "result": str(tmp_path / "activation.json"),
        **spec,
    }
    (tmp_path / "workspace").mkdir(exist_ok=True)
    (tmp_path / "activation-spec.json").write_text(json.dumps(spec))
    _run_node_e2e("activate.e2e.js", tmp_path / "activation-spec.json", tmp_path)
    return json.loads(Path(spec["result"]).read_text())


def _empty_path(tmp_path: Path) -> str:
    """A PATH with nothing of ours on it: no puppet-xpp, pipx or python3."""
    (tmp_path / "empty-path").mkdir(exist_ok=True)
    return str(tmp_path / "empty-path")


def test_activation_finds_the_server_beside_the_python_extensions_interpreter(built, vsix, tmp_path):
    """PATH has no server; the Python extension's interpreter has puppet-xpp beside it: that one starts, its
    version is the extension's (no warning), and the active Puppet extension is warned about."""
    venv_bin = tmp_path / "venv" / "bin"
    server = server_wrapper(venv_bin)
    (venv_bin / "python").symlink_to("/bin/false")
    res = _activate(
        vsix, tmp_path, path=_empty_path(tmp_path), python=str(venv_bin / "python"), incumbent=True
    )
    assert f"Language server (python): {server}" in res["output"].splitlines(), res["output"]
    assert [(n["kind"], n["items"]) for n in res["notifications"]] == [("warning", [])], res["notifications"]
    assert "puppet.puppet-vscode" in res["notifications"][0]["text"]
    # the server ran: it indexed the workspace (its work done progress reached the client)
    assert any(p["title"] == "Indexing Puppet workspace" and p["done"] for p in res["progress"]), res


def test_activation_runs_python_m_puppet_xpp_with_the_python_extensions_interpreter(built, vsix, tmp_path):
    """No puppet-xpp beside the interpreter, but it imports puppet_xpp: ``python -m puppet_xpp --stdio``."""
    venv_bin = tmp_path / "venv" / "bin"
    venv_bin.mkdir(parents=True)
    python = venv_bin / "python"
    python.write_text(f'#!/bin/sh\nPYTHONPATH={str(VSCODE.parents[1])!r} exec {sys.executable!r} "$@"\n')
    python.chmod(0o755)
    res = _activate(vsix, tmp_path, path=_empty_path(tmp_path), python=str(python))
    assert f"Language server (python): {python}" in res["output"].splitlines(), res["output"]
    assert res["notifications"] == [], res["notifications"]
    assert any(p["title"] == "Indexing Puppet workspace" and p["done"] for p in res["progress"]), res


def test_activation_without_a_server_offers_pipx_and_says_what_is_missing(built, vsix, tmp_path):
    res = _activate(vsix, tmp_path, path=_empty_path(tmp_path), click="Install with pipx")
    offer, failure = res["notifications"]
    assert offer["kind"] == "warning" and offer["items"] == ["Install with pipx", "Set serverPath"], offer
    assert "was not found" in offer["text"] and "puppet-xpp on PATH" in offer["text"], offer
    assert res["executed"] == ["puppetXpp.installServer"]
    assert failure["kind"] == "error" and "neither pipx nor python3 is on PATH" in failure["text"], failure
    assert not (tmp_path / "storage" / "pipx").exists()


def test_activation_installs_with_pipx_into_the_extension_storage(built, vsix, tmp_path):
    """ "Install with pipx" runs the pipx on PATH (here a stand-in that records its arguments and environment and
    puts a server where pipx would) with progress, then starts that server; the extension claims version 0.0.1,
    so the server's own version draws the mismatch warning."""
    bin_dir = tmp_path / "path"
    bin_dir.mkdir()
    wrapper = server_wrapper(tmp_path / "wrapper")
    (bin_dir / "pipx").write_text(
        "#!/bin/sh\n"
        f'printf \'%s\\n\' "$*" "$PIPX_HOME" "$PIPX_BIN_DIR" > {str(tmp_path / "pipx-call")!r}\n'
        'echo "creating virtual environment..."\n'
        '/bin/mkdir -p "$PIPX_BIN_DIR"\n'
        f'/bin/cp {str(wrapper)!r} "$PIPX_BIN_DIR/puppet-xpp"\n'
        'echo "installed package puppet-xpp 0.0.1"\n'
    )
    (bin_dir / "pipx").chmod(0o755)
    res = _activate(vsix, tmp_path, path=str(bin_dir), click="Install with pipx", version="0.0.1")
    storage = tmp_path / "storage"
    args, home, bin_ = (tmp_path / "pipx-call").read_text().splitlines()
    assert (args, home, bin_) == (
        "install --force puppet-xpp==0.0.1",
        str(storage / "pipx"),
        str(storage / "bin"),
    )
    installing = [p for p in res["progress"] if p["title"] == "Puppet XPP: installing the language server"]
    assert len(installing) == 1 and installing[0]["done"], res["progress"]
    assert "installed package puppet-xpp 0.0.1" in installing[0]["messages"], installing
    kinds = [(n["kind"], n["text"]) for n in res["notifications"]]
    assert kinds[0][0] == "warning" and "was not found" in kinds[0][1], kinds
    assert kinds[1] == (
        "information",
        f"Puppet XPP: installed the language server ({storage / 'bin' / 'puppet-xpp'}).",
    )
    assert (
        kinds[2][0] == "warning"
        and f"is version {puppet_xpp.__version__}, this extension is 0.0.1" in kinds[2][1]
    )
    assert len(kinds) == 3, kinds
    assert f"Language server (private): {storage / 'bin' / 'puppet-xpp'}" in res["output"].splitlines()


def test_the_client_registers_the_server_as_a_formatter_of_manifests_only(built, vsix, tmp_path):
    """The client sends Hiera's YAML and JSON and metadata.json to the server too (DOCUMENT_SELECTOR: the deep
    checks read their unsaved text), but the formatters VS Code learns of -- document, range, on-type -- are for
    Puppet manifests only: a user with a YAML or JSON formatter is not asked to choose between it and ours, and
    a new line of YAML is not formatted by us. The server registers them itself with that selector (a
    capability in its initialize answer would take the client's whole selector)."""
    res = _activate(vsix, tmp_path, path=str(server_wrapper(tmp_path / "bin").parent))
    assert any(p["title"] == "Indexing Puppet workspace" and p["done"] for p in res["progress"]), res
    kinds = sorted(f["kind"] for f in res["formatters"])
    assert kinds == ["document", "onType", "range"], res["formatters"]
    for registered in res["formatters"]:
        assert registered["selector"] == [{"language": "puppet"}], registered

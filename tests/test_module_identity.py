"""Module identity of a module cloned the way ``git clone`` lays it out (issue 24, item 1).

A module checked out as ``puppet-<name>/`` (metadata.json ``"<author>-<name>"``) is judged as Puppet judges
it once installed under its metadata name: each real corpus module is copied twice, as a clone
(``puppet-<name>/``, no environment around it) and installed as ``modules/<name>/`` of a temporary
environment, and our answer on the clone -- through ``--validate``, ``--compile FILE``, the language
server's configuration -- must equal what Puppet (the oracle's ``validate`` op with that module path)
reports on the installed copy.  Files in ``examples/`` are compared with what Puppet reports when
``puppet apply examples/x.pp`` takes them as the initial manifest (the ``manifest`` of the op).  A
misplaced class and a misplaced top-level statement are added to each clone: Puppet reports them, so
must we.  Inside an environment's module path the directory name stays the module's name.
"""

from __future__ import annotations

import dataclasses
import io
import json
import os
import shutil
import sys
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

from puppet_xpp.xpp.environment import file_context, infer_module

CORPUS = Path(os.environ.get("PUPPET_XPP_CORPUS", "/usr/share/puppet/modules"))
MODULES = ["ntp", "memcached", "postgresql", "tea"]  # manifests/, types/, functions/; 3 to 45 files
LEVEL = "7.23"  # compared with Puppet 7.23

EXTRA = {
    # Puppet never autoloads examples/: `puppet apply examples/init.pp` takes it as the initial manifest
    "examples/init.pp": "include {name}\nnode default {{ include {name} }}\nclass example_only {{ }}\n",
    "examples/site/web.pp": "class {{ '{name}': }}\n",
    # still wrong in a clone: Puppet reports them on the installed module
    "manifests/misplaced.pp": "class elsewhere {{ }}\n",
    "manifests/toplevel.pp": "class {name}::toplevel {{ }}\nnotice('x')\n",
}


def _copy(module: str, target: Path, metadata_name: str | None) -> None:
    shutil.copytree(CORPUS / module, target, symlinks=False)
    if metadata_name is not None:
        meta = json.loads((target / "metadata.json").read_text())
        meta["name"] = metadata_name
        (target / "metadata.json").write_text(json.dumps(meta))
    for rel, text in EXTRA.items():
        p = target / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text.format(name=module))


def _layouts(module: str, tmp_path: Path, separator: str = "-") -> tuple[Path, Path]:
    """(clone directory, installed directory) of ``module``."""
    if not (CORPUS / module / "metadata.json").is_file():
        pytest.skip(f"corpus module {module} not installed")
    clone = tmp_path / "src" / f"puppet-{module}"
    installed = tmp_path / "environments" / "production" / "modules" / module
    _copy(module, clone, f"someone{separator}{module}")
    _copy(module, installed, None)
    return clone, installed


def _rows(rows, clone: Path, installed: Path):
    """Comparable rows: (severity, code, line, message with the installed path read as the clone's)."""
    return sorted((r[0], r[1], r[2], r[3].replace(str(installed), str(clone))) for r in rows)


def _puppet(oracle, installed: Path, rel: str, strict: str | None = "error"):
    path = installed / rel
    autoloaded = rel.split("/", 1)[0] in ("manifests", "functions", "types", "plans")
    ds = oracle.call(
        "validate",
        file=str(path),
        modulepath=[str(installed.parent)],
        manifest=None if autoloaded else str(path),  # puppet apply FILE: FILE is the initial manifest
        tasks=rel.startswith("plans/"),
        strict=strict,
    )
    return [(d["severity"], d["code"], d["line"], d["message"]) for d in ds]


def _validate(path: Path):
    from puppet_xpp.server.cli import validate

    buf = io.StringIO()
    validate.main([str(path), "--format", "json", "--puppet-version", LEVEL, "--strict", "error"], out=buf)
    rec = json.loads(buf.getvalue().splitlines()[0])
    return [(d["severity"], d["code"], d["line"], d["message"]) for d in rec["diagnostics"]]


def _language_server(path: Path):
    from puppet_xpp.grammar.check import check
    from puppet_xpp.server.analysis.workspace import Settings, check_config_for

    cfg = check_config_for(str(path), Settings(puppet_version=LEVEL, strict="error"))
    cfg = dataclasses.replace(cfg, file=str(path))
    checked = check(path.read_text(), cfg)
    return [(d.severity, d.code, d.line_col(checked.locator)[0], d.message) for d in checked.diagnostics]


def _compile_one(path: Path, tmp_path: Path):
    from puppet_xpp.server.cli import compile as cmd_compile

    report = tmp_path / "one.json"
    cmd_compile.main(
        [str(path), "-o", str(tmp_path / "one.xpp"), "--report", str(report)]
        + ["--puppet-version", LEVEL, "--strict", "error"],
        out=io.StringIO(),
        err=io.StringIO(),
    )
    rep = json.loads(report.read_text())
    return sorted((d["severity"], d["code"], d["line"]) for d in rep["diagnostics"])


@pytest.mark.parametrize("module", MODULES)
def test_cloned_module_is_judged_as_puppet_judges_it_installed(module, tmp_path, oracle):
    clone, installed = _layouts(module, tmp_path)
    assert infer_module(str(clone / "manifests" / "init.pp")).name == module
    files = sorted(p.relative_to(clone).as_posix() for p in clone.rglob("*.pp"))
    assert "examples/init.pp" in files and len(files) > len(EXTRA)
    for rel in files:
        want = _rows(_puppet(oracle, installed, rel), clone, installed)
        assert _rows(_validate(clone / rel), clone, installed) == want, ("--validate", rel)
        assert _rows(_language_server(clone / rel), clone, installed) == want, ("language server", rel)
    # the cases, each compared with Puppet above
    assert [r[1] for r in _validate(clone / "manifests/misplaced.pp")] == ["ILLEGAL_DEFINITION_LOCATION"]
    assert [r[1] for r in _validate(clone / "manifests/toplevel.pp")] == ["ILLEGAL_TOP_CONSTRUCT_LOCATION"]
    if (clone / "manifests/init.pp").is_file():
        assert _validate(clone / "manifests/init.pp") == []
    assert _validate(clone / "examples/init.pp") == []


def test_compile_file_and_slash_separated_metadata_name(tmp_path, oracle):
    """``--compile FILE`` asks the same rule; ``author/name`` (the older metadata form) names it too."""
    clone, installed = _layouts("ntp", tmp_path, separator="/")
    for rel in ("manifests/init.pp", "manifests/misplaced.pp", "examples/init.pp", "types/key_id.pp"):
        if not (clone / rel).is_file():
            continue
        want = sorted(r[:3] for r in _puppet(oracle, installed, rel))
        assert _compile_one(clone / rel, tmp_path) == want, rel
        assert sorted(r[:3] for r in _validate(clone / rel)) == want, rel


def test_directory_name_without_usable_metadata(tmp_path):
    """No metadata.json, or no valid name in it: the directory's name (as before)."""
    bare = tmp_path / "puppet-ntp"
    (bare / "manifests").mkdir(parents=True)
    (bare / "manifests" / "init.pp").write_text("class ntp { }\n")
    assert infer_module(str(bare / "manifests" / "init.pp")).name == "puppet-ntp"
    for bad in ('{"name": "ntp"}', '{"name": "a-Bad"}', "{not json", '["x"]'):
        (bare / "metadata.json").write_text(bad)
        assert infer_module(str(bare / "manifests" / "init.pp")).name == "puppet-ntp", bad
        codes = [r[1] for r in _validate(bare / "manifests" / "init.pp")]
        assert codes == ["ILLEGAL_DEFINITION_LOCATION"], bad


def test_inside_an_environment_the_directory_name_stays(tmp_path, oracle):
    """A module on an environment's module path is named by its directory, whatever its metadata says
    (Puppet's own rule): ``modules/puppet-ntp`` is judged as Puppet judges it there."""
    env = tmp_path / "production"
    mod = env / "modules" / "ntp_clone"
    _copy("ntp", mod, "puppetlabs-ntp")
    rel = "manifests/init.pp"
    ctx = file_context(str(mod / rel))
    assert ctx.env is not None and ctx.namespace is None
    want = _puppet(oracle, mod, rel)
    assert [r[1] for r in want] == ["ILLEGAL_DEFINITION_LOCATION"]
    assert _validate(mod / rel) == want


# ------------------------------------------------------------------------------------------------ language server

REPO = Path(__file__).resolve().parent.parent
SERVER = [sys.executable, "-c", "import sys; from puppet_xpp.server.cli.main import main; sys.exit(main())"]


@pytest.fixture(scope="module")
def clone_dir(tmp_path_factory):
    if not (CORPUS / "ntp" / "metadata.json").is_file():
        pytest.skip("corpus module ntp not installed")
    root = tmp_path_factory.mktemp("ws")
    clone = root / "puppet-ntp"
    _copy("ntp", clone, "puppetlabs-ntp")
    installed = root / "env" / "modules" / "ntp"
    _copy("ntp", installed, None)
    (clone / ".git").mkdir()
    (clone / ".puppet-xpp.toml").write_text('level = "7.23"\n')  # the project's level: strict warning
    (clone / "manifests" / "dup.pp").write_text("class ntp::dup {\n  $x = { 'a' => 1, 'a' => 2 }\n}\n")
    return clone


@pytest_lsp.fixture(
    config=ClientServerConfig(server_command=SERVER, server_env={"PYTHONPATH": str(REPO)}), scope="module"
)
async def client(lsp_client: LanguageClient, clone_dir):
    await lsp_client.initialize_session(
        types.InitializeParams(
            capabilities=pytest_lsp.client_capabilities("neovim@v0.7.0"),
            root_uri=clone_dir.as_uri(),
            workspace_folders=[types.WorkspaceFolder(uri=clone_dir.as_uri(), name="puppet-ntp")],
            initialization_options={"puppet": {"lint": {"enabled": False}}},
        )
    )
    yield
    await lsp_client.shutdown_session()


@pytest.mark.asyncio(loop_scope="module")
async def test_language_server_names_the_clone_as_puppet_does(client: LanguageClient, clone_dir, oracle):
    """Through a real client: the editor's diagnostics on the clone are Puppet's on the installed
    module (location rules by metadata name, examples/ as an initial manifest), at the project's
    level (7.23: DUPLICATE_KEY is a warning)."""
    from tests.lsp.test_lsp_e2e import open_document, wait_diagnostics

    installed = clone_dir.parent / "env" / "modules" / "ntp"
    shutil.copy(clone_dir / "manifests" / "dup.pp", installed / "manifests" / "dup.pp")
    severity = {"error": types.DiagnosticSeverity.Error, "warning": types.DiagnosticSeverity.Warning}
    for rel in (
        "manifests/init.pp",
        "manifests/misplaced.pp",
        "manifests/toplevel.pp",
        "examples/init.pp",
        "manifests/dup.pp",
    ):
        want = sorted((severity[r[0]], r[1], r[2] - 1) for r in _puppet(oracle, installed, rel, None))
        uri = await open_document(client, str(clone_dir / rel))
        got = await wait_diagnostics(client, uri)
        assert sorted((d.severity, d.code, d.range.start.line) for d in got) == want, rel

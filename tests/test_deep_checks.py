"""The deep checks (server/analysis/deep, ``puppet-xpp --validate --deep``) on small environments, each
expectation taken from a real catalog compile of the same code (the oracle's ``catalog`` op,
tests/conformance/ruby/ops/catalog.rb): Puppet 7.23 (and OpenVox 8 when present) must stop at the file
and line we report, with the words we print; and on the same environment without the error Puppet
compiles the catalog and we report nothing.

Each environment is written under ``<repo>/.cache/deep_checks/<digest of its files>``, so the oracle's disk
cache answers a second run (its key is the request, which names the directory)."""

from __future__ import annotations

import hashlib
import io
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from puppet_xpp.server.cli import validate
from tests.conformance.oracle import REPO, oracle_for

ROOT = REPO / ".cache" / "deep_checks"
NODE = "node.example.com"
ENV_CONF = "modulepath = modules\n"
HIERA = """---
version: 5
defaults:
  datadir: data
  data_hash: yaml_data
hierarchy:
  - name: common
    path: common.yaml
"""


def environment(files: dict[str, str], hiera: bool = True) -> Path:
    """An environment directory holding ``files`` (relative path -> text), named by its content
    (``hiera``: with the environment's hiera.yaml)."""
    all_files = {"environment.conf": ENV_CONF, **({"hiera.yaml": HIERA} if hiera else {}), **files}
    all_files.setdefault("data/common.yaml", "---\n{}\n")
    digest = hashlib.sha256(json.dumps(all_files, sort_keys=True).encode()).hexdigest()[:16]
    root = ROOT / digest
    for rel, text in all_files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        if not p.exists() or p.read_text() != text:
            p.write_text(text)
    (root / "manifests").mkdir(exist_ok=True)
    return root


_LOCATION = re.compile(r" ?\((?:file: ([^,)]+), )?line: (\d+)(?:, column: (\d+))?\)")
_WRAPPER = re.compile(r"^(?:Evaluation Error: )?(?:Error while evaluating a [A-Za-z ]+, )?")


def words(message: str) -> str:
    """A message without the evaluator's wrappers, locations and the node's name (what we print)."""
    text = message
    while True:
        stripped = _WRAPPER.sub("", text, count=1)
        if stripped == text:
            break
        text = stripped
    text = _LOCATION.sub("", text)
    text = text.replace(f" for {NODE}", "").replace(f" on node {NODE}", "")
    return text.strip()


@dataclass
class Stop:
    """Where and why Puppet stopped a compile."""

    message: str
    file: str
    line: int
    column: int | None


def compile_stop(puppet: str, env: Path, code: str | None, strict_variables: bool = False) -> Stop | None:
    """The error a catalog compile of ``code`` (None: the environment's main manifest) in ``env`` stops
    at (None: the catalog compiled)."""
    request: dict[str, Any] = {"environment": str(env), "node": NODE, "strict_variables": strict_variables}
    if code is not None:
        request["code"] = code
    answer = oracle_for(puppet).request("catalog", **request)
    assert answer.get("ok"), answer
    result: dict[str, Any] = answer["result"]
    if result["ok"]:
        return None
    full = result["full_message"]
    # the innermost located error is written first (a location the text names -- "already declared
    # at (file: ...)" -- is part of the message, not where the error is)
    for m in _LOCATION.finditer(full):
        if m.group(1) and not full[: m.start()].endswith(" at"):
            column = int(m.group(3)) if m.group(3) else None
            if (result.get("file"), result.get("line")) == (m.group(1), int(m.group(2))):
                column = result.get("column")  # (the located error's own position is complete)
            return Stop(words(full), m.group(1), int(m.group(2)), column)
    raise AssertionError(f"no location in {result}")


def said(ours: str, puppet: str) -> bool:
    """Do our words say Puppet's?  Where Puppet prints a computed title we print ``<title>``."""
    pattern = re.escape(words(ours)).replace(re.escape("<title>"), ".+")
    return re.fullmatch(pattern, puppet) is not None


@dataclass
class Ours:
    message: str
    code: str
    severity: str
    line: int | None
    column: int | None
    file: str = ""


def ours(env: Path, *args: str) -> tuple[int, list[Ours]]:
    """The exit status and deep findings of ``--validate --deep --format json`` on the env's modules."""
    out, err = io.StringIO(), io.StringIO()
    status = validate.main(["--deep", "--format", "json", *args, str(env / "modules")], out, err)
    found = []
    for line in out.getvalue().splitlines():
        item = json.loads(line)
        for d in item["diagnostics"]:
            if d.get("source") == "puppet-xpp-deep":
                found.append(
                    Ours(d["message"], d["code"], d["severity"], d["line"], d["column"], item["file"])
                )
    return status, found


@dataclass
class Case:
    """A module ``m`` whose class ``m`` holds one error (``bad``) or not (``good``)."""

    name: str
    code: str  # our finding's code
    bad: dict[str, str]
    good: dict[str, str]
    main: str = "include m"
    extra: dict[str, str] = field(default_factory=dict)  # (the good variant's only)
    strict_variables: bool = False  # (what the unknown-variable warning stands for)


def m(body: str) -> str:
    return "class m {\n" + body + "}\n"


C_CLASS = "class m::c(Integer $x, String $y = 'a') {\n  notice($x)\n}\n"
D_DEFINE = "define m::d(Integer $x, String $y = 'a') {\n  notice($x)\n}\n"
F_FUNCTION = "function m::f(Integer $a, $b = 1) >> Integer {\n  $a\n}\n"
LIB = {
    "modules/m/manifests/c.pp": C_CLASS,
    "modules/m/manifests/d.pp": D_DEFINE,
    "modules/m/functions/f.pp": F_FUNCTION,
}

CASES = [
    Case("include unknown class", "DEEP_UNKNOWN_CLASS", {"modules/m/manifests/init.pp": m("  include m::nosuch\n")}, {"modules/m/manifests/init.pp": m("  include m::c\n")}, extra={"data/common.yaml": "---\nm::c::x: 1\n"}),
    Case("contain unknown class", "DEEP_UNKNOWN_CLASS", {"modules/m/manifests/init.pp": m("  contain m::nosuch\n")}, {"modules/m/manifests/init.pp": m("  contain m::c\n")}, extra={"data/common.yaml": "---\nm::c::x: 1\n"}),
    Case("require unknown class", "DEEP_UNKNOWN_CLASS", {"modules/m/manifests/init.pp": m("  require m::nosuch\n")}, {"modules/m/manifests/init.pp": m("  require m::c\n")}, extra={"data/common.yaml": "---\nm::c::x: 1\n"}),
    Case("include a list with Class[]", "DEEP_UNKNOWN_CLASS", {"modules/m/manifests/init.pp": m("  include ['m::c', Class['m::nosuch']]\n")}, {"modules/m/manifests/init.pp": m("  include ['m::c', Class['m::c']]\n")}, extra={"data/common.yaml": "---\nm::c::x: 1\n"}),
    Case("declared unknown class", "DEEP_UNKNOWN_DECLARED_CLASS", {"modules/m/manifests/init.pp": m("  class { 'm::nosuch': }\n")}, {"modules/m/manifests/init.pp": m("  class { 'm::c': x => 1 }\n")}),
    Case("unknown define", "DEEP_UNKNOWN_RESOURCE_TYPE", {"modules/m/manifests/init.pp": m("  m::nosuch { 't': }\n")}, {"modules/m/manifests/init.pp": m("  m::d { 't': x => 1 }\n")}),
    Case("unknown type", "DEEP_UNKNOWN_RESOURCE_TYPE", {"modules/m/manifests/init.pp": m("  nosuchtype { 't': }\n")}, {"modules/m/manifests/init.pp": m("  notify { 't': }\n")}),
    Case("unknown function", "DEEP_UNKNOWN_FUNCTION", {"modules/m/manifests/init.pp": m("  $v = nosuchfn(1)\n  notice($v)\n")}, {"modules/m/manifests/init.pp": m("  $v = m::f(1)\n  notice($v)\n")}),
    Case("unknown module function", "DEEP_UNKNOWN_FUNCTION", {"modules/m/manifests/init.pp": m("  $v = m::nosuch(1)\n  notice($v)\n")}, {"modules/m/manifests/init.pp": m("  $v = m::f(1, 2)\n  notice($v)\n")}),
    Case("unknown method", "DEEP_UNKNOWN_FUNCTION", {"modules/m/manifests/init.pp": m("  $v = [1].nosuchm()\n  notice($v)\n")}, {"modules/m/manifests/init.pp": m("  $v = [1].join(',')\n  notice($v)\n")}),
    Case("class unknown parameter", "DEEP_UNKNOWN_PARAMETER", {"modules/m/manifests/init.pp": m("  class { 'm::c': x => 1, z => 2 }\n")}, {"modules/m/manifests/init.pp": m("  class { 'm::c': x => 1, y => 'b', tag => 'q' }\n")}),
    Case("class missing parameter", "DEEP_MISSING_PARAMETER", {"modules/m/manifests/init.pp": m("  class { 'm::c': y => 'b' }\n")}, {"modules/m/manifests/init.pp": m("  class { 'm::c': x => 2 }\n")}),
    Case("include missing parameter", "DEEP_MISSING_PARAMETER", {"modules/m/manifests/init.pp": m("  include m::c\n")}, {"modules/m/manifests/init.pp": m("  include m::c\n")}, extra={"data/common.yaml": "---\nm::c::x: 1\n"}),
    Case("define unknown parameter", "DEEP_UNKNOWN_PARAMETER", {"modules/m/manifests/init.pp": m("  m::d { 't': x => 1, z => 2 }\n")}, {"modules/m/manifests/init.pp": m("  m::d { 't': x => 1, require => Notify['n'] }\n  notify { 'n': }\n")}),
    Case("missing parameter a default reads", "DEEP_MISSING_PARAMETER", {"modules/m/manifests/init.pp": m("  include m::r\n"), "modules/m/manifests/r.pp": "class m::r(String $a, String $b, String $c = \"${b}/x\") {\n}\n"}, {"modules/m/manifests/init.pp": m("  class { 'm::r': a => 'a', b => 'b' }\n"), "modules/m/manifests/r.pp": "class m::r(String $a, String $b, String $c = \"${b}/x\") {\n}\n"}),
    Case("define missing parameter", "DEEP_MISSING_PARAMETER", {"modules/m/manifests/init.pp": m("  m::d { 't': y => 'b' }\n")}, {"modules/m/manifests/init.pp": m("  m::d { default: x => 1; 't': y => 'b' }\n")}),
    Case("core type unknown attribute", "DEEP_UNKNOWN_ATTRIBUTE", {"modules/m/manifests/init.pp": m("  file { '/tmp/x': bogus => 1 }\n")}, {"modules/m/manifests/init.pp": m("  file { '/tmp/x': name => '/tmp/x', ensure => file }\n")}),
    Case("builtin arity", "DEEP_WRONG_ARITY", {"modules/m/manifests/init.pp": m("  $v = join([1], ',', 3, 4)\n  notice($v)\n")}, {"modules/m/manifests/init.pp": m("  $v = join([1], ',')\n  notice($v)\n")}),
    Case("puppet function arity", "DEEP_WRONG_ARITY", {"modules/m/manifests/init.pp": m("  $v = m::f()\n  notice($v)\n")}, {"modules/m/manifests/init.pp": m("  $v = m::f(1)\n  notice($v)\n")}),
    Case("class parameter type", "DEEP_WRONG_TYPE", {"modules/m/manifests/init.pp": m("  class { 'm::c': x => 'a' }\n")}, {"modules/m/manifests/init.pp": m("  class { 'm::c': x => 3 }\n")}),
    Case("define parameter default from the title", "DEEP_WRONG_TYPE", {"modules/m/manifests/init.pp": m("  m::n { '/tmp/x': }\n"), "modules/m/manifests/n.pp": "define m::n(Pattern[/^[^\\/]+$/] $file = $name) {\n}\n"}, {"modules/m/manifests/init.pp": m("  m::n { 'x': }\n"), "modules/m/manifests/n.pp": "define m::n(Pattern[/^[^\\/]+$/] $file = $name) {\n}\n"}),
    Case("define parameter type", "DEEP_WRONG_TYPE", {"modules/m/manifests/init.pp": m("  m::d { 't': x => 1, y => 2 }\n")}, {"modules/m/manifests/init.pp": m("  m::d { 't': x => 1, y => '2' }\n")}),
    Case("function argument type", "DEEP_WRONG_TYPE", {"modules/m/manifests/init.pp": m("  $v = m::f('a')\n  notice($v)\n")}, {"modules/m/manifests/init.pp": m("  $v = m::f(4)\n  notice($v)\n")}),
    Case("builtin argument type", "DEEP_WRONG_TYPE", {"modules/m/manifests/init.pp": m("  $v = length(1)\n  notice($v)\n")}, {"modules/m/manifests/init.pp": m("  $v = length([1])\n  notice($v)\n")}),
    Case("builtin argument of a local type", "DEEP_WRONG_TYPE", {"modules/m/manifests/init.pp": m("  $v = downcase(true)\n  notice($v)\n")}, {"modules/m/manifests/init.pp": m("  $v = downcase(['A', {'B' => 1}])\n  notice($v)\n")}),
    Case("builtin argument a Hash against Iterable", "DEEP_WRONG_TYPE", {"modules/m/manifests/init.pp": m("  $v = chomp({})\n  notice($v)\n")}, {"modules/m/manifests/init.pp": m("  $v = chomp(['a', 'b'])\n  notice($v)\n")}),
    Case("builtin argument type of dispatches", "DEEP_WRONG_TYPE", {"modules/m/manifests/init.pp": m("  $v = empty(true)\n  notice($v)\n")}, {"modules/m/manifests/init.pp": m("  $v = empty('a')\n  notice($v)\n")}),
    Case("method argument type", "DEEP_WRONG_TYPE", {"modules/m/manifests/init.pp": m("  $v = 1.length()\n  notice($v)\n")}, {"modules/m/manifests/init.pp": m("  $v = 'ab'.length()\n  notice($v)\n")}),
    Case("unexpected block", "DEEP_BLOCK", {"modules/m/manifests/init.pp": m("  $v = m::f(1) |$x| { $x }\n  notice($v)\n")}, {"modules/m/manifests/init.pp": m("  $v = [1].map |$x| { $x }\n  notice($v)\n")}),
    Case("missing block", "DEEP_BLOCK", {"modules/m/manifests/init.pp": m("  $v = [1].map()\n  notice($v)\n")}, {"modules/m/manifests/init.pp": m("  $v = [1].map |$x| { $x }\n  notice($v)\n")}),
    Case("assert_type", "DEEP_WRONG_TYPE", {"modules/m/manifests/init.pp": m("  $v = assert_type(Integer, 'x')\n  notice($v)\n")}, {"modules/m/manifests/init.pp": m("  $v = assert_type(Integer, 'x') |$e, $a| { 0 }\n  notice($v)\n")}),
    Case("duplicate resource", "DEEP_DUPLICATE_RESOURCE", {"modules/m/manifests/init.pp": m("  notify { 'a': }\n  notify { ['b', 'a']: }\n")}, {"modules/m/manifests/init.pp": m("  notify { 'a': }\n  if $facts['nosuchfact'] { notify { 'a': } } else { notify { 'b': } }\n")}),
    Case("class reference", "DEEP_UNKNOWN_CLASS_REFERENCE", {"modules/m/manifests/init.pp": m("  notify { 'n':\n    require => [Notify['q'], Class['m::nosuch']],\n  }\n  notify { 'q': }\n")}, {"modules/m/manifests/init.pp": m("  include m::c\n  notify { 'n': require => Class['m::c'] }\n")}, extra={"data/common.yaml": "---\nm::c::x: 1\n"}),
    Case("type reference", "DEEP_UNKNOWN_TYPE_REFERENCE", {"modules/m/manifests/init.pp": m("  notify { 'n': subscribe => Nosuchtype['x'] }\n")}, {"modules/m/manifests/init.pp": m("  m::d { 'x': x => 1 }\n  notify { 'n': subscribe => M::D['x'] }\n")}),
    Case("computed title unknown attribute", "DEEP_UNKNOWN_ATTRIBUTE", {"modules/m/manifests/init.pp": "class m(String $path = '/tmp/a') {\n  file { $path:\n    modde => '0644',\n  }\n}\n"}, {"modules/m/manifests/init.pp": "class m(String $path = '/tmp/a') {\n  file { $path:\n    mode => '0644',\n  }\n}\n"}),
    Case("duplicate in a chain", "DEEP_DUPLICATE_RESOURCE", {"modules/m/manifests/init.pp": m("  notify { 'a': } -> notify { 'b': }\n  notify { 'b': }\n")}, {"modules/m/manifests/init.pp": m("  notify { 'a': } -> notify { 'b': }\n  notify { 'c': }\n")}),
    Case("define parameter from a resource default", "DEEP_MISSING_PARAMETER", {"modules/m/manifests/init.pp": m("  M::D { y => 'b' }\n  m::d { 't': }\n")}, {"modules/m/manifests/init.pp": m("  M::D { x => 1 }\n  m::d { 't': }\n")}),
    Case("inherited scope variable", "DEEP_UNKNOWN_VARIABLE", {"modules/m/manifests/init.pp": "class m inherits m::params {\n  $v = $pathh\n  notice($v)\n}\n", "modules/m/manifests/params.pp": "class m::params {\n  $path = 1\n}\n"}, {"modules/m/manifests/init.pp": "class m inherits m::params {\n  $v = $path\n  notice($v)\n}\n", "modules/m/manifests/params.pp": "class m::params {\n  $path = 1\n}\n"}, strict_variables=True),
    Case("unknown variable", "DEEP_UNKNOWN_VARIABLE", {"modules/m/manifests/init.pp": m("  $known = 1\n  notice(\"${known} ${nosuchvar}\")\n")}, {"modules/m/manifests/init.pp": m("  $known = 1\n  [2].each |$v| { notice(\"${known} ${v} ${title} ${name}\") }\n  notice($facts['os'], $trusted['certname'], $module_name)\n")}, strict_variables=True),
    Case("unknown variable in a define", "DEEP_UNKNOWN_VARIABLE", {"modules/m/manifests/init.pp": m("  m::v { 'a': }\n"), "modules/m/manifests/v.pp": "define m::v($p = 1) {\n  notice($q)\n}\n"}, {"modules/m/manifests/init.pp": m("  m::v { 'a': }\n"), "modules/m/manifests/v.pp": "define m::v($p = 1) {\n  notice($p, $title, $name)\n}\n"}, strict_variables=True),
    Case("duplicate class", "DEEP_DUPLICATE_RESOURCE", {"modules/m/manifests/init.pp": m("  class { 'm::c': x => 1 }\n  class { 'm::c': x => 1 }\n")}, {"modules/m/manifests/init.pp": m("  class { 'm::c': x => 1 }\n  include m::c\n")}),
]  # fmt: skip


def _files(case: Case, which: dict[str, str]) -> dict[str, str]:
    """The environment of a case: the library module, the case's class, and for the good variant the
    case's extra files (the Hiera data that gives a required parameter)."""
    return {**LIB, **which, **(case.extra if which is case.good else {})}


@pytest.fixture(scope="module", params=["7.23", "8"])
def puppet(request: pytest.FixtureRequest) -> str:
    oracle_for(request.param)  # (skips when that Puppet is absent)
    return str(request.param)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_error_found_where_puppet_stops(case: Case, puppet: str) -> None:
    env = environment(_files(case, case.bad))
    stop = compile_stop(puppet, env, case.main, case.strict_variables)
    assert stop is not None, f"Puppet {puppet} compiled the seeded catalog"
    status, found = ours(env)
    at = [f for f in found if Path(f.file).resolve() == Path(stop.file).resolve() and f.line == stop.line]
    assert at, f"Puppet {puppet}: {stop}; ours: {found}"
    assert any(f.code == case.code for f in at), at
    mine = [f for f in at if f.code == case.code and said(f.message, stop.message)]
    assert mine, (stop, at)
    match = mine[0]
    assert match.column == stop.column, (stop, match)
    assert status == (1 if match.severity == "error" else 0)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_nothing_where_puppet_compiles(case: Case, puppet: str) -> None:
    env = environment(_files(case, case.good))
    assert compile_stop(puppet, env, case.main, case.strict_variables) is None
    status, found = ours(env)
    assert found == [] and status == 0, found


def test_missing_module_is_one_note() -> None:
    """Names of a module that is not on the module path: one note naming the module (at its first use
    in the run's first file that names it), no error."""
    body = "  include gone::a\n  gone::t { 'x': }\n  $v = gone::f()\n  notice($v)\n"
    env = environment(
        {
            "modules/m/manifests/init.pp": m(body),
            "modules/m/manifests/z.pp": "class m::z {\n  include gone\n}\n",
        }
    )
    status, found = ours(env)
    assert [(Path(f.file).name, f.code, f.severity, f.line) for f in found] == [
        ("init.pp", "DEEP_MISSING_MODULE", "note", 2)
    ]
    assert "'gone'" in found[0].message
    assert status == 0


def test_site_classes_and_top_scope_variables_exist() -> None:
    """The classes the environment's main manifest defines and the variables it sets at top scope
    exist: Puppet compiles (strict_variables), we report nothing -- also through a World given only
    the environment's directory (the language server's), which reads the manifest environment.conf
    names."""
    from puppet_xpp.server.analysis.deep import World
    from puppet_xpp.server.analysis.index import WorkspaceIndex

    env = environment(
        {
            **LIB,
            "manifests/site.pp": "$topvar = 1\nclass site_only {\n  notice('s')\n}\ninclude m\n",
            "modules/m/manifests/init.pp": m("  include site_only\n  notice($topvar)\n"),
        }
    )
    assert compile_stop("7.23", env, None, strict_variables=True) is None
    assert ours(env) == (0, [])
    world = World(WorkspaceIndex(), modulepath=[str(env / "modules")], env_root=str(env))
    assert world.top_variable("topvar") is True and world.top_variable("other") is False


def test_environment_functions_exist() -> None:
    """``environment::f`` in ``<env>/functions`` is the environment's own function (Puppet's directory
    environments load it; the oracle's environment is made from its module path and manifest alone, so
    this one is not compiled): no unknown-function finding, no missing-module note."""
    env = environment(
        {
            **LIB,
            "functions/f.pp": "function environment::f() >> Integer {\n  1\n}\n",
            "modules/m/manifests/init.pp": m("  $v = environment::f()\n  notice($v)\n"),
        }
    )
    assert ours(env) == (0, [])
    gone = environment({**LIB, "modules/m/manifests/init.pp": m("  $v = environment::g()\n  notice($v)\n")})
    assert [f.code for f in ours(gone)[1]] == ["DEEP_UNKNOWN_FUNCTION"]


def test_module_checkout_with_a_modulepath(tmp_path: Path) -> None:
    """A module checked out as ``puppet-m/`` (its name from metadata.json) with its dependencies on
    ``--modulepath``: its own classes, the dependencies' exist; a missing class of a dependency is an
    error; a module on neither is one note."""
    (tmp_path / "puppet-m" / "manifests").mkdir(parents=True)
    (tmp_path / "puppet-m" / "metadata.json").write_text(
        '{"name": "acme-m", "version": "1.0.0", "dependencies": []}'
    )
    (tmp_path / "puppet-m" / "manifests" / "c.pp").write_text("class m::c {\n}\n")
    (tmp_path / "puppet-m" / "manifests" / "init.pp").write_text(
        "class m {\n  include m::c\n  include dep\n  include dep::nosuch\n  include gone\n}\n"
    )
    (tmp_path / "deps" / "dep" / "manifests").mkdir(parents=True)
    (tmp_path / "deps" / "dep" / "manifests" / "init.pp").write_text("class dep {\n}\n")
    out = io.StringIO()
    args = ["--deep", "--format", "json", "--modulepath", str(tmp_path / "deps"), str(tmp_path / "puppet-m")]
    assert validate.main(args, out, io.StringIO()) == 1
    found = [
        (d["code"], d["line"], d["message"])
        for item in map(json.loads, out.getvalue().splitlines())
        for d in item["diagnostics"]
    ]
    assert found == [
        ("DEEP_UNKNOWN_CLASS", 4, "Could not find class ::dep::nosuch"),
        ("DEEP_MISSING_MODULE", 5, "Module 'gone' is not on the module path: what it defines is not checked"),
    ]


def test_a_file_outside_any_module_path_proves_no_unknown_name(tmp_path: Path) -> None:
    """A lone manifest (no environment, no module, no --modulepath): nothing is known to be missing, so
    no unknown class, type or function; what needs no world (a duplicate) is still found."""
    lone = tmp_path / "lone.pp"
    lone.write_text(
        "include apache\nvalidate_string('x')\nfile_line { 'x': }\nnotify { 'a': }\nnotify { 'a': }\n"
    )
    out = io.StringIO()
    assert validate.main(["--deep", "--format", "json", str(lone)], out, io.StringIO()) == 1
    items = json.loads(out.getvalue())["diagnostics"]
    assert [(d["code"], d["line"]) for d in items] == [("DEEP_DUPLICATE_RESOURCE", 5)]


def test_defined_guard_and_dynamic_names_are_not_reported() -> None:
    body = (
        "  if defined('m::maybe') { include m::maybe }\n"
        "  $n = 'm::x'\n  include $n\n  $t = 'm::d'\n"
        "  Resource[$t] { 'q': x => 1 }\n"
        "  class { 'm::c': * => { 'x' => 1 } }\n"
    )
    env = environment({**LIB, "modules/m/manifests/init.pp": m(body)})
    assert ours(env)[1] == []


def test_hiera_data_gives_the_required_parameter() -> None:
    """A class parameter without a default is given by the environment's data (no finding), and by a
    module layer's; a backend we cannot read statically proves nothing."""
    files = {**LIB, "modules/m/manifests/init.pp": m("  include m::c\n")}
    assert [f.code for f in ours(environment(files))[1]] == ["DEEP_MISSING_PARAMETER"]
    module_layer = {
        **files,
        "modules/m/hiera.yaml": HIERA,
        "modules/m/data/common.yaml": "---\nm::c::x: 5\n",
    }
    assert ours(environment(module_layer))[1] == []
    custom = {**files, "hiera.yaml": HIERA.replace("data_hash: yaml_data", "data_hash: m::backend")}
    assert ours(environment(custom))[1] == []


def test_an_environment_without_hiera_yaml_has_no_data(puppet: str) -> None:
    """Puppet reads an environment's data/common.yaml only through its hiera.yaml (7.23's and OpenVox
    8's lookup adapter gives an environment without one no data provider): the key set there does not
    give the parameter, and we say what Puppet stops with, where; unless environment.conf names a data
    provider (deprecated: then its Hiera is not read statically, and we say nothing)."""
    files = {
        **LIB,
        "modules/m/manifests/init.pp": m("  include m::c\n"),
        "data/common.yaml": "---\nm::c::x: 5\n",
    }
    env = environment(files, hiera=False)
    stop = compile_stop(puppet, env, "include m")
    assert stop is not None and stop.file.endswith("init.pp") and stop.line == 2
    found = ours(env)[1]
    assert [(f.code, f.line) for f in found] == [("DEEP_MISSING_PARAMETER", 2)] and said(
        found[0].message, stop.message
    )
    assert ours(environment(files))[1] == []  # (with hiera.yaml: given)
    provided = environment(
        {**files, "environment.conf": ENV_CONF + "environment_data_provider = hiera\n"}, hiera=False
    )
    assert compile_stop(puppet, provided, "include m") is None
    assert ours(provided)[1] == []


def test_plain_validate_has_no_deep_findings() -> None:
    env = environment({**LIB, "modules/m/manifests/init.pp": m("  include m::nosuch\n")})
    out, err = io.StringIO(), io.StringIO()
    assert validate.main([str(env / "modules")], out, err) == 0
    assert out.getvalue() == ""
    out = io.StringIO()
    assert validate.main(["--deep", str(env / "modules")], out, err) == 1
    assert out.getvalue() == (
        f"Error: Could not find class ::m::nosuch (file: {env / 'modules/m/manifests/init.pp'}, line: 2, column: 3)\n"
    )


@pytest.mark.parametrize("fmt", ["sarif", "junit", "github", "codeclimate"])
def test_every_format_names_the_deep_tool(fmt: str) -> None:
    env = environment({**LIB, "modules/m/manifests/init.pp": m("  include m::nosuch\n")})
    out, err = io.StringIO(), io.StringIO()
    assert validate.main(["--deep", "--format", fmt, str(env / "modules")], out, err) == 1
    text = out.getvalue()
    assert "puppet-xpp-deep" in text and "DEEP_UNKNOWN_CLASS" in text
    assert "Could not find class ::m::nosuch" in text


def test_sarif_rules_carry_the_deep_templates() -> None:
    """A SARIF rule's help text is its code's severity and template from the deep checks' table, as a
    validation issue's is from the issue table (not the bare code)."""
    env = environment({**LIB, "modules/m/manifests/init.pp": m("  include m::nosuch\n  $v = length(1)\n")})
    out, err = io.StringIO(), io.StringIO()
    assert validate.main(["--deep", "--format", "sarif", str(env / "modules")], out, err) == 1
    rules = {r["id"]: r for run in json.loads(out.getvalue())["runs"] for r in run["tool"]["driver"]["rules"]}
    help_texts = {code: json.dumps(rules[code]) for code in ("DEEP_UNKNOWN_CLASS", "DEEP_WRONG_TYPE")}
    assert "DEEP_UNKNOWN_CLASS (error): Could not find class ::{name}" in help_texts["DEEP_UNKNOWN_CLASS"]
    assert "DEEP_WRONG_TYPE (error): {message}" in help_texts["DEEP_WRONG_TYPE"]


CORPUS = Path("/usr/share/puppet/modules")


@pytest.mark.parametrize("module", ["apache", "stdlib", "postgresql"])
def test_deep_keeps_the_validation_output(module: str) -> None:
    """``--deep`` parses each file once for its validation and its index entries: the validation's
    diagnostics are those of plain ``--validate``, item for item, on real modules."""
    if not (CORPUS / module).is_dir():
        pytest.skip(f"corpus module {module} not installed")
    runs = []
    for extra in ([], ["--deep"]):
        out = io.StringIO()
        validate.main([*extra, "--format", "json", str(CORPUS / module)], out, io.StringIO())
        runs.append(
            [
                (item["file"], [d for d in item["diagnostics"] if d.get("source") != "puppet-xpp-deep"])
                for item in map(json.loads, out.getvalue().splitlines())
            ]
        )
    assert runs[0] == runs[1]
    assert len(runs[0]) > 10


def test_syntax_error_gets_no_deep_finding() -> None:
    """A file Puppet's parser rejects: its syntax error, as plain --validate prints it, and no deep
    finding (the program is not Puppet's); the other files are still checked."""
    env = environment(
        {
            **LIB,
            "modules/m/manifests/init.pp": m("  include m::nosuch\n"),
            "modules/m/manifests/broken.pp": "class m::broken {\n  include m::nosuch\n",
        }
    )
    plain, deep = io.StringIO(), io.StringIO()
    validate.main([str(env / "modules")], plain, io.StringIO())
    validate.main(["--deep", str(env / "modules")], deep, io.StringIO())
    assert deep.getvalue().startswith(plain.getvalue())
    assert deep.getvalue()[len(plain.getvalue()) :] == (
        f"Error: Could not find class ::m::nosuch (file: {env / 'modules/m/manifests/init.pp'}, line: 2, column: 3)\n"
    )


def test_a_failing_check_costs_only_its_file(monkeypatch: pytest.MonkeyPatch) -> None:
    """An internal failure of the deep checks on one file is that file's INTERNAL_ERROR (status 2);
    the other files' findings are still reported."""
    from puppet_xpp.server.analysis.deep import calls

    env = environment(
        {
            **LIB,
            "modules/m/manifests/init.pp": m("  include m::nosuch\n"),
            "modules/m/manifests/boom.pp": "class m::boom {\n  $v = join([1], ',')\n  notice($v)\n}\n",
        }
    )
    real = calls.check_call

    def failing(call: Any, place: Any, answers: Any) -> Any:
        if place.path.endswith("boom.pp"):
            raise RuntimeError("boom")
        return real(call, place, answers)

    monkeypatch.setattr(calls, "check_call", failing)
    out = io.StringIO()
    assert validate.main(["--deep", "--format", "json", str(env / "modules")], out, io.StringIO()) == 2
    by_file = {Path(i["file"]).name: i["diagnostics"] for i in map(json.loads, out.getvalue().splitlines())}
    assert [d["code"] for d in by_file["boom.pp"]] == ["INTERNAL_ERROR"]
    assert [d["code"] for d in by_file["init.pp"]] == ["DEEP_UNKNOWN_CLASS"]


def test_only_the_loaded_directories_define(tmp_path: Path) -> None:
    """A class defined in a module's examples/ is not loadable (Puppet's loaders read manifests/...):
    another file's include of it is unknown; the example file's own include of it is not (a file sees
    its own definitions, as `puppet apply` of it would)."""
    env = environment(
        {
            **LIB,
            "modules/m/examples/demo.pp": "class m::demo {\n}\ninclude m::demo\n",
            "modules/m/manifests/init.pp": m("  include m::demo\n"),
        }
    )
    assert compile_stop("7.23", env, "include m") == Stop(
        "Could not find class ::m::demo", str(env / "modules/m/manifests/init.pp"), 2, 3
    )
    status, found = ours(env)
    assert [(Path(f.file).name, f.code, f.line) for f in found] == [("init.pp", "DEEP_UNKNOWN_CLASS", 2)]

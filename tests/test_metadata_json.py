"""metadata.json and the modules a file sees, against the real Puppet 7.23.

The module-path lookup (``server/analysis/modules.py``) is compared with ``Puppet::Node::Environment#modules``
(names, directories, versions, forge names) on the corpus and on a made-up module path with shadowed,
invalid and broken modules.  Ruby runs once per question batch (``ruby -e``, Puppet's libraries as the
oracle loads them: ``tests/conformance/puppets.py``); nothing is cached from our own output.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from puppet_xpp.server.analysis import jsonpos, metadata_json, modules, semver
from puppet_xpp.server.analysis.filekinds import FileText
from tests.conformance.puppets import missing_reason, ruby_command

CORPUS = Path("/usr/share/puppet/modules")

# Puppet with its settings in a scratch directory; reads a JSON request on stdin, prints a JSON answer.
_RUBY_PRELUDE = r"""
require 'json'
require 'tmpdir'
out = STDOUT.dup
STDOUT.reopen(STDERR)
require 'puppet'
tmp = Dir.mktmpdir('xpp-metadata-')
Puppet.initialize_settings(['--confdir', tmp, '--vardir', tmp, '--codedir', tmp, '--logdir', tmp,
                            '--rundir', tmp])
req = JSON.parse(STDIN.read)
"""


def ask_puppet(body: str, request: Any) -> Any:
    """Run ``body`` (Ruby: reads ``req``, sets ``result``) in a Puppet 7.23 process; its JSON answer."""
    reason = missing_reason("7.23")
    if reason is not None:
        if os.environ.get("CI"):
            pytest.fail(reason)
        pytest.skip(reason)
    code = _RUBY_PRELUDE + body + "\nout.write(JSON.generate(result))\n"
    done = subprocess.run(
        [*ruby_command("7.23"), "-e", code],
        input=json.dumps(request),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout)


_PUPPET_MODULES = r"""
env = Puppet::Node::Environment.create(:xpp, req['modulepath'])
result = env.modules.map do |m|
  [m.name, m.path, m.version, m.forge_name]
end
"""

_PUPPET_BY_FORGE_NAME = r"""
env = Puppet::Node::Environment.create(:xpp, req['modulepath'])
result = req['names'].map do |n|
  m = env.module_by_forge_name(n.tr('-', '/'))
  m && m.path
end
"""


def ours(modulepath: list[str]) -> list[list[Any]]:
    """Our modules as Puppet lists them: the ones it loads (no problem), forge name with a slash."""
    found = modules.modules_on_path(modulepath)
    return [
        [m.name, m.directory, m.version, m.forge_name.replace("-", "/", 1) if m.forge_name else None]
        for m in found.values()
        if m.problem is None
    ]


def puppet_listed(answer: list[list[Any]]) -> list[list[Any]]:
    """Puppet's list with a version that is not a string as None (we keep versions as text only)."""
    return sorted([n, p, v if isinstance(v, str) else None, f] for n, p, v, f in answer)


def test_modules_on_the_corpus_path_are_puppets() -> None:
    if not CORPUS.is_dir():
        pytest.skip("corpus not installed")
    path = [str(CORPUS)]
    expected = ask_puppet(_PUPPET_MODULES, {"modulepath": path})
    assert len(expected) > 40
    assert sorted(ours(path)) == puppet_listed(expected)
    found = modules.modules_on_path(path)
    for m in found.values():
        assert modules.find_module(path, m.name) == m
    # a dependency's module: Puppet's module_by_forge_name, for each full name (with both separators)
    names = sorted({n for m in found.values() if m.full_name for n in (m.full_name, m.forge_name)})
    names += ["puppetlabs-nothere", "someone-stdlib"]
    by_forge = ask_puppet(_PUPPET_BY_FORGE_NAME, {"modulepath": path, "names": names})
    assert any(p is None for p in by_forge) and any(p is not None for p in by_forge)
    for name, puppets in zip(names, by_forge, strict=True):
        module = modules.find_by_forge_name(path, name)
        assert (module.directory if module else None) == puppets, name


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def test_modules_shadowed_invalid_and_broken_as_puppet(tmp_path: Path) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    _write(
        first / "stdlib" / "metadata.json",
        json.dumps(
            {
                "name": "puppetlabs-stdlib",
                "version": "9.1.0",
                "author": "puppetlabs",
                "license": "Apache-2.0",
                "source": "s",
                "dependencies": [],
            }
        ),
    )
    _write(second / "stdlib" / "metadata.json", json.dumps({"name": "other-stdlib", "version": "1.0.0"}))
    _write(second / "concat" / "metadata.json", json.dumps({"name": "puppetlabs/concat", "version": "7.0.0"}))
    _write(second / "broken" / "metadata.json", '{"name": "a-broken", "version": ')
    _write(second / "bare" / "manifests" / "init.pp", "class bare {}\n")
    _write(second / "Upper" / "manifests" / "init.pp", "class upper {}\n")
    _write(second / "with-dash" / "manifests" / "init.pp", "class x {}\n")
    _write(second / "afile", "not a module\n")
    complete = {"author": "x", "license": "MIT", "source": "s", "dependencies": []}
    _write(
        second / "numbered" / "metadata.json", json.dumps({"name": "x-numbered", "version": 3, **complete})
    )
    _write(
        second / "loaded" / "metadata.json", json.dumps({"name": "x-loaded", "version": "2.0.0", **complete})
    )
    bad_deps = {**complete, "dependencies": {"name": "a-b"}}
    _write(
        second / "baddeps" / "metadata.json",
        json.dumps({"name": "x-baddeps", "version": "1.0.0", **bad_deps}),
    )
    _write(second / "empty" / "metadata.json", "{}")
    path = [str(first), str(tmp_path / "absent"), str(second)]
    expected = ask_puppet(_PUPPET_MODULES, {"modulepath": path})
    assert sorted(ours(path)) == puppet_listed(expected)
    stdlib = modules.find_module(path, "puppetlabs-stdlib")
    assert stdlib is not None and stdlib.version == "9.1.0" and stdlib.author == "puppetlabs"
    assert stdlib.entry_file == str(first / "stdlib" / "metadata.json")
    bare = modules.find_module(path, "bare")
    assert bare is not None and bare.entry_file == str(second / "bare" / "manifests" / "init.pp")
    assert modules.find_module(path, "Upper") is None
    assert modules.find_module(path, "nothere") is None
    # Puppet does not load a module whose metadata.json lacks a key it needs, nor one shadowed by it
    # (the modules we list with a problem are exactly those Puppet drops)
    concat = modules.find_module(path, "concat")
    assert concat is not None and concat.problem == "its metadata.json has no 'source'"
    listed = modules.modules_on_path(path)
    with_problem = sorted(m.name for m in listed.values() if m.problem)
    assert with_problem == ["baddeps", "concat"]
    assert with_problem == sorted(set(listed) - {n for n, *_ in expected})


def test_modulepath_for_a_metadata_file_is_the_environment_models(tmp_path: Path) -> None:
    """A module's own metadata.json sees the modules beside it: an environment's module path, or for a
    module checked out on its own, the directory holding it (xpp.environment.infer_module)."""
    env = tmp_path / "env"
    _write(env / "environment.conf", "modulepath = modules:site\n")
    _write(env / "modules" / "app" / "metadata.json", json.dumps({"name": "me-app", "version": "1.0.0"}))
    _write(env / "site" / "role" / "manifests" / "init.pp", "class role {}\n")
    path = modules.modulepath_for(str(env / "modules" / "app" / "metadata.json"))
    assert path == (str(env / "modules"), str(env / "site"))
    assert sorted(modules.modules_on_path(path)) == ["app", "role"]
    alone = tmp_path / "checkout" / "puppet-app"
    _write(alone / "metadata.json", json.dumps({"name": "me-app", "version": "1.0.0"}))
    assert modules.modulepath_for(str(alone / "metadata.json")) == (str(tmp_path / "checkout"),)


# ------------------------------------------------------------------------------------------------ semver

_PUPPET_SEMVER = r"""
def verdict
  yield
rescue StandardError => e
  e.class.name
end
result = {
  'valid' => req['versions'].map { |v| SemanticPuppet::Version.valid?(v) },
  'parse' => req['versions'].map { |v| verdict { SemanticPuppet::Version.parse(v); true } },
  'ranges' => req['ranges'].map do |r|
    range = verdict { SemanticPuppet::VersionRange.parse(r) }
    next [range] if range.is_a?(String)
    [true, req['probes'].map { |v| range.include?(SemanticPuppet::Version.parse(v)) }]
  end,
}
"""

VERSIONS = [
    "1.0.0",
    "0.0.0",
    "1.0",
    "1",
    "v1.0.0",
    "1.0.0-rc.1",
    "1.0.0-01",
    "1.0.0-0",
    "1.0.0-0a",
    "1.0.0+b.01",
    "01.0.0",
    "1.00.0",
    "1.0.0\n",
    "1.0.0\n\n",
    " 1.0.0",
    "1.0.0 ",
    "1.0.0-",
    "1.0.0-a..b",
    "1.0.0-\u00e9",
    "1.0.0-alpha+001",
    "\uff11.0.0",
    "1.0.0-alpha-beta",
    "1.0.0+",
    "1.2.3.4",
    "",
    "x.1.0",
    "99999999999.0.0",
]
PROBES = [
    "0.0.0",
    "0.0.1",
    "0.1.0",
    "0.9.9",
    "1.0.0",
    "1.0.0-alpha",
    "1.2.0",
    "1.2.3",
    "1.2.3-alpha",
    "1.2.3-alpha.1",
    "1.2.3-beta",
    "1.2.3+build",
    "1.2.4",
    "1.3.0",
    "1.3.0-rc1",
    "2.0.0",
    "2.0.0-rc1",
    "2.5.0",
    "9.0.0",
    "10.0.0",
]
RANGES = [
    # forms seen in metadata.json on the Forge, and the corners of SemanticPuppet's reading
    ">= 4.13.1 < 9.0.0",
    ">=1.0.0 <2.0.0",
    "1.x",
    "~> 1.2",
    "4.x",
    ">= 1.0.0",
    "1.2.3",
    "*",
    "",
    "   ",
    "1.0.0 - 2.0.0",
    "1.2 - 2",
    "^1.2.3",
    "^0.1.2",
    "^0.0.1",
    "^x",
    "<=x",
    "<= *",
    ">x",
    ">2 <1 >0",
    ">2 <1",
    " 1.0.0",
    "1.0.0 ",
    "1.0.0 ||",
    "|| 1.0.0",
    "1.0.0 || || 2.0.0",
    ">= v1.0.0",
    ">=v1.0.0",
    "v1.0.0",
    "~1",
    "~1.2",
    "~ 1.2.3",
    "~=1.2.3",
    "=1.2.3",
    "==1.2.3",
    "1.2.3+build",
    ">1.2.3-alpha",
    ">=1.2.3-alpha <1.2.4",
    "1.2.3-alpha",
    "1.2.3-01",
    ">=1.0.0-01",
    "1.2.x",
    "1.X",
    "1.2.*",
    "01.2.3",
    "1.2.3.4",
    ">= 1.0.0 && < 2.0.0",
    "latest",
    ">=1.0.0,<2.0.0",
    "<2.0.0 >=1.0.0",
    "> 1.2",
    "<= 1.2",
    "<=1",
    ">1",
    "^1.2",
    "^0",
    "^0.0",
    ">=1.0.0 <2.0.0 || >=3.0.0 <4.0.0",
    "1.2.3 - 1.2.3",
    "2.0.0 - 1.0.0",
    "1.0.0-alpha - 1.0.0",
    ">= 0.1.0 < 1.0.0",
    ">=1.0.0\t<2.0.0",
    ">=1.0.0\n<2.0.0",
    ">=1.0.0 <=1.0.0",
    "<1.0.0 >=1.0.0 >0.1.0",
    "1.2.3 >=1.2.3",
    "1.x || 1.2.3-alpha",
]


def _generated_ranges(count: int, seed: int = 29) -> list[str]:
    """Ranges made of SemanticPuppet's pieces at random (fixed seed), to meet corners no table lists."""
    import random

    rng = random.Random(seed)
    ops = ["", "", ">", ">=", "<", "<=", "=", "~", "~>", "~=", "^", ">= ", "< v", "~ "]
    partials = [
        "0",
        "1",
        "2",
        "1.2",
        "0.1",
        "0.0",
        "1.2.3",
        "0.0.1",
        "0.1.2",
        "2.0.0",
        "x",
        "1.x",
        "1.2.x",
        "*",
        "1.2.3-alpha",
        "1.2.3-alpha.1",
        "1.2.3-01",
        "1.2.3+build",
        "2.0.0-rc1",
        "1.3.0-rc1",
        "X.1",
    ]
    out = []
    for _ in range(count):
        alternatives = []
        for _ in range(rng.choice([1, 1, 1, 2, 3])):
            if rng.random() < 0.15:
                alternatives.append(f"{rng.choice(partials)} - {rng.choice(partials)}")
            else:
                simples = [rng.choice(ops) + rng.choice(partials) for _ in range(rng.choice([1, 2, 2, 3]))]
                alternatives.append(" ".join(simples))
        out.append(" || ".join(alternatives))
    return out


def _our_verdict(text: str, probes: list[str]) -> list[Any]:
    try:
        parsed = semver.parse_range(text)
    except semver.RangeError:
        return [False]
    return [True, [parsed.includes(semver.parse_version(v)) for v in probes]]


def test_versions_and_ranges_are_semantic_puppets() -> None:
    """Every verdict on versions (valid?, parse) and ranges (parse, include? of each probe version)
    equals SemanticPuppet's, on the table above and 1,500 generated ranges."""
    ranges = RANGES + _generated_ranges(1500)
    answer = ask_puppet(_PUPPET_SEMVER, {"versions": VERSIONS, "ranges": ranges, "probes": PROBES})
    assert [semver.valid_version(v) for v in VERSIONS] == answer["valid"]
    ours_parse: list[Any] = []
    for v in VERSIONS:
        try:
            semver.parse_version(v)
            ours_parse.append(True)
        except semver.RangeError:
            ours_parse.append(False)
    assert ours_parse == [p is True for p in answer["parse"]]
    refused = 0
    mismatches = []
    for text, theirs in zip(ranges, answer["ranges"], strict=True):
        mine = _our_verdict(text, PROBES)
        expected = [True, theirs[1]] if theirs[0] is True else [False]
        refused += not mine[0]
        if mine != expected:
            mismatches.append((text, theirs, mine))
    assert mismatches == []
    assert 100 < refused < len(ranges) - 100  # the table and the generator reach both verdicts


# ------------------------------------------------------------------------------------------------ JSON

_PUPPET_JSON = r"""
def read(text)
  [true, yield(text)]
rescue StandardError => e
  [false, e.class.name]
end
def text_of(value)
  JSON.generate([value], allow_nan: true, max_nesting: false)
rescue JSON::GeneratorError  # a string that is not valid UTF-8: read, but not to be compared
  nil
end
# what Puppet::Util::Json.load reads with either adapter MultiJson may pick (the first one loaded)
readers = %i[oj json_gem].map do |adapter|
  MultiJson.use(adapter)
  req['texts'].map { |t| read(t) { |x| Puppet::Util::Json.load(x) } }
end
result = readers[0].zip(readers[1]).map do |pair|
  pair.map { |ok, v| ok ? [true, text_of(v)] : [false, v] }
end
"""

JSON_TEXTS = [
    '{"a":1}', '{/*c*/"a":1}', '{// c\n"a":1}', '{"a":1,}', "[1,]", '{"a":01}', '{"a":-0}', '{"a":1.}',
    '{"a":.5}', '{"a":1e5}', '{"a":1E+5}', '{"a":-}', '{"a":"\\q"}', '{"a":"\t"}', '{"a":"\\u00e9"}',
    '{"a":"\\ud800"}', '{"a":"\\udc00"}', '{"a":"\\ud83d\\ude00"}', "NaN", "[NaN]", "[Infinity]", "1", '"x"',
    "", "  ", "null", '{"a":1}x', '{"a":1} ', "\ufeff{}", '{"a" :1 , "a":2}', "{a:1}", "{'a':1}",
    "[true,false,null]", "[tru]", "/**/{}", '{"a":"\\u12"}', "[1 2]", '{"a" 1}', "[1]\n\n", "\v[]", "\f[]",
    "[\u00a0]", "[-01]", "[1.5e]", "[+1]", "[0x10]", '{"a":1}}', "[/* unterminated", '["\\/"]', "[01.5]",
    "[-0.0e-0]", "[1]#", '{"a":"x\ny"}', "[1e999]", '{"":1}', "[" * 101 + "]" * 101, "[" * 99 + "]" * 99,
    '{"a":[1,{"b":[true,null,"\\"q\\""]}],"c":{}}', '["caf\u00e9 \u2603"]', "[1]/", "[1,,2]", "[,]", "{,}",
    '{"a":1 "b":2}', '{"a":}', '["a" "b"]', "[-]", "[1.0e+]", "[123456789012345678901234567890]", "[-1.5E-3]",
    '"unterminated', "[1", '{"a":1', "]", "}", "[}", '{"a":1]', "[\x01]", '"\x7f"', "truefalse", "[true false]",
]  # fmt: skip


def test_json_reading_agrees_with_puppets_readers() -> None:
    """Our reader's verdict on each text: an error exactly when both of Puppet's JSON readers refuse it
    (Puppet::Util::Json.load goes through MultiJson, whose adapter is Oj or the json gem) -- where they disagree, either; never an error on
    what both read; and the same value as theirs."""
    answer = ask_puppet(_PUPPET_JSON, {"texts": JSON_TEXTS})
    both_refuse = both_read = 0
    for text, (oj, gem) in zip(JSON_TEXTS, answer, strict=True):
        value, problems = jsonpos.read_json(text.encode("utf-8"))
        errors = [p for p in problems if p.severity == "error"]
        if not oj[0] and not gem[0]:
            both_refuse += 1
            assert errors and value is None, text
        elif oj[0] and gem[0]:
            both_read += 1
            assert not errors and value is not None, (text, errors)
            if gem[1] is not None:
                assert json.dumps([value.to_python()]) == json.dumps(json.loads(gem[1])), text
        for p in problems:
            assert 0 <= p.start <= p.end <= len(text.encode("utf-8")), (text, p)
    assert both_refuse > 30 and both_read > 15


# ------------------------------------------------------------------------------------------------ metadata rules

PUPPET_METADATA = r"""
def verdict
  yield
  nil
rescue StandardError => e
  "#{e.class}: #{e.message[0, 200]}"
end
require 'puppet/module_tool'
env = Puppet::Node::Environment.create(:xpp, [])
result = req['files'].map do |path|
  text = File.read(path, encoding: 'utf-8')
  # what `puppet module build` / install validate, then whether the environment loads the module
  tool = verdict { Puppet::ModuleTool::Metadata.new.update(JSON.parse(text)) }
  load = verdict { Puppet::Module.new('m', File.dirname(path), env) }
  [tool, load]
end
"""

BASE: dict[str, Any] = {
    "name": "puppetlabs-demo",
    "version": "1.0.0",
    "author": "puppetlabs",
    "summary": "A module to check metadata.json with.",
    "license": "Apache-2.0",
    "source": "https://example.com/demo",
    "dependencies": [{"name": "puppetlabs/stdlib", "version_requirement": ">= 4.13.1 < 10.0.0"}],
    "requirements": [{"name": "puppet", "version_requirement": ">= 7.0.0 < 9.0.0"}],
    "operatingsystem_support": [{"operatingsystem": "Debian", "operatingsystemrelease": ["11", "12"]}],
}
_ABSENT = object()
STDLIB = {"name": "puppetlabs-stdlib", "version_requirement": ">= 1.0.0"}


def _with(**changes: Any) -> dict[str, Any]:
    data = dict(BASE)
    for key, value in changes.items():
        if value is _ABSENT:
            data.pop(key, None)
        else:
            data[key] = value
    return data


NAMES = [
    "puppetlabs-demo", "puppetlabs/demo", "Puppetlabs-Demo", "demo", "-demo", "puppetlabs-", "puppetlabs-1demo",
    "puppetlabs-de-mo", "puppet_labs-demo", "puppetlabs-demo\n", "puppetlabs-demo\n\n", "puppetlabs-dem\u212a",
    "puppetlabs-\u017fx", "p\u0130-x", "p\u0131-x", "puppetlabs-\u0131x", "puppetlabs-x\u0130", "a-b", "1-a", "", "puppetlabs-demo ", "pup.pet-demo", "puppetlabs-d\u00e9mo",
    "puppetlabs--demo", "/demo", "puppetlabs-de_mo", 5, False, None, ["x-y"],
]  # fmt: skip
VERSIONS_FIELD = ["1.0.0", "1.0", "v1.0.0", 3, False, None, "1.0.0-rc.1", "1.0.0-01", "1.0.0\n", ""]
PROVIDERS = ["hiera", "function", "9x", "a-b", "x\ny!", "!x\ny", 5, False, None, "", "_x", _ABSENT]
DEPENDENCY_LISTS: list[Any] = [
    [], {}, {"a": 1}, "x", 5, False, True, None, [5], ["puppetlabs-stdlib"], [{}], [{"name": 5}],
    [{"name": "bad"}], [{"name": "puppetlabs-stdlib"}], [{"name": "puppetlabs-stdlib", "version_requirement": "latest"}],
    [{"name": "puppetlabs-stdlib", "version_requirement": 5}], [{"name": "puppetlabs-stdlib", "version_requirement": None}],
    [{"name": "puppetlabs-stdlib", "version_requirement": ""}], [{"name": "puppetlabs-stdlib", "version_requirement": "^x"}],
    [STDLIB, STDLIB], [STDLIB, {**STDLIB, "version_requirement": ">= 2.0.0"}],
    [STDLIB, {**STDLIB, "name": "puppetlabs/stdlib", "version_requirement": ">= 2.0.0"}],
    [{"name": "puppetlabs-stdlib", "version_range": ">= 1.0.0"}], [{**STDLIB, "name": "Puppetlabs-Stdlib"}],
    [{**STDLIB, "version_requirement": ">= 1.0.0 < 2.0.0 || >= 3.0.0"}], [STDLIB, {"name": "puppetlabs-concat"}],
    [{"name": None}], [[]],
]  # fmt: skip
CASES: list[Any] = (
    [BASE, {}, [], "text", [BASE]]
    + [_with(name=n) for n in NAMES]
    + [_with(version=v) for v in VERSIONS_FIELD]
    + [_with(data_provider=p) for p in PROVIDERS]
    + [_with(dependencies=d) for d in DEPENDENCY_LISTS]
    + [_with(**{key: _ABSENT}) for key in BASE]
    + [_with(**{key: None}) for key in BASE]
    + [_with(author=5), _with(license=False), _with(source=[]), _with(summary=None, name=_ABSENT)]
)

# codes of the problems real Puppet refuses a metadata.json for (Puppet::ModuleTool::Metadata#update, or
# Puppet::Module#load_metadata: the environment then drops the module)
PUPPET_REFUSES = {
    "NOT_AN_OBJECT", "MISSING_KEY", "INVALID_NAME", "INVALID_VERSION", "INVALID_DATA_PROVIDER",
    "INVALID_DEPENDENCIES", "INVALID_DEPENDENCY", "INVALID_DEPENDENCY_NAME", "INVALID_VERSION_RANGE",
    "DEPENDENCY_CONFLICT",
}  # fmt: skip


def test_metadata_rules_are_puppets(tmp_path: Path) -> None:
    """For each metadata.json of the table: we find an error of Puppet's own rules exactly when real
    Puppet refuses the file (its module tool's validation, or loading the module).  One exception, by
    design: an empty object, which Puppet loads as a module without metadata, lacks the keys the Forge
    and Puppet's documentation require (an error here)."""
    files = []
    for index, data in enumerate(CASES):
        path = tmp_path / f"case{index}" / "m" / "metadata.json"
        _write(path, json.dumps(data))
        files.append(str(path))
    answer = ask_puppet(PUPPET_METADATA, {"files": files})
    refused = 0
    for data, path, (tool, load) in zip(CASES, files, answer, strict=True):
        found = metadata_json.check(Path(path).read_bytes())
        ours = sorted({p.code for p in found.problems if p.severity == "error" and p.code in PUPPET_REFUSES})
        puppet_refuses = tool is not None or load is not None
        refused += puppet_refuses
        if data == {}:
            assert not puppet_refuses and ours == ["MISSING_KEY"]
            continue
        assert bool(ours) == puppet_refuses, (data, ours, tool, load)
        if tool is not None and "Invalid 'name'" in tool:  # and for the same reason
            ours_why = next(
                p.message for p in found.problems if p.code in ("INVALID_NAME", "INVALID_DEPENDENCY_NAME")
            )
            reason = next(ours for theirs, ours in _NAME_REASONS if theirs in tool)
            assert reason in ours_why, (data, tool, ours_why)
    assert 40 < refused < len(CASES) - 20


# Puppet's reason for refusing a name -> ours (same reasons, in our words)
_NAME_REASONS = [
    ("namespaced module name", "namespaced module name"),
    ("module name contains non-alphanumeric", "module name may contain only"),
    ("must begin with a letter", "must begin with a letter"),
    ("namespace contains non-alphanumeric", "author (namespace)"),
]


def test_each_problem_is_at_its_key_or_value() -> None:
    """A damaged copy of a corpus module's metadata.json gets each diagnostic, on the text it is about."""
    source = CORPUS / "ntp" / "metadata.json"
    if not source.is_file():
        pytest.skip("corpus not installed")
    data = json.loads(source.read_text(encoding="utf-8"))
    data.update(
        name="puppetlabs ntp",
        version="10.1",
        license=None,
        requirements=[{"name": "puppet", "version_requirement": ">= 7 <<"}],
        operatingsystem_support=[{"operatingsystem": 5, "operatingsystemrelease": "12"}, "Debian"],
        data_provider="9",
    )
    data.pop("source")
    data["dependencies"] = [
        {"name": "puppetlabs/stdlib", "version_requirement": ">= 99.0.0"},
        {"name": "puppetlabs-nothere", "version_requirement": ">= 1.0.0"},
        {"name": "someone-concat", "version_requirement": ">= 1.0.0"},
        {"name": "puppetlabs/inifile", "version_requirement": "1.x ||| 2"},
        {"name": "puppetlabs/stdlib", "version_requirement": ">= 1.0.0"},
        {"name": "puppetlabs-apt"},
    ]
    text = json.dumps(data, indent=2)
    text = text.replace('"summary"', '"summary": "first",\n  "summary"', 1)  # a key given twice
    raw = text.encode("utf-8")
    found = metadata_json.check(raw, [str(CORPUS)])
    at = {(p.code, raw[p.start : p.end].decode("utf-8")) for p in found.problems}
    expected = {
        ("INVALID_NAME", '"puppetlabs ntp"'),
        ("INVALID_VERSION", '"10.1"'),
        ("MISSING_KEY", '"license"'),
        ("MISSING_KEY", "{"),  # source: absent, at the object's start
        ("INVALID_REQUIREMENT", '">= 7 <<"'),
        ("INVALID_OS_SUPPORT", "5"),
        ("INVALID_OS_SUPPORT", '"12"'),
        ("INVALID_OS_SUPPORT", '"Debian"'),
        ("INVALID_DATA_PROVIDER", '"9"'),
        ("DEPENDENCY_UNSATISFIED", '">= 99.0.0"'),
        ("DEPENDENCY_MISSING", '"puppetlabs-nothere"'),
        ("DEPENDENCY_MISSING", '"someone-concat"'),
        ("INVALID_VERSION_RANGE", '"1.x ||| 2"'),
        ("DEPENDENCY_CONFLICT", '"puppetlabs/stdlib"'),
        ("NO_VERSION_REQUIREMENT", '"puppetlabs-apt"'),
        ("JSON_DUPLICATE_KEY", '"summary"'),
    }
    assert expected <= at, sorted(expected - at)
    broken = metadata_json.check(raw.replace(b'"version": "10.1",', b'"version": "10.1"', 1))
    assert [(p.code, p.severity) for p in broken.problems] == [("JSON_SYNTAX", "error")]
    line = raw[: broken.problems[0].start].count(b"\n")
    assert raw.splitlines()[line].strip().startswith(b'"author"')  # where the comma is missing


# ------------------------------------------------------------------------------------------------ dependencies

PUPPET_UNMET = r"""
env = Puppet::Node::Environment.create(:xpp, req['modulepath'])
result = env.module(req['module']).unmet_dependencies.map { |d| [d[:name], d[:reason].to_s] }
"""

_REASONS = {
    "DEPENDENCY_MISSING": "missing",
    "DEPENDENCY_NOT_LOADED": "missing",  # Puppet does not load it: for Puppet it is not there
    "DEPENDENCY_NOT_SEMVER": "non_semantic_version",
    "DEPENDENCY_UNSATISFIED": "version_mismatch",
}


def _complete(name: str, version: str) -> str:
    return json.dumps({**BASE, "name": name, "version": version, "dependencies": []})


def make_environment(root: Path) -> Path:
    """An environment whose module ``me`` depends on modules present, absent, of another author, with a
    version outside the range, not semantic, a pre-release, dropped by Puppet or without metadata."""
    mods = root / "modules"
    _write(mods / "stdlib" / "metadata.json", _complete("puppetlabs-stdlib", "4.1.0"))
    _write(mods / "concat" / "metadata.json", _complete("puppetlabs-concat", "7.0.0"))
    _write(mods / "apt" / "metadata.json", _complete("someone-apt", "9.0.0"))
    _write(mods / "weird" / "metadata.json", _complete("puppetlabs-weird", "abc"))
    _write(mods / "pre" / "metadata.json", _complete("puppetlabs-pre", "2.0.0-rc1"))
    _write(mods / "any" / "metadata.json", _complete("puppetlabs-any", "0.0.1"))
    _write(mods / "slash" / "metadata.json", _complete("puppetlabs/slash", "1.5.0"))
    _write(mods / "dropped" / "metadata.json", json.dumps({"name": "puppetlabs-dropped", "version": "1.0.0"}))
    _write(mods / "bare" / "manifests" / "init.pp", "class bare {}\n")
    deps = [
        {"name": "puppetlabs-stdlib", "version_requirement": ">= 4.0.0 < 5.0.0"},
        {"name": "puppetlabs/concat", "version_requirement": ">= 9.0.0"},
        {"name": "puppetlabs-apt", "version_requirement": ">= 1.0.0"},
        {"name": "puppetlabs-nothere", "version_requirement": ">= 1.0.0"},
        {"name": "puppetlabs-weird", "version_requirement": ">= 1.0.0"},
        {"name": "puppetlabs-pre", "version_requirement": ">= 1.0.0"},
        {"name": "puppetlabs-any"},
        {"name": "puppetlabs-slash", "version_requirement": "1.x"},
        {"name": "puppetlabs-dropped", "version_requirement": ">= 1.0.0"},
        {"name": "puppetlabs-bare", "version_requirement": ">= 1.0.0"},
    ]
    _write(
        mods / "me" / "metadata.json", json.dumps({**BASE, "name": "me-me", "dependencies": deps}, indent=2)
    )
    _write(mods / "me" / "manifests" / "init.pp", "class me {}\n")
    return mods / "me" / "metadata.json"


def test_unmet_dependencies_are_puppets(tmp_path: Path) -> None:
    """The dependencies we warn about, and why, are those ``Puppet::Module#unmet_dependencies`` lists."""
    path = make_environment(tmp_path)
    modulepath = modules.modulepath_for(str(path))
    assert modulepath == (str(tmp_path / "modules"),)  # the environment model: the environment's modules/
    expected = ask_puppet(PUPPET_UNMET, {"modulepath": list(modulepath), "module": "me"})
    found = metadata_json.check(path.read_bytes(), modulepath)
    ours = []
    for dep in found.dependencies:
        for p in found.problems:
            if p.code in _REASONS and dep.start <= p.start < dep.end:
                assert dep.name is not None
                ours.append([dep.name.replace("-", "/"), _REASONS[p.code]])
    assert sorted(ours) == sorted(expected)
    assert len(expected) == 7  # (and three dependencies that are met)


def test_hover_and_definition_on_a_dependency(tmp_path: Path) -> None:
    path = make_environment(tmp_path)
    text = path.read_text(encoding="utf-8")
    file = FileText(text, str(path), modulepath=modules.modulepath_for(str(path)))
    lines = text.splitlines()

    def at(needle: str) -> tuple[int, int]:
        line = next(i for i, t in enumerate(lines) if needle in t)
        return line, lines[line].index(needle) + 3

    hover = metadata_json.ANALYSIS.hover(file, *at('"puppetlabs-stdlib"'))
    assert hover is not None
    assert "4.1.0" in hover.markdown and str(tmp_path / "modules" / "stdlib") in hover.markdown
    assert "satisfies the range" in hover.markdown
    hover = metadata_json.ANALYSIS.hover(file, *at('"puppetlabs/concat"'))
    assert hover is not None and "does **not** satisfy" in hover.markdown and "7.0.0" in hover.markdown
    hover = metadata_json.ANALYSIS.hover(file, *at('"puppetlabs-nothere"'))
    assert hover is not None and "not on the module path" in hover.markdown
    assert metadata_json.ANALYSIS.hover(file, *at('"license"')) is None
    (where,) = metadata_json.ANALYSIS.definition(file, *at('"puppetlabs-stdlib"'))
    assert where.path == str(tmp_path / "modules" / "stdlib" / "metadata.json")
    (where,) = metadata_json.ANALYSIS.definition(file, *at('"puppetlabs-bare"'))
    assert where.path == str(tmp_path / "modules" / "bare" / "manifests" / "init.pp")
    assert metadata_json.ANALYSIS.definition(file, *at('"puppetlabs-nothere"')) == []
    symbols = metadata_json.ANALYSIS.symbols(file)
    deps = next(s for s in symbols if s.name == "dependencies")
    assert [c.name for c in deps.children][:2] == ["puppetlabs-stdlib", "puppetlabs/concat"]


def test_bad_input_never_raises() -> None:
    """Every prefix of a real metadata.json (what an editor sends while it is typed) gets diagnostics,
    never an exception, and a syntax error for each prefix that is not a whole document."""
    source = CORPUS / "apache" / "metadata.json"
    if not source.is_file():
        pytest.skip("corpus not installed")
    raw = source.read_bytes()
    for end in range(0, len(raw), 7):
        found = metadata_json.check(raw[:end], [str(CORPUS)])
        assert any(p.code == "JSON_SYNTAX" for p in found.problems) or raw[:end].strip() == raw.strip()
    assert not [p for p in metadata_json.check(raw, [str(CORPUS)]).problems if p.severity == "error"]


def test_module_directory_as_puppet_names_it(tmp_path: Path) -> None:
    """In an environment, a metadata.json in a directory Puppet takes for no module gets a warning, one
    whose directory names the module otherwise gets a note -- as Puppet's environment lists them."""
    mods = tmp_path / "modules"
    for directory, name in (("puppet-ntp", "me-ntp"), ("foo", "me-bar"), ("ok", "me-ok")):
        _write(mods / directory / "metadata.json", _complete(name, "1.0.0"))
    listed = {n for n, *_ in ask_puppet(_PUPPET_MODULES, {"modulepath": [str(mods)]})}
    assert listed == {"foo", "ok"}
    notes = {}
    for directory in ("puppet-ntp", "foo", "ok"):
        path = mods / directory / "metadata.json"
        found = metadata_json.check(path.read_bytes(), modules.modulepath_for(str(path)), str(path))
        notes[directory] = [(p.severity, p.message) for p in found.problems if p.code == "MODULE_DIRECTORY"]
    assert [s for s, _ in notes["puppet-ntp"]] == ["warning"]  # not listed by Puppet
    assert notes["foo"] == [("info", "Puppet loads this module as 'foo' (its directory), not 'bar'")]
    assert notes["ok"] == []

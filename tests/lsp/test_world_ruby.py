"""server/analysis/ruby_index.py's static reading of modules' Ruby code against Puppet itself (the oracle's
``ruby_api`` op loads the same files with Puppet 7.23): every 4.x function's dispatch signatures, every
3.x function's arity and kind, every resource type's attributes, kinds, namevars and allowed values,
over the Debian module corpus.  Also: the generated built-ins cover every function and type file of the
installed Puppet, and the core fact names are Facter's."""

from __future__ import annotations

import glob
import os
import re

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

from puppet_xpp.server.analysis import builtins
from puppet_xpp.server.analysis.ruby_index import index_ruby_file

CORPUS = "/usr/share/puppet/modules"
PUPPET_LIB = "/usr/lib/ruby/vendor_ruby/puppet"
pytestmark = pytest.mark.skipif(not os.path.isdir(CORPUS), reason="no Debian module corpus")


def _files(pattern):
    return sorted(glob.glob(os.path.join(CORPUS, "*", pattern), recursive=True))


def _syms(pattern, kind):
    out = {}
    for f in _files(pattern):
        for s in index_ruby_file(f):
            if s.kind == kind:
                out.setdefault(s.name, s)
    return out


def _t(s):
    """A type as text, in one spelling: no blanks or quotes, Enum values sorted, `Any` return types
    and trailing commas and `default` maxima dropped (Puppet's formatter writes the same type so)."""
    s = re.sub(r"[\s'\"]+", "", s or "")
    s = s.replace(",default]", "]").replace(",}", "}").replace(",]", "]")
    s = re.sub(r"Enum\[([^\]]*)\]", lambda m: "Enum[" + ",".join(sorted(m.group(1).split(","))) + "]", s)
    return "" if s == "Any" else s


# allowed values computed by Ruby code (a splat of a mapped list): not knowable statically
COMPUTED_VALUES = {("firewall", "dst_type"), ("firewall", "src_type"), ("firewall", "proto")}
BUILTIN_NAMES = set(builtins.functions())


def test_4x_function_signatures_match_puppet(oracle):
    ours = {n: s for n, s in _syms("lib/puppet/functions/**/*.rb", "function").items() if s.origin == "ruby4"}
    assert len(ours) >= 70
    theirs = oracle.call("ruby_api", modulepath=[CORPUS], functions=sorted(ours))["functions"]
    compared = 0
    bad = []
    for name, sym in sorted(ours.items()):
        t = theirs[name]
        if "error" in t or name in BUILTIN_NAMES:
            continue  # Puppet could not load it here (a missing gem), or its own built-in wins
        compared += 1
        mine = [
            ([(p.name, _t(p.type), p.kind) for p in sg.params], _t(sg.return_type)) for sg in sym.signatures
        ]
        real = [
            ([(p["name"], _t(p["type"]), p["kind"]) for p in sg["params"]], _t(sg["return_type"]))
            for sg in t["signatures"]
        ]
        if mine != real:
            bad.append((name, mine, real))
    assert compared >= 60
    assert bad == []


def test_3x_function_arity_matches_puppet(oracle):
    ours = {
        n: s for n, s in _syms("lib/puppet/parser/functions/*.rb", "function").items() if s.origin == "ruby3"
    }
    assert len(ours) >= 140
    theirs = oracle.call("ruby_api", modulepath=[CORPUS], functions3=sorted(ours))["functions3"]
    bad = []
    compared = 0
    for name, sym in sorted(ours.items()):
        t = theirs[name]
        if "error" in t:
            continue
        compared += 1
        ps = sym.signatures[0].params
        arity = len(ps) if not ps or ps[-1].kind != "repeated" else -len(ps)
        mine = (arity, sym.signatures[0].return_type == "Any")
        if mine != (t["arity"], t["rvalue"]):
            bad.append((name, mine, t))
    assert compared >= 140
    assert bad == []


def test_resource_types_match_puppet(oracle):
    ours = _syms("lib/puppet/type/*.rb", "resource_type")
    assert len(ours) >= 60
    theirs = oracle.call("ruby_api", modulepath=[CORPUS], types=sorted(ours))["types"]
    bad = []
    compared = 0
    for name, sym in sorted(ours.items()):
        t = theirs[name]
        if "error" in t:
            continue
        compared += 1
        mine = {a.name: (a.kind, [v for v in a.values if not v.startswith("/")]) for a in sym.attrs}
        real = {a: (v["kind"], v["values"]) for a, v in t["attributes"].items()}
        for a in mine:
            if (name, a) in COMPUTED_VALUES and a in real:
                mine[a] = real[a] = (mine[a][0], [])
        if mine != real:
            diff = {
                k: (mine.get(k), real.get(k)) for k in set(mine) | set(real) if mine.get(k) != real.get(k)
            }
            bad.append((name, diff))
        namevars = [a.name for a in sym.attrs if a.namevar]
        if sorted(namevars) != sorted(t["namevars"]):
            bad.append((name, "namevars", namevars, t["namevars"]))
    assert compared >= 55
    assert bad == []


def _puppet_files(lib):
    funcs = {os.path.basename(p)[:-3] for p in glob.glob(os.path.join(lib, "functions", "*.rb"))}
    funcs |= {os.path.basename(p)[:-3] for p in glob.glob(os.path.join(lib, "parser", "functions", "*.rb"))}
    types = {os.path.basename(p)[:-3] for p in glob.glob(os.path.join(lib, "type", "*.rb"))}
    return funcs, types - {"component", "whit"}


def test_builtins_cover_each_levels_puppet():
    """Levels 7 and 7.23: Debian's Puppet 7.23; level 8: OpenVox 8 (tests/conformance/puppets.py)."""
    from tests.conformance.puppets import openvox_lib

    ov = openvox_lib()
    checked = 0
    for level, lib in (("7.23", PUPPET_LIB), ("7", PUPPET_LIB), ("8", ov and os.path.join(ov, "puppet"))):
        if not lib or not os.path.isdir(lib):
            continue
        funcs, types = _puppet_files(lib)
        assert set(builtins.functions(level)) == funcs, level
        assert set(builtins.types(level)) == types, level
        checked += 1
    if not checked:
        pytest.skip("no installed Puppet")


def test_builtin_signatures_are_puppets(oracle):
    """Every built-in's signatures as Puppet 7.23 itself dispatches them (the oracle loads each)."""
    data = builtins.data("7.23")["functions"]
    names = sorted(n for n, f in data.items() if f["api"] == "4.x" and f["signatures"])
    theirs = oracle.call("ruby_api", modulepath=[], functions=names)["functions"]
    bad = [n for n in names if "error" not in theirs[n] and theirs[n]["signatures"] != data[n]["signatures"]]
    assert bad == [] and len(names) >= 85


def test_core_fact_names_are_facters():
    import json
    import shutil
    import subprocess

    if not shutil.which("facter"):
        pytest.skip("no facter")
    out = subprocess.run(
        ["facter", "--json", "os", "networking.hostname", "kernel"], capture_output=True, text=True
    )
    facts = json.loads(out.stdout)
    names = set(builtins.facts())
    for top, value in facts.items():
        assert top.split(".")[0] in {n.split(".")[0] for n in names}
        if isinstance(value, dict):
            for k in value:
                if not isinstance(value[k], dict):
                    assert f"{top}.{k}" in names, (top, k)


def test_broken_ruby_never_raises():
    """Truncated, spliced and corrupted API files: whatever is still readable is read, nothing raises."""
    import random

    from puppet_xpp.server.analysis.ruby_index import index_ruby_source, kind_of_path

    files = _files("lib/puppet/functions/**/*.rb") + _files("lib/puppet/type/*.rb")
    files += _files("lib/puppet/parser/functions/*.rb")
    rnd = random.Random(15)
    for _ in range(400):
        f = rnd.choice(files)
        data = open(f, "rb").read()
        i = rnd.randrange(len(data) + 1)
        data = rnd.choice(
            [
                data[:i],
                data[:i] + data[i + rnd.randrange(60) :],
                data[:i] + rnd.choice([b"(", b"do", b"'", b"<<-X\n", b"{"]) + data[i:],
            ]
        )
        for s in index_ruby_source(data, f, kind_of_path(f)):
            assert s.name and s.path == f


# ------------------------------------------------------------------------- types built through mixins, in the server


@pytest.fixture(scope="module")
def mixin_workspace(tmp_path_factory):
    """An environment whose module path holds two of tests/test_ruby_types_corpus.py's scenarios: a type
    whose attributes come from a lib/puppet_x/ helper it extends (closed) and one defining attributes in a
    loop over a range (open)."""
    import textwrap

    from tests.test_ruby_types_corpus import SCENARIOS

    root = tmp_path_factory.mktemp("mixins")
    (root / "production/manifests").mkdir(parents=True)
    (root / "production/environment.conf").write_text("modulepath = modules\n")
    for name in ("xppmix_extend", "xppmix_range"):
        for rel, text in SCENARIOS[name][0].items():
            p = root / "production/modules" / rel
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text(textwrap.dedent(text).lstrip())
    return str(root)


@pytest.fixture(scope="module")
def mixin_puppet(mixin_workspace, oracle):
    """Puppet's attributes of the two types (the ruby_api op loads them from the same files)."""
    modules = os.path.join(mixin_workspace, "production/modules")
    files = sorted(glob.glob(os.path.join(modules, "*", "lib", "**", "*.rb"), recursive=True))
    answer = oracle.call(
        "ruby_api", modulepath=[modules], types=["xppmix_extend", "xppmix_range"], files=files
    )
    return answer["types"]


def _mixin_client():
    import sys

    repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    server = [
        sys.executable,
        "-c",
        "import sys; from puppet_xpp.server.cli.main import main; sys.exit(main())",
    ]

    @pytest_lsp.fixture(
        config=ClientServerConfig(server_command=server, server_env={"PYTHONPATH": repo}), scope="module"
    )
    async def client(lsp_client: LanguageClient, mixin_workspace):  # (injected by its type)
        import asyncio

        env = "file://" + os.path.join(mixin_workspace, "production")
        await lsp_client.initialize_session(
            types.InitializeParams(
                capabilities=pytest_lsp.client_capabilities("neovim@v0.7.0"),
                root_uri=env,
                workspace_folders=[types.WorkspaceFolder(uri=env, name="production")],
            )
        )
        for _ in range(600):
            if any("indexed" in m.message for m in lsp_client.log_messages):
                break
            await asyncio.sleep(0.05)
        yield
        await lsp_client.shutdown_session()

    return client


mixin_client = _mixin_client()
MANIFEST = (
    "xppmix_extend { 'a':\n  alpha => 1,\n  bogus => 2,\n  \n}\nxppmix_range { 'b':\n  slot2 => 1,\n}\n"
)


@pytest.mark.asyncio(loop_scope="module")
async def test_server_completes_and_checks_mixin_types_as_puppet_loads_them(
    mixin_client, mixin_workspace, mixin_puppet
):
    """Through the workspace index: completion in the closed type's body offers exactly Puppet's attributes
    (those from the helper included) and the metaparameters; the deep checks report the parameter Puppet
    does not have on the closed type, and nothing on the open type, whose `slot2` Puppet has."""
    from puppet_xpp.server.analysis.deep.codes import DEEP_SOURCE
    from tests.lsp.publishes import mark, open_file, published

    client = mixin_client
    assert "error" not in mixin_puppet["xppmix_extend"] and "error" not in mixin_puppet["xppmix_range"]
    assert "slot2" in mixin_puppet["xppmix_range"]["attributes"]
    m = mark(client)
    uri = open_file(client, mixin_workspace, "production/manifests/site.pp", MANIFEST)
    res = await client.text_document_completion_async(
        types.CompletionParams(
            text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(line=3, character=2)
        )
    )
    items = res.items if hasattr(res, "items") else res
    offered = {i.label for i in items}
    metaparameters = set(builtins.metaparameters())
    assert offered - metaparameters - {"alpha"} == set(mixin_puppet["xppmix_extend"]["attributes"]) - {
        "alpha"
    }

    import asyncio

    deep: list = []
    for _ in range(400):  # the deep findings come with the publish once the index is complete
        for p in published(client)[m:]:
            if p.uri == uri:
                deep = [d for d in p.diagnostics if d.source == DEEP_SOURCE]
        if deep:
            break
        await asyncio.sleep(0.05)
    # (at the line Puppet reports it: the resource's)
    assert [("'bogus'" in d.message, "slot2" in d.message) for d in deep] == [(True, False)]

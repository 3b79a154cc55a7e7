"""Ruby resource types' attribute sets, read statically (server/analysis/ruby_index.py following code through
server/analysis/ruby_mixins.py), against Puppet's own type loading (the oracle's ``ruby_api`` op loads each type
with ``Puppet::Type.type`` and lists ``allattrs`` without the metaparameters, with each attribute's kind).

For a type whose attribute set we call closed the two sets must be equal; for an open one (``Sym.open_attrs``:
code we do not follow) ours must be a subset of Puppet's.  Checked on every type of the Debian module corpus, on
the core types of Puppet 7.23 and OpenVox 8 (``file`` gets most of its attributes from files it requires, which
re-open it), and on modules written here for each way of building a type through mixins (``extend`` of a
``lib/puppet_x/`` helper, an ``included`` hook, a sibling module's helper, loops over literal lists, ``send``,
re-openings, Resource API types) -- and for each way that cannot be followed (then open) -- those on Puppet
7.23 and OpenVox 8 both."""

from __future__ import annotations

import os
import textwrap

import pytest

from puppet_xpp.server.analysis import ruby_mixins
from puppet_xpp.server.analysis.ruby_index import index_ruby_file, index_ruby_source
from puppet_xpp.server.analysis.symbols import Sym
from tests.conformance.corpus import CORPUS_ROOT
from tests.conformance.puppets import PUPPET7_LIB, openvox_lib


def _type_files(module_path: str) -> list[str]:
    """Every ``lib/puppet/type/*.rb`` of every module under ``module_path`` (module links followed)."""
    out = []
    for module in sorted(os.listdir(module_path)):
        d = os.path.join(module_path, module, "lib", "puppet", "type")
        if os.path.isdir(d):
            out.extend(os.path.join(d, f) for f in sorted(os.listdir(d)) if f.endswith(".rb"))
    return out


def _ours(files: list[str], reader=index_ruby_file) -> tuple[dict[str, Sym], list[str]]:
    """The resource types the files define (the first file of a name wins, as on Puppet's load path), and
    the files that gave none."""
    types: dict[str, Sym] = {}
    none = []
    for f in files:
        syms = [s for s in reader(f) if s.kind == "resource_type"]
        if not syms:
            none.append(f)
        for s in syms:
            types.setdefault(s.name, s)
    return types, none


def _compare(ours: dict[str, Sym], theirs: dict) -> dict[str, list]:
    """closed_exact / open_subset / mismatched / skipped (Puppet could not load it: the reason)."""
    out: dict[str, list] = {"closed_exact": [], "open_subset": [], "mismatched": [], "skipped": []}
    for name, sym in sorted(ours.items()):
        t = theirs[name]
        if "error" in t:
            out["skipped"].append((name, t["error"]))
            continue
        mine = {a.name: a.kind for a in sym.attrs}
        real = {a: v["kind"] for a, v in t["attributes"].items()}
        if sym.open_attrs:
            ok = all(real.get(a) == k for a, k in mine.items())
            out["open_subset" if ok else "mismatched"].append(
                name
                if ok
                else (name, "open", {a: (k, real.get(a)) for a, k in mine.items() if real.get(a) != k})
            )
        elif mine == real:
            out["closed_exact"].append(name)
        else:
            diff = {
                a: (mine.get(a), real.get(a)) for a in set(mine) | set(real) if mine.get(a) != real.get(a)
            }
            out["mismatched"].append((name, "closed", diff))
    return out


def _report(title: str, result: dict[str, list]) -> str:
    counts = ", ".join(f"{k.replace('_', ' ')} {len(v)}" for k, v in result.items())
    lines = [f"{title}: {counts}"]
    lines += [f"  skipped {n}: {why}" for n, why in result["skipped"]]
    lines += [f"  mismatched {m}" for m in result["mismatched"]]
    return "\n".join(lines)


@pytest.mark.skipif(not CORPUS_ROOT.is_dir(), reason="no Debian module corpus")
@pytest.mark.parametrize("puppet", ["7.23", "8"])
def test_every_corpus_type_matches_puppet(puppet, capsys):
    from tests.conformance.oracle import oracle_for

    oracle = oracle_for(puppet)
    files = _type_files(str(CORPUS_ROOT))
    ours, none = _ours(files)
    stems = {os.path.basename(f)[:-3] for f in none}
    # (the type files' contents are part of the oracle cache's key: an updated corpus is asked again)
    theirs = oracle.call(
        "ruby_api", modulepath=[str(CORPUS_ROOT)], types=sorted(set(ours) | stems), files=files
    )["types"]
    # a file that gave us no type must be one Puppet cannot load either
    lost = [f for f in none if "error" not in theirs[os.path.basename(f)[:-3]]]
    assert lost == []
    result = _compare(ours, theirs)
    with capsys.disabled():
        print("\n" + _report(f"corpus types ({len(files)} files), Puppet {puppet}", result))
    assert result["mismatched"] == []
    assert len(result["closed_exact"]) + len(result["open_subset"]) >= 65
    assert len(result["skipped"]) <= 3


def _core_lib(puppet: str) -> str | None:
    if puppet == "7.23":
        return str(PUPPET7_LIB / "puppet" / "type")
    lib = openvox_lib()
    return str(lib / "puppet" / "type") if lib is not None else None


@pytest.mark.parametrize("puppet", ["7.23", "8"])
def test_core_types_match_puppet(puppet, capsys):
    """Puppet's own types: ``file`` takes 18 of its attributes from ``puppet/type/file/*.rb``, required at
    the end of file.rb, each re-opening it (``Puppet::Type.type(:file).newproperty(:owner)``)."""
    from tests.conformance.oracle import oracle_for

    oracle = oracle_for(puppet)
    d = _core_lib(puppet)
    if d is None or not os.path.isdir(d):
        pytest.skip(f"no Puppet {puppet} library")
    files = sorted(os.path.join(d, f) for f in os.listdir(d) if f.endswith(".rb"))
    ours, none = _ours(files, lambda f: index_ruby_source(open(f, "rb").read(), f, "type"))
    assert none == []
    theirs = oracle.call("ruby_api", modulepath=[], types=sorted(ours))["types"]
    result = _compare(ours, theirs)
    with capsys.disabled():
        print("\n" + _report(f"Puppet {puppet} core types", result))
    assert result["mismatched"] == [] and result["skipped"] == []
    assert "file" in result["closed_exact"] and len(ours["file"].attrs) >= 30


# ------------------------------------------------------------------------------------ types built through mixins
# Each scenario: the files of the modules (under one module path), and whether the type's attributes can be known
# completely.  What the attributes are is Puppet's to say (the oracle loads these very files).

SCENARIOS: dict[str, tuple[dict[str, str], bool]] = {
    "xppmix_extend": (
        {
            "xppa/lib/puppet_x/xppa/params.rb": """
                module PuppetX
                  module Xppa
                    module Params
                      def create_parameters(*names)
                        names.each do |n|
                          newparam(n) do
                            desc "the #{n}"
                          end
                        end
                      end

                      def create_properties
                        %i[size colour].each { |p| newproperty(p) }
                      end
                    end
                  end
                end
            """,
            "xppa/lib/puppet/type/xppmix_extend.rb": """
                require 'puppet_x/xppa/params'

                Puppet::Type.newtype(:xppmix_extend) do
                  extend PuppetX::Xppa::Params
                  ensurable
                  newparam(:name, namevar: true)
                  create_parameters :alpha, :beta
                  create_properties
                  { one: 1, two: 2 }.each do |k, _v|
                    newparam(:"opt_#{k}")
                  end
                end
            """,
        },
        True,
    ),
    "xppmix_included": (
        {
            "xppb/lib/puppet_x/xppb/attrs.rb": """
                module PuppetX::Xppb
                  module Attrs
                    def self.included(base)
                      base.extend(ClassMethods)
                    end

                    module ClassMethods
                      def standard_attrs(prefix, kind = :param)
                        [:host, :port].each do |x|
                          kind == :param ? 1 : 2
                          newparam(:"#{prefix}_#{x}")
                        end
                        newproperty(:"#{prefix}_state")
                      end
                    end
                  end
                end
            """,
            "xppb/lib/puppet/type/xppmix_included.rb": """
                require 'puppet_x/xppb/attrs'

                Puppet::Type.newtype(:xppmix_included) do
                  include PuppetX::Xppb::Attrs
                  newparam(:name) { isnamevar }
                  standard_attrs 'db'
                  standard_attrs('cache')
                end
            """,
        },
        True,
    ),
    "xppmix_sibling": (
        {
            "xppshared/lib/puppet_x/xppshared/common.rb": """
                module PuppetX
                  module Xppshared
                    module Common
                      RETRY_PARAMS = %w[tries try_sleep].freeze

                      def common_params
                        newparam(:timeout)
                        RETRY_PARAMS.each { |p| newparam(p.to_sym) }
                      end
                    end
                  end
                end
            """,
            "xppc/lib/puppet/type/xppmix_sibling.rb": """
                require 'puppet_x/xppshared/common'

                Puppet::Type.newtype(:xppmix_sibling) do
                  extend PuppetX::Xppshared::Common
                  newparam(:name, namevar: true)
                  common_params
                end
            """,
        },
        True,
    ),
    "xppmix_local": (
        {
            "xppd/lib/puppet/type/xppmix_local.rb": """
                require 'puppet/parameter/boolean'

                PROPS = %w[owner group].freeze

                module XppLocalHelpers
                  def flag(name)
                    newparam(name, boolean: true, parent: Puppet::Parameter::Boolean)
                  end
                end

                Puppet::Type.newtype(:xppmix_local) do
                  extend XppLocalHelpers
                  def self.mode_property
                    newproperty(:mode) { desc 'the mode' }
                  end

                  newparam(:path, namevar: true)
                  PROPS.each { |p| newproperty(p.to_sym) }
                  send(:newparam, :label)
                  flag :force
                  mode_property
                end
            """,
        },
        True,
    ),
    "xppmix_reopen": (
        {
            "xppe/lib/puppet/type/xppmix_reopen.rb": """
                Puppet::Type.newtype(:xppmix_reopen) do
                  newparam(:name, namevar: true)
                end

                require_relative 'xppmix_reopen/colour'
                Puppet::Type.type(:xppmix_reopen).newparam(:shade)
            """,
            "xppe/lib/puppet/type/xppmix_reopen/colour.rb": """
                Puppet::Type.type(:xppmix_reopen).newproperty(:colour) do
                  newvalues(:red, :blue)
                end
                Puppet::Type::Xppmix_reopen.newparam(:brightness)
            """,
        },
        True,
    ),
    "xppmix_proc": (
        {
            "xppm/lib/puppet_x/xppm/common.rb": """
                module PuppetX
                  module Xppm
                    module Common
                      API_PARAMS = Proc.new do
                        ensurable
                        newparam(:base_url) { desc 'the URL' }
                        newparam(:timeout)
                      end

                      module Hooked
                        def self.included(klass)
                          klass.class_eval do
                            newproperty(:from_hook)
                          end
                        end
                      end
                    end
                  end
                end
            """,
            "xppm/lib/puppet/type/xppmix_proc.rb": """
                require_relative '../../puppet_x/xppm/common'

                Puppet::Type.newtype(:xppmix_proc) do
                  instance_eval(&PuppetX::Xppm::Common::API_PARAMS)
                  include PuppetX::Xppm::Common::Hooked
                  newparam(:name, namevar: true)
                end
            """,
        },
        True,
    ),
    "xppmix_extended": (
        {
            "xppn/lib/puppet_x/xppn/rest_resource.rb": """
                require 'puppet/parameter/boolean'

                module XppnRestResource
                  def self.extended(extender)
                    extender.newparam(:host) { defaultto 'localhost' }
                    extender.newparam(:ssl, boolean: true, parent: Puppet::Parameter::Boolean)
                    extender.newproperty(:settings)
                  end
                end
            """,
            "xppn/lib/puppet/type/xppmix_extended.rb": """
                $LOAD_PATH.unshift(File.join(File.dirname(__FILE__), '..', '..'))
                require 'puppet_x/xppn/rest_resource'

                Puppet::Type.newtype(:xppmix_extended) do
                  extend XppnRestResource
                  ensurable
                  newparam(:name, namevar: true)
                end
            """,
        },
        True,
    ),
    "xppmix_parent": (
        {
            "xppq/lib/puppet/type/xppmix_parent.rb": """
                require 'puppet/type/file'

                Puppet::Type.newtype(:xppmix_parent, parent: Puppet::Type::File) do
                  newparam(:name, namevar: true)
                  newproperty(:extra)
                end
            """,
        },
        True,
    ),
    "xppmix_rapi": (
        {
            "xppf/lib/puppet/type/xppmix_rapi.rb": """
                require 'puppet/resource_api'

                Puppet::ResourceApi.register_type(
                  name: 'xppmix_rapi',
                  docs: 'A Resource API type.',
                  features: [],
                  attributes: {
                    ensure: { type: 'Enum[present, absent]', desc: 'Whether.', default: 'present' },
                    name: { type: 'String', desc: 'The name.', behaviour: :namevar },
                    size: { type: 'Integer', desc: 'The size.' },
                  },
                )
            """,
        },
        True,
    ),
    # ---- open: the attribute set cannot be known without running Ruby
    "xppmix_range": (
        {
            "xppg/lib/puppet/type/xppmix_range.rb": """
                Puppet::Type.newtype(:xppmix_range) do
                  newparam(:name, namevar: true)
                  (1..3).each { |i| newparam(:"slot#{i}") }
                end
            """,
        },
        False,
    ),
    "xppmix_condition": (
        {
            "xpph/lib/puppet/type/xppmix_condition.rb": """
                Puppet::Type.newtype(:xppmix_condition) do
                  newparam(:name, namevar: true)
                  if Puppet.version.to_i >= 6
                    newparam(:modern)
                  end
                end
            """,
        },
        False,
    ),
    "xppmix_mapped": (
        {
            "xppi/lib/puppet_x/xppi/build.rb": """
                module PuppetX
                  module Xppi
                    module Build
                      def mapped_params
                        %w[a b].map { |n| "x_#{n}" }.each { |n| newparam(n.to_sym) }
                      end
                    end
                  end
                end
            """,
            "xppi/lib/puppet/type/xppmix_mapped.rb": """
                require 'puppet_x/xppi/build'

                Puppet::Type.newtype(:xppmix_mapped) do
                  extend PuppetX::Xppi::Build
                  newparam(:name, namevar: true)
                  newproperty(:known)
                  mapped_params
                end
            """,
        },
        False,
    ),
    "xppmix_dynamic": (
        {
            "xppj/lib/puppet/type/xppmix_dynamic.rb": """
                Puppet::Type.newtype(:xppmix_dynamic) do
                  newparam(:name, namevar: true)
                  kind = ENV.fetch('XPPMIX_NO_SUCH_VARIABLE', 'param')
                  send("new#{kind}", :dyn)
                end
            """,
        },
        False,
    ),
    "xppmix_handed": (
        {
            "xppk/lib/puppet_x/xppk/installer.rb": """
                module PuppetX
                  module Xppk
                    class Installer
                      def self.install(type)
                        type.ensurable
                        type.define_singleton_method(:title_patterns) { [[/(.*)/m, [[:name]]]] }
                        type.newparam(:installed_by_helper)
                        type.newparam(:name)
                      end

                      def install(type)
                        type.newparam(:installed_by_an_instance)
                      end
                    end
                  end
                end
            """,
            "xppk/lib/puppet/type/xppmix_handed.rb": """
                require File.join(File.dirname(__FILE__), '..', '..', 'puppet_x/xppk/installer')

                Puppet::Type.newtype(:xppmix_handed) do
                  newparam(:path, namevar: true)
                  PuppetX::Xppk::Installer.install(self)
                end
            """,
        },
        True,
    ),
    "xppmix_handed_away": (
        {
            "xppp/lib/puppet/type/xppmix_handed_away.rb": """
                require 'puppet_x/xppk/installer'

                Puppet::Type.newtype(:xppmix_handed_away) do
                  newparam(:name, namevar: true)
                  PuppetX::Xppk::Installer.new.install(self)
                end
            """,
        },
        False,
    ),
    "xppmix_reopen_if": (
        {
            "xppo/lib/puppet/type/xppmix_reopen_if.rb": """
                Puppet::Type.newtype(:xppmix_reopen_if) do
                  newparam(:name, namevar: true)
                end

                if Puppet::Util::Package.versioncmp(Puppet.version, '5.0.0') >= 0
                  Puppet::Type.type(:xppmix_reopen_if).newparam(:recent)
                end
            """,
        },
        False,
    ),
    "xppmix_rapi_merged": (
        {
            "xppl/lib/puppet/type/xppmix_rapi_merged.rb": """
                require 'puppet/resource_api'

                COMMON = { name: { type: 'String', desc: 'The name.', behaviour: :namevar } }.freeze

                Puppet::ResourceApi.register_type(
                  name: 'xppmix_rapi_merged',
                  docs: 'A Resource API type sharing attributes.',
                  features: [],
                  attributes: COMMON.merge(size: { type: 'Integer', desc: 'The size.' }),
                )
            """,
        },
        False,
    ),
}


def _write(root: str, files: dict[str, str]) -> None:
    for rel, text in files.items():
        p = os.path.join(root, rel)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "w") as f:
            f.write(textwrap.dedent(text).lstrip())


@pytest.fixture(scope="module")
def mixin_modules(tmp_path_factory) -> str:
    root = str(tmp_path_factory.mktemp("modules"))
    for files, _closed in SCENARIOS.values():
        _write(root, files)
    return root


@pytest.fixture(scope="module", params=["7.23", "8"])
def mixin_answers(request, mixin_modules) -> dict:
    """Puppet 7.23's and OpenVox 8's answers for the scenarios' types."""
    from tests.conformance.oracle import oracle_for

    oracle = oracle_for(request.param)
    # the files' contents in the oracle cache's key (a later run may get the same temporary directory)
    files = sorted(os.path.join(mixin_modules, rel) for fs, _closed in SCENARIOS.values() for rel in fs)
    return oracle.call("ruby_api", modulepath=[mixin_modules], types=sorted(SCENARIOS), files=files)["types"]


def _scenario_sym(root: str, name: str) -> Sym:
    files, _closed = SCENARIOS[name]
    path = os.path.join(root, next(rel for rel in files if rel.endswith(f"/puppet/type/{name}.rb")))
    syms = [s for s in index_ruby_file(path) if s.kind == "resource_type" and s.name == name]
    assert len(syms) == 1
    return syms[0]


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_types_built_through_mixins_match_puppet(name, mixin_modules, mixin_answers):
    sym = _scenario_sym(mixin_modules, name)
    closed = SCENARIOS[name][1]
    assert "error" not in mixin_answers[name], mixin_answers[name]
    assert sym.open_attrs is not closed
    result = _compare({name: sym}, mixin_answers)
    assert result["mismatched"] == []
    assert result["closed_exact" if closed else "open_subset"] == [name]
    if closed:  # the namevar too, as Puppet's key attributes, and the allowed values
        assert sorted(a.name for a in sym.attrs if a.namevar) == sorted(mixin_answers[name]["namevars"])
        real = {a: sorted(v["values"]) for a, v in mixin_answers[name]["attributes"].items()}
        assert {a.name: sorted(v for v in a.values if not v.startswith("/")) for a in sym.attrs} == real


def test_helper_not_found_makes_the_type_open(tmp_path):
    """A helper module that is not on the module path (a gem's, or a typo): what is read is kept, the
    type is open; a Puppet:: module (Puppet's own, which defines no attributes) keeps it closed."""
    _write(
        str(tmp_path),
        {
            "m/lib/puppet/type/gone.rb": """
                require 'puppet_x/elsewhere/helpers'
                Puppet::Type.newtype(:gone) do
                  extend PuppetX::Elsewhere::Helpers
                  newparam(:name, namevar: true)
                  more_params
                end
            """,
            "m/lib/puppet/type/util.rb": """
                Puppet::Type.newtype(:util) do
                  include Puppet::Util::Checksums
                  newparam(:name, namevar: true)
                end
            """,
        },
    )
    (gone,) = index_ruby_file(str(tmp_path / "m/lib/puppet/type/gone.rb"))
    assert [a.name for a in gone.attrs] == ["name"] and gone.open_attrs
    (util,) = index_ruby_file(str(tmp_path / "m/lib/puppet/type/util.rb"))
    assert [a.name for a in util.attrs] == ["name"] and not util.open_attrs


def test_recursive_and_broken_helpers_never_raise(tmp_path):
    """A helper calling itself, a helper file that does not parse, a require of a directory: bounded,
    the type open or closed but read."""
    _write(
        str(tmp_path),
        {
            "m/lib/puppet_x/m/loop.rb": """
                module PuppetX::M::Loop
                  def again(n)
                    newparam(n)
                    again(n)
                  end
                end
            """,
            "m/lib/puppet_x/m/broken.rb": "module PuppetX::M::Broken\n  def (((\n",
            "m/lib/puppet/type/rec.rb": """
                require 'puppet_x/m/loop'
                require 'puppet_x/m/broken'
                require 'puppet_x'
                Puppet::Type.newtype(:rec) do
                  extend PuppetX::M::Loop
                  extend PuppetX::M::Broken
                  newparam(:name, namevar: true)
                  again :first
                end
            """,
        },
    )
    (rec,) = index_ruby_file(str(tmp_path / "m/lib/puppet/type/rec.rb"))
    assert [a.name for a in rec.attrs] == ["name", "first"] and rec.open_attrs


def test_the_index_cache_keeps_open_and_sees_helper_edits(tmp_path, monkeypatch):
    """``open_attrs`` survives the persistent index cache, and editing a helper under ``lib/puppet_x/``
    re-reads the type that extends it (its bytes did not change)."""
    from puppet_xpp.server.analysis.index_cache import IndexCache

    monkeypatch.setenv("PUPPET_XPP_INDEX_CACHE", str(tmp_path / "cache"))
    root = tmp_path / "modules"
    files, _ = SCENARIOS["xppmix_mapped"]
    _write(str(root), files)
    type_file = str(root / "xppi/lib/puppet/type/xppmix_mapped.rb")

    def index() -> tuple[Sym, bool]:
        cache = IndexCache.open([str(root)], str(tmp_path / "cache"))
        syms, _refs, hit = cache.index(type_file)
        assert cache.save()
        return syms[0], hit

    first, hit = index()
    assert not hit and first.open_attrs
    again, hit = index()
    assert hit and again.open_attrs and [a.name for a in again.attrs] == [a.name for a in first.attrs]
    helper = root / "xppi/lib/puppet_x/xppi/build.rb"
    helper.write_text(helper.read_text().replace('%w[a b].map { |n| "x_#{n}" }', "%w[x_a x_b]"))
    edited, hit = index()
    assert not hit and not edited.open_attrs
    assert [a.name for a in edited.attrs] == ["name", "known", "x_a", "x_b"]


def test_damaged_helpers_never_raise(tmp_path):
    """Every scenario with its helper files or its type file truncated, spliced or given a stray token at
    random (12 times each): reading never raises, and what is read is well formed."""
    import random

    rnd = random.Random(30)
    for name, (files, _closed) in sorted(SCENARIOS.items()):
        for trial in range(12):
            root = tmp_path / f"{name}-{trial}"
            _write(str(root), files)
            victim = root / rnd.choice(sorted(files))
            data = victim.read_bytes()
            i = rnd.randrange(len(data) + 1)
            victim.write_bytes(
                rnd.choice(
                    [
                        data[:i],
                        data[:i] + data[i + rnd.randrange(40) :],
                        data[:i]
                        + rnd.choice([b"(", b" do", b"'", b"<<-X\n", b"{", b"end\n", b"\0"])
                        + data[i:],
                    ]
                )
            )
            type_file = next(root / rel for rel in files if rel.endswith(f"/puppet/type/{name}.rb"))
            for sym in index_ruby_file(str(type_file)):
                assert sym.name and isinstance(sym.open_attrs, bool)
                assert all(a.name and a.kind in ("param", "property") for a in sym.attrs)
            # and the follower's last-resort guard (an exception: the type left open) was not what did it
            parsed = ruby_mixins.parsed(str(type_file))
            assert parsed is not None
            for call in ruby_mixins.calls(parsed.root):
                named = ruby_mixins.args(call)
                if ruby_mixins.method_name(call) == "newtype" and named and ruby_mixins.name_of(named[0]):
                    code = ruby_mixins.follow_type(str(ruby_mixins.name_of(named[0])), call, parsed)
                    assert not any(r.startswith("code not read") for r in code.open_reasons), (
                        code.open_reasons
                    )


def test_the_index_cache_sees_an_edit_of_a_sibling_modules_helper(tmp_path):
    """A helper under another module's ``lib/puppet_x/`` (xppmix_sibling's): editing it re-reads the type
    that extends it from the persistent index cache."""
    from puppet_xpp.server.analysis.index_cache import IndexCache

    root = tmp_path / "modules"
    files, _ = SCENARIOS["xppmix_sibling"]
    _write(str(root), files)
    type_file = str(root / "xppc/lib/puppet/type/xppmix_sibling.rb")

    def index() -> tuple[Sym, bool]:
        cache = IndexCache.open([str(root)], str(tmp_path / "cache"))
        syms, _refs, hit = cache.index(type_file)
        assert cache.save()
        return syms[0], hit

    first, hit = index()
    assert not hit and [a.name for a in first.attrs] == ["name", "timeout", "tries", "try_sleep"]
    assert index()[1]
    helper = root / "xppshared/lib/puppet_x/xppshared/common.rb"
    helper.write_text(helper.read_text().replace("%w[tries try_sleep]", "%w[tries try_sleep retry_backoff]"))
    edited, hit = index()
    assert not hit and [a.name for a in edited.attrs][-1] == "retry_backoff"

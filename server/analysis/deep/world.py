"""What the deep checks ask of the world: which classes, defined types, resource types, functions,
type aliases, modules and Hiera keys exist in a file's environment and module path.

:class:`World` answers from what the analysis has already: the workspace index
(:class:`server.analysis.index.WorkspaceIndex`: Puppet-language definitions, Ruby functions and types,
custom facts), Puppet's built-ins at the file's level (:mod:`server.analysis.builtins`), the vendored
types (:mod:`server.analysis.tables`), the modules on the module path (:mod:`server.analysis.modules`)
and the Hiera layers (:mod:`server.analysis.hiera`).  It computes nothing of its own beyond a
per-world memo.

The checks never use a World directly: each statement is checked through a :class:`Recording` that
notes every (kind, name) asked, so that a statement's findings are a pure function of (the statement,
the answers to what it asked) and a caller can keep them until one of those answers changes
(:meth:`World.answer_key`).
"""

from __future__ import annotations

import functools
import os
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from puppet_xpp.server.analysis import builtins
from puppet_xpp.server.analysis.symbols import Sym

if TYPE_CHECKING:
    from puppet_xpp.server.analysis.hiera import Layer, Reader

__all__ = ["Answers", "Asked", "Recording", "SymbolIndex", "World"]

# (kind, name): one question a check asked of the world
Asked = tuple[str, str]

# the Puppet core types' names that are types without being Puppet::Type subclasses the reader sees
_ALWAYS_TYPES = frozenset(
    {"class", "node", "stage", "component", "whit", "filebucket", "resources", "schedule"}
)
# types that one Puppet ships (vendored modules of the AIO packages, types moved out of Puppet 6) and
# another does not (Debian's Puppet 7.23 ships none): whether they exist depends on the installation
_VENDORED_TYPES = frozenset(
    {
        "augeas", "cron", "host", "mount", "scheduled_task", "selboolean", "selmodule",
        "ssh_authorized_key", "sshkey", "yumrepo", "zfs", "zpool", "zone", "k5login", "mailalias",
        "maillist", "macauthorization", "mcx", "computer", "interface", "router", "vlan",
    }
)  # fmt: skip


class SymbolIndex(Protocol):
    """What the world asks of the workspace index (server/analysis/index.py's WorkspaceIndex)."""

    def lookup(self, name: str, kinds: Iterable[str] | None = None) -> list[Sym]: ...


def key_of(name: str) -> str:
    """A name as the index keys it: lower case, no leading ``::``."""
    return name.lower().lstrip(":")


class Answers(Protocol):
    """The questions a check may ask (a :class:`World`, or a :class:`Recording` of one)."""

    @property
    def level(self) -> str | None: ...

    def find_class(self, name: str) -> Sym | None: ...
    def find_define(self, name: str) -> Sym | None: ...
    def find_resource_type(self, name: str) -> Sym | None: ...
    def resource_type_known(self, name: str) -> bool: ...
    def find_functions(self, name: str) -> list[Sym]: ...
    def find_type_alias(self, name: str) -> Sym | None: ...
    def hiera_has(self, key: str) -> bool | None: ...
    def module_present(self, name: str) -> bool | None: ...
    def fact_known(self, name: str) -> bool: ...
    def missing_dependencies(self, path: str) -> list[str]: ...
    def top_variable(self, name: str) -> bool | None: ...
    def class_variables(self, name: str) -> frozenset[str] | None: ...
    def names_of(self, kind: str) -> list[str]: ...


@functools.lru_cache(maxsize=8192)
def _core_fact(key: str) -> bool:
    """A core fact's name (Facter's tables: fixed; kept, as matching the schema's dynamic names takes
    regular expressions, and a long body asks about every variable it uses at each check)."""
    return key in _core_fact_names() or builtins.fact_schema_entry([key]) is not None


class World:
    """The answers for one environment: ``index`` (the workspace index holding every module of the
    module path and the environment's manifests), ``level`` (the language level of the built-ins),
    ``modulepath`` (the directories whose modules exist; empty: unknown, so no module is said to be
    missing; ``modules``: the modules by name when the caller knows them, a checkout named
    ``puppet-<name>/`` too), ``env_root`` (the environment's directory, for its Hiera layer), ``local`` (the checked
    document's own definitions, which the index may not hold yet), ``hiera_read`` (the Hiera files
    open in the editor: their buffers are read instead of the files).

    ``complete`` False (the index is still being built) makes every "does not exist" answer unknown:
    the checks then report nothing that depends on a name not existing."""

    def __init__(
        self,
        index: SymbolIndex,
        *,
        level: str | None = None,
        modulepath: Sequence[str] = (),
        env_root: str | None = None,
        local: Sequence[Sym] = (),
        complete: bool = True,
        hiera_layers: Sequence[Layer] | None = None,
        modules: Mapping[str, str] | None = None,
        manifest: str | None = None,
        suggest: bool = True,
        memoize: bool = False,
        programs: Mapping[str, Any] | None = None,
        hiera_read: Reader | None = None,
    ) -> None:
        self.index = index
        # path -> the text of a Hiera file open in the editor (None: read the file): the language
        # server's buffers, so that a key typed in data/common.yaml counts before it is saved
        self._hiera_read = hiera_read
        # absolute path -> its program as the caller parsed it already (a command line's run): an
        # inherited class's scope is read from there instead of parsing its file again
        self._programs = programs if programs is not None else {}
        self._level = level
        self.modulepath = tuple(modulepath)
        self.env_root = env_root
        self.local = local
        self.complete = complete
        self._hiera_layers = hiera_layers
        # module name -> its directory (None: read from the module path when first asked)
        self._modules: dict[str, str] | None = dict(modules) if modules is not None else None
        self._hiera_readable: bool | None = None
        self._hiera_keys: dict[str, bool] = {}
        # (a key a module layer sets outside the module's namespace counts as set: Hiera ignores it, so
        # the answer errs towards "given", never towards a finding)
        self._hiera_all: frozenset[str] | None = None
        # answers kept by (name, kinds) when the index does not change under the world (a command
        # line's); the language server's index does: its worlds ask it every time
        self._memo: dict[tuple[str, tuple[str, ...]], list[Sym]] | None = {} if memoize else None
        self.suggest = suggest  # False: no did-you-mean lists (a command line prints none)
        self.manifest = manifest  # the main manifest (file or directory), for top-scope variables
        self._top_variables: set[str] | None = None  # (None once loaded: unreadable)
        self._top_loaded = False
        self._class_variables: dict[str, frozenset[str] | None] = {}

    # -- the answers

    @property
    def level(self) -> str | None:
        return self._level

    @property
    def local(self) -> list[Sym]:
        """The checked file's own definitions (which the index may not hold yet), preferred to the index's."""
        return self._local

    @local.setter
    def local(self, syms: Sequence[Sym]) -> None:
        # keyed once: a lookup per name used would otherwise scan them all (a 5 MB manifest of classes
        # has tens of thousands, and its deep check spent seconds in those scans)
        self._local = list(syms)
        self._local_keys: dict[str, list[Sym]] = {}
        for s in self._local:
            self._local_keys.setdefault(s.key, []).append(s)

    def _lookup(self, name: str, kinds: tuple[str, ...]) -> list[Sym]:
        key = key_of(name)
        local = [s for s in self._local_keys.get(key, ()) if s.kind in kinds]
        if local:
            return local
        memo = self._memo  # (the index's answers only: the local definitions change per file)
        if memo is None:
            return self.index.lookup(key, kinds)
        hit = memo.get((key, kinds))
        if hit is None:
            hit = memo[(key, kinds)] = self.index.lookup(key, kinds)
        return hit

    def find_class(self, name: str) -> Sym | None:
        hits = self._lookup(name, ("class",))
        return hits[0] if hits else None

    def find_define(self, name: str) -> Sym | None:
        hits = self._lookup(name, ("define",))
        return hits[0] if hits else None

    def find_resource_type(self, name: str) -> Sym | None:
        """A Ruby-defined type of the modules, else a core type of the level (its attributes known)."""
        hits = self._lookup(name, ("resource_type",))
        if hits:
            return hits[0]
        return builtins.types(self._level).get(key_of(name))

    def resource_type_known(self, name: str) -> bool:
        """A type that exists (or may, depending on the installation) though its attributes are not
        known: the vendored modules' types, the types Puppet 6 moved out (``nagios_*``...)."""
        from puppet_xpp.server.analysis.tables import RESOURCE_TYPES

        key = key_of(name)
        return (
            key in _ALWAYS_TYPES
            or key in RESOURCE_TYPES
            or key in _VENDORED_TYPES
            or key.startswith("nagios_")
        )

    def find_functions(self, name: str) -> list[Sym]:
        """Every definition of function ``name``, in the loaders' order (the built-in first)."""
        from puppet_xpp.server.analysis.world import functions_named

        memo = self._memo
        own = self._local_keys.get(key_of(name), [])
        if memo is None or own:
            return functions_named(self.index, name, own, self._level)
        key = (key_of(name), ("function()",))
        hit = memo.get(key)
        if hit is None:
            hit = memo[key] = functions_named(self.index, name, own, self._level)
        return hit

    def find_type_alias(self, name: str) -> Sym | None:
        hits = self._lookup(name, ("type",))
        return hits[0] if hits else None

    def fact_known(self, name: str) -> bool:
        """A fact a node may have under that top-scope name: a core fact of any Facter (legacy names,
        a structured fact's top-level name, a schema's dynamic name such as
        ``blockdevice_<devicename>_size``), one Puppet adds (``puppetversion``), or a custom fact of the
        modules (``Facter.add``)."""
        key = name.lstrip(":")
        if _core_fact(key):
            return True
        return bool(self.index.lookup(key, ("fact",)))

    def top_variable(self, name: str) -> bool | None:
        """Does the environment's main manifest assign ``name`` at top or node scope?  None: the
        manifest cannot be read or parsed (then any name may be one).  No environment: False (the
        module is checked as rspec-puppet compiles it, with an empty main manifest)."""
        if not self._top_loaded:
            manifest = self.manifest
            if manifest is None and self.env_root is not None:  # (the environment's own setting)
                from puppet_xpp.xpp.environment import NotAnEnvironment, load_environment

                try:
                    manifest = load_environment(self.env_root).manifest
                except NotAnEnvironment:
                    manifest = None
            self._top_variables = _manifest_variables(manifest)
            self._top_loaded = True
        if self._top_variables is None:
            return None
        return name in self._top_variables

    def module_present(self, name: str) -> bool | None:
        """Is module ``name`` on the module path?  None: the module path is not known."""
        if not self.modulepath and self._modules is None:
            return None
        if self._modules is None:
            from puppet_xpp.server.analysis.modules import modules_on_path

            self._modules = {n: m.directory for n, m in modules_on_path(self.modulepath).items()}
        return name.lower() in self._modules

    def class_variables(self, name: str, depth: int = 0) -> frozenset[str] | None:
        """The variables a class's scope holds for a class that inherits it: its parameters, what its
        body assigns, and its own parent's (read from its file).  None: the class or its file cannot be
        read, or the chain is too deep."""
        key = key_of(name)
        if key in self._class_variables:
            return self._class_variables[key]
        self._class_variables[key] = None  # (a cycle resolves to nothing)
        sym = self.find_class(key)
        found = None
        if sym is not None and depth < 8:
            program = self._programs.get(os.path.abspath(sym.path)) if sym.path else None
            if program is not None:
                found = _scope_in(program, key)
            else:
                from puppet_xpp.server.analysis.deep.hieraconf import stamp

                found = _class_scope(sym.path, key, stamp(sym.path))
        result: frozenset[str] | None = None
        if found is not None:
            names, parent = found
            inherited = self.class_variables(parent, depth + 1) if parent else frozenset()
            result = None if inherited is None else frozenset(names | inherited)
        self._class_variables[key] = result
        return result

    def missing_dependencies(self, path: str) -> list[str]:
        """The modules the metadata.json of ``path``'s module depends on that are not on the module
        path (an unqualified function or Ruby type may come from any of them: not provably unknown)."""
        if not self.modulepath and self._modules is None:
            return []
        from puppet_xpp.server.analysis.deep.hieraconf import module_dependencies

        root = _module_root(os.path.abspath(path))
        if root is None:
            return []
        return [m for m in module_dependencies(root) if self.module_present(m) is False]

    def hiera_has(self, key: str) -> bool | None:
        """Is ``key`` set in the environment's or its module's Hiera data?  None: that cannot be read
        statically (a backend other than YAML/JSON files, a data function, no environment).  The
        global layer (the compiling Puppet's ``hiera_config``) is not the code's and is not read: see
        :mod:`server.analysis.hiera`."""
        key = key_of(key)
        hit = self._hiera_keys.get(key)
        if hit is not None:
            return hit
        if not self._hiera_statically_readable(key):
            return None
        if self._hiera_all is None:  # every top-level key of the layers' data files, read once
            from puppet_xpp.server.analysis import hiera

            self._hiera_all = frozenset(hiera.all_keys(self._layers(), self._hiera_read))
        found = key in self._hiera_all
        self._hiera_keys[key] = found
        return found

    def names_of(self, kind: str) -> list[str]:
        """Every name of ``kind`` the index holds (did-you-mean); kinds as :meth:`answer_key`'s."""
        if not self.suggest:
            return []
        all_of = getattr(self.index, "all", None)
        names: set[str] = set()
        if kind == "resource_type":
            names.update(builtins.types(self._level))
        if kind == "function":
            names.update(builtins.functions(self._level))
        if callable(all_of):
            for s in all_of():
                if isinstance(s, Sym) and s.kind == kind:
                    names.add(s.key)
        names.update(s.key for s in self.local if s.kind == kind)
        return sorted(names)

    # -- caching

    def answer_key(self, asked: Asked) -> tuple[object, ...]:
        """What the answer to ``asked`` is, as a hashable value: a caller keeps a statement's findings
        while the answer keys of everything it asked are unchanged."""
        kind, name = asked
        syms: list[Sym | None]
        if kind == "class":
            syms = [self.find_class(name)]
        elif kind == "define":
            syms = [self.find_define(name)]
        elif kind == "resource_type":
            syms = [self.find_resource_type(name)]
        elif kind == "function":
            syms = list(self.find_functions(name))
        elif kind == "type":
            syms = [self.find_type_alias(name)]
        elif kind == "hiera":
            return (self.hiera_has(name),)
        elif kind == "module":
            return (self.module_present(name),)
        elif kind == "fact":
            return (self.fact_known(name),)
        elif kind == "class_variables":
            return (self.class_variables(name),)
        elif kind == "top_variable":
            return (self.top_variable(name),)
        elif kind == "dependencies":
            return tuple(self.missing_dependencies(name))
        else:
            return (self.complete,)
        return tuple(_sym_key(s) for s in syms)

    # -- Hiera

    def _layers(self) -> Sequence[Layer]:
        if self._hiera_layers is None:
            from puppet_xpp.server.analysis import hiera

            # (an environment without hiera.yaml has no layer: Puppet 7.23 and OpenVox 8 read its data/
            # only through one -- checked by tests/test_deep_checks.py -- unless environment.conf names
            # a data provider, which makes its Hiera not static: hieraconf)
            self._hiera_layers = hiera.layers_for(self.env_root, self.modulepath, self._hiera_read)
        return self._hiera_layers

    def _hiera_statically_readable(self, key: str) -> bool:
        """The environment's and the key's module's hiera.yaml use only YAML/JSON data files."""
        if self.env_root is None:
            return False
        from puppet_xpp.server.analysis.deep.hieraconf import statically_readable

        if not statically_readable(self.env_root, read=self._hiera_read):
            return False
        module = key.split("::", 1)[0] if "::" in key else None
        if module is None or not self.modulepath:
            return True
        if self._modules is None:
            self.module_present(module)
        directory = (self._modules or {}).get(module)
        return directory is None or statically_readable(directory, module=module, read=self._hiera_read)


# facts Puppet itself adds to a node's facts (besides Facter's)
_PUPPET_FACTS = frozenset(
    {
        "puppetversion",
        "clientcert",
        "clientversion",
        "clientnoop",
        "agent_specified_environment",
        "implementation",
    }
)


@functools.cache
def _core_fact_names() -> frozenset[str]:
    """Every core fact's top-scope name: each level's fact names and their first segments, Facter's
    schema (legacy names too) and Puppet's own."""
    names: set[str] = set(_PUPPET_FACTS)
    for level in builtins.DATA_FILES:
        for fact in builtins.data(level).get("facts", {}):
            names.add(fact)
            names.add(fact.split(".", 1)[0])
    names.update(builtins.fact_schema())
    return frozenset(names)


def _manifest_variables(manifest: str | None) -> set[str] | None:
    """The variables a main manifest (file or directory) assigns outside classes, defines and
    functions (node bodies included: the classes a node declares see them); None when a file of it
    cannot be read or parsed."""
    if manifest is None or not os.path.exists(manifest):
        return set()
    from puppet_xpp.grammar import ast
    from puppet_xpp.grammar.check import parse
    from puppet_xpp.server.analysis.deep.variables import assigned_names
    from puppet_xpp.xpp.sources import read_text

    files = [manifest]
    if os.path.isdir(manifest):
        files = sorted(os.path.join(d, f) for d, _, fs in os.walk(manifest) for f in fs if f.endswith(".pp"))
    out: set[str] = set()
    for f in files:
        text = read_text(f, errors="strict")
        if text is None:
            return None
        program: Any = parse(text, f, keep_tokens=False).program
        if program is None:
            return None
        out |= assigned_names(program.body)
        for node in program.definitions:
            if type(node) is ast.NodeDefinition:
                out |= assigned_names(node.body)
    return out


@functools.lru_cache(maxsize=256)
def _class_scope(
    path: str, key: str, _stamp: tuple[tuple[int, int] | None, ...]
) -> tuple[set[str], str | None] | None:
    """(parameters and assigned variables, parent class) of class ``key`` defined in ``path`` (cached
    while the file is unchanged: ``_stamp``)."""
    from puppet_xpp.grammar.check import parse
    from puppet_xpp.xpp.sources import read_text

    text = read_text(path, errors="strict") if path.endswith(".pp") else None
    if text is None:
        return None
    return _scope_in(parse(text, path, keep_tokens=False).program, key)


def _scope_in(program: Any, key: str) -> tuple[set[str], str | None] | None:
    """(parameters and assigned variables, parent class) of class ``key`` in a file's ``program``."""
    from puppet_xpp.grammar import ast
    from puppet_xpp.server.analysis.deep.variables import assigned_names

    for d in program.definitions if program is not None else ():
        if type(d) is ast.HostClassDefinition and key_of(d.name) == key:
            names = {p.name for p in d.parameters} | assigned_names(d.body)
            return names, d.parent_class
    return None


def _module_root(path: str) -> str | None:
    """The directory of the module holding ``path`` (the nearest one with a metadata.json), or None."""
    d = os.path.dirname(path)
    for _ in range(8):
        if os.path.isfile(os.path.join(d, "metadata.json")):
            return d
        parent = os.path.dirname(d)
        if parent == d:
            break
        d = parent
    return None


def _sym_key(s: Sym | None) -> tuple[object, ...]:
    if s is None:
        return ()
    return (
        s.kind,
        s.path,
        s.name,
        s.origin,
        tuple((p.name, p.type, p.default, p.kind) for p in s.params),
        tuple((tuple((p.name, p.type, p.kind) for p in g.params)) for g in s.signatures),
        tuple(a.name for a in s.attrs),
        s.open_attrs,
    )


class Recording:
    """A World seen by one statement's checks: every question is noted in :attr:`asked`."""

    def __init__(self, world: World) -> None:
        self.world = world
        self.asked: set[Asked] = set()

    @property
    def level(self) -> str | None:
        return self.world.level

    @property
    def complete(self) -> bool:
        return self.world.complete

    def find_class(self, name: str) -> Sym | None:
        self.asked.add(("class", key_of(name)))
        return self.world.find_class(name)

    def find_define(self, name: str) -> Sym | None:
        self.asked.add(("define", key_of(name)))
        return self.world.find_define(name)

    def find_resource_type(self, name: str) -> Sym | None:
        self.asked.add(("resource_type", key_of(name)))
        return self.world.find_resource_type(name)

    def resource_type_known(self, name: str) -> bool:
        return self.world.resource_type_known(name)  # (a fixed table: nothing to record)

    def find_functions(self, name: str) -> list[Sym]:
        self.asked.add(("function", key_of(name)))
        return self.world.find_functions(name)

    def find_type_alias(self, name: str) -> Sym | None:
        self.asked.add(("type", key_of(name)))
        return self.world.find_type_alias(name)

    def hiera_has(self, key: str) -> bool | None:
        self.asked.add(("hiera", key_of(key)))
        return self.world.hiera_has(key)

    def module_present(self, name: str) -> bool | None:
        self.asked.add(("module", name.lower()))
        return self.world.module_present(name)

    def fact_known(self, name: str) -> bool:
        self.asked.add(("fact", name.lstrip(":")))
        return self.world.fact_known(name)

    def top_variable(self, name: str) -> bool | None:
        self.asked.add(("top_variable", name))
        return self.world.top_variable(name)

    def class_variables(self, name: str) -> frozenset[str] | None:
        self.asked.add(("class_variables", key_of(name)))
        return self.world.class_variables(name)

    def missing_dependencies(self, path: str) -> list[str]:
        self.asked.add(("dependencies", path))
        return self.world.missing_dependencies(path)

    def names_of(self, kind: str) -> list[str]:
        self.asked.add(("names", kind))
        return self.world.names_of(kind)

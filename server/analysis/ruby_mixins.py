"""Which attributes a Ruby resource type defines, followed statically through the code it calls (issue 30,
item 2): ``extend``/``include`` of modules under the module's (or a sibling module's) ``lib/`` -- typically
``lib/puppet_x/`` -- with their ``extended``/``included`` hooks and the helper methods they define,
``require``/``require_relative`` of files that re-open the type (``Puppet::Type.type(:file).newproperty``),
loops over literal lists and hashes (``[:a, :b].each do |n| newparam(n) ... end``, ``%i[...]``, a constant
bound to one), a helper's literal arguments bound to its parameters, ``send`` of a literal method name,
``class_eval do ... end`` and ``instance_eval(&PROC_CONSTANT)``.  Ruby is never run.

What cannot be followed makes the type **open** (its attribute set is then a lower bound, and no
unknown-parameter finding is made for it): a computed attribute name, a call at class level of a method
that is not found, ``send`` of a computed name, ``eval`` or an ``instance_eval`` of unknown code, a loop over
something that is not a literal list when its body defines attributes, attributes defined (or the type
re-opened) under a condition, ``self`` handed to code not found, a module
extended or included that is not found (Puppet's own ``Puppet::`` modules excepted: they define no
attributes), a conditional ``extend``/``include`` of a module with a hook.

Bounded: helper calls nest at most :data:`MAX_DEPTH` deep, at most :data:`MAX_FILES` files are read per
type, and a method already being followed is not followed again (recursion makes the type open).  Each
file is parsed once per (path, size, modification time) (:func:`parsed`).

The tree helpers here (:func:`text`, :func:`args`, :func:`name_of`, ...) are also the Ruby reader's
(server/analysis/ruby_index.py), which builds the attributes from the calls found here."""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from tree_sitter import Language, Node, Parser

MAX_DEPTH = 8
MAX_FILES = 64
DEFINERS = frozenset(("newparam", "newproperty", "newcheck"))
# class-level methods of Puppet::Type (and Ruby's Module) that define no attribute: calling them keeps the
# attribute set known (providify's `provider` parameter: ruby_index reads it from the providers directory)
HARMLESS = frozenset(
    (
        "desc doc feature autorequire autobefore autonotify autosubscribe validate newmetaparam "
        "apply_to_device apply_to_host apply_to_all define_singleton_method attr_accessor attr_reader attr_writer private public "
        "protected private_class_method public_class_method module_function alias_method define_method raise "
        "fail warn puts p require require_relative lambda proc defaultprovider providify suppress_defaults? "
        "freeze"
    ).split()
)
_LOOPS = frozenset(("each", "each_with_index", "each_pair", "each_key", "map", "collect", "each_entry"))
_DYNAMIC = frozenset(("instance_eval", "class_eval", "class_exec", "module_eval", "instance_exec", "eval"))
_SENDS = frozenset(("send", "public_send", "__send__"))
_MIXINS = frozenset(("ensurable", "extend", "include"))
_CONDITIONALS = frozenset(
    (
        "if unless if_modifier unless_modifier case case_match while until while_modifier until_modifier for "
        "begin conditional binary rescue_modifier"
    ).split()
)


@functools.cache
def _ruby() -> Language:
    """tree-sitter's Ruby grammar (immutable once loaded)."""
    import tree_sitter_ruby

    return Language(tree_sitter_ruby.language())


def parse(data: bytes) -> Node:
    """The root node of Ruby source ``data`` (tree-sitter recovers from errors)."""
    return Parser(_ruby()).parse(data).root_node


@dataclass(slots=True)
class RubyFile:
    path: str
    data: bytes
    root: Node


@functools.lru_cache(maxsize=512)
def _parsed(path: str, size: int, mtime_ns: int) -> RubyFile | None:
    from puppet_xpp.xpp.sources import read_bytes

    raw = read_bytes(path)
    if raw.data is None:
        return None
    try:
        return RubyFile(path, raw.data, parse(raw.data))
    except Exception:  # a file tree-sitter cannot take is a file not found
        return None


def parsed(path: str) -> RubyFile | None:
    """A helper file read and parsed, once per (path, size, modification time); None: not a readable
    regular file."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    if not os.path.isfile(path):
        return None
    return _parsed(os.path.abspath(path), st.st_size, st.st_mtime_ns)


# ----------------------------------------------------------------------------------------------- tree helpers


def text(n: Node | None) -> str:
    return n.text.decode("utf-8", "replace") if n is not None and n.text is not None else ""


def method_name(call: Node) -> str:
    return text(call.child_by_field_name("method"))


def args(call: Node) -> list[Node]:
    a = call.child_by_field_name("arguments")
    return [c for c in a.named_children if c.type != "comment"] if a is not None else []


def block_body(call: Node) -> list[Node]:
    """Statements of a call's do/brace block."""
    b = call.child_by_field_name("block")
    if b is None:
        return []
    for c in b.named_children:
        if c.type in ("body_statement", "block_body"):
            return list(c.named_children)
    return []


def block_params(call: Node) -> list[str]:
    """The names of a call's block parameters (``|k, v|``; a destructuring ``|(k, v)|`` flattened)."""
    b = call.child_by_field_name("block")
    ps = b.child_by_field_name("parameters") if b is not None else None
    out: list[str] = []
    for p in ps.named_children if ps is not None else ():
        if p.type == "identifier":
            out.append(text(p))
        elif p.type == "destructured_parameter":
            out.extend(text(x) for x in p.named_children if x.type == "identifier")
        else:
            out.append(text(p.child_by_field_name("name")) or "_")
    return out


def name_of(n: Node | None) -> str | None:
    """The value of a symbol or plain string literal (None for anything computed)."""
    if n is None:
        return None
    t = n.type
    if t == "simple_symbol":
        return text(n)[1:]
    if t == "hash_key_symbol":
        return text(n)
    if t in ("delimited_symbol", "string", "bare_string", "bare_symbol"):
        parts = list(n.named_children)
        if all(c.type in ("string_content", "escape_sequence") for c in parts):
            return "".join(text(c) for c in parts)
        return None
    if t == "chained_string":
        vals = [name_of(c) for c in n.named_children]
        return None if any(v is None for v in vals) else "".join(v for v in vals if v)
    if t == "identifier" or t == "constant":
        return text(n)
    if t in ("true", "false", "nil", "integer"):
        return text(n)
    if t == "unary" and n.named_children and n.named_children[0].type == "integer":
        return text(n).replace(" ", "")
    return None


def calls(root: Node) -> list[Node]:
    """Every call node under ``root``, in document order."""
    return [n for n in _walk(root) if n.type == "call"]


_NOT_AT_LOAD = frozenset(
    ("method", "singleton_method", "do_block", "block", "lambda", "string", "heredoc_body")
)


def _top_calls(root: Node, skip: Node | None) -> list[Node]:
    """The calls a file makes when it is loaded, outside ``skip``: not those in method bodies or blocks
    (run later, if ever)."""
    out = []
    stack = [root]
    while stack:
        n = stack.pop()
        if n.type == "call":
            out.append(n)
        stack.extend(
            c
            for c in reversed(n.named_children)
            if c.type not in _NOT_AT_LOAD and (skip is None or c.id != skip.id)
        )
    return out


def _conditional(n: Node) -> bool:
    """Whether code at top level runs only under a condition (a branch, a loop, a rescue clause)."""
    p = n.parent
    while p is not None:
        if p.type in _CONDITIONALS and p.type != "begin" or p.type in ("rescue", "ensure", "else", "when"):
            return True
        p = p.parent
    return False


def _walk(root: Node) -> Iterator[Node]:
    stack = [root]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(reversed(n.named_children))


# ----------------------------------------------------------------------------------------------- values

SELF = ("<self>",)  # a variable bound to the type class itself (an `included(base)` hook's `base`)
Value = str | tuple[str, ...] | None


def _literal(n: Node | None, env: dict[str, Value]) -> str | None:
    """A literal name: a symbol or string, a variable bound to one, an interpolation of bound ones."""
    if n is None:
        return None
    if n.type in ("identifier", "constant"):
        v = env.get(text(n))
        return v if isinstance(v, str) else None
    if n.type in ("delimited_symbol", "string"):
        out = []
        for c in n.named_children:
            if c.type in ("string_content", "escape_sequence"):
                out.append(text(c))
            elif c.type == "interpolation" and c.named_child_count == 1:
                v = _literal(c.named_children[0], env)
                if v is None:
                    return None
                out.append(v)
            else:
                return None
        return "".join(out)
    if n.type == "call" and method_name(n) in ("to_s", "to_sym", "freeze") and not args(n):
        return _literal(n.child_by_field_name("receiver"), env)
    if n.type == "parenthesized_statements" and n.named_child_count == 1:
        return _literal(n.named_children[0], env)
    return name_of(n)


# ----------------------------------------------------------------------------------------------- result


@dataclass(slots=True)
class Definition:
    """One attribute-defining call found: ``method`` is newparam, newproperty, newcheck or ensurable;
    ``node`` the call (or the bare ``ensurable`` identifier) in ``file``."""

    method: str
    name: str
    node: Node
    file: RubyFile


@dataclass(slots=True)
class TypeCode:
    """What following a type's code found: its attribute definitions in the order Puppet runs them, and
    whether its attribute set is open (with why)."""

    definitions: list[Definition] = field(default_factory=list)
    open_reasons: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)  # every file read (the type's own first)

    @property
    def open(self) -> bool:
        return bool(self.open_reasons)


@dataclass(slots=True)
class _Method:
    node: Node
    file: RubyFile
    nesting: tuple[str, ...]


@dataclass(slots=True)
class _Module:
    name: str
    body: list[Node]
    file: RubyFile
    nesting: tuple[str, ...]


def lib_roots(type_path: str) -> list[str]:
    """Where ``require`` and constants are looked up for a type file ``<lib>/puppet/type/<t>.rb``: its
    own ``lib`` first, then the ``lib`` of each sibling module (the module path's other modules), sorted."""
    lib = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(type_path))))
    if os.path.basename(lib) != "lib":
        return [lib]
    modpath = os.path.dirname(os.path.dirname(lib))
    try:
        stamp = os.stat(modpath).st_mtime_ns
    except OSError:
        return [lib]
    return [lib] + [other for other in _module_libs(modpath, stamp) if other != lib]


@functools.lru_cache(maxsize=64)
def _module_libs(modpath: str, stamp: int) -> tuple[str, ...]:
    """The ``lib`` directories of the modules in ``modpath`` (listed again when its mtime, ``stamp``,
    changes: a module added or removed)."""
    try:
        names = sorted(os.listdir(modpath))
    except OSError:
        return ()
    libs = (os.path.join(modpath, name, "lib") for name in names)
    return tuple(d for d in libs if os.path.isdir(d))


def _snake(constant: str) -> str:
    s = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1_\2", constant)
    return re.sub(r"([a-z\d])([A-Z])", r"\1_\2", s).lower()


class Follower:
    """Follows one type's code (see the module's docstring)."""

    def __init__(self, type_name: str, file: RubyFile):
        self.type_name = type_name
        self.result = TypeCode(files=[file.path])
        self._roots: list[str] | None = None
        self.files: dict[str, RubyFile] = {file.path: file}
        self.loaded: list[RubyFile] = [file]
        self.modules: dict[str, list[_Module]] | None = None
        self.class_methods: dict[str, _Method] = {}
        self.active: set[int] = set()
        self.scanned: set[str] = set()
        self.nesting: tuple[str, ...] = ()  # the module nesting of the code being followed (constants)
        self.resolving: set[str] = set()

    @property
    def roots(self) -> list[str]:
        """:func:`lib_roots` of the type file, listed when first needed."""
        if self._roots is None:
            self._roots = lib_roots(self.result.files[0])
        return self._roots

    def open(self, why: str) -> None:
        if why not in self.result.open_reasons:
            self.result.open_reasons.append(why)

    # -- files and modules ------------------------------------------------------------------------

    def load(self, path: str) -> RubyFile | None:
        path = os.path.abspath(path)
        if path in self.files:
            return self.files[path]
        if len(self.files) >= MAX_FILES:
            self.open("too many files to follow")
            return None
        f = parsed(path)
        if f is None:
            return None
        self.files[path] = f
        self.loaded.append(f)
        self.result.files.append(path)
        self.modules = None
        return f

    def require(self, call: Node, file: RubyFile) -> list[RubyFile]:
        """The file(s) a ``require``/``require_relative`` names, when found under the lib roots (a
        library of Ruby or of a gem: [])."""
        a = args(call)
        target = name_of(a[0]) if a else None
        if target is None:
            return []
        target = target if target.endswith(".rb") else target + ".rb"
        if method_name(call) == "require_relative":
            cands = [os.path.join(os.path.dirname(file.path), target)]
        else:
            cands = [os.path.join(root, target) for root in self.roots]
        for c in cands:
            f = self.load(c)
            if f is not None:
                return [f]
        return []

    def module_table(self) -> dict[str, list[_Module]]:
        if self.modules is None:
            table: dict[str, list[_Module]] = {}
            for f in self.loaded:
                self._modules_in(list(f.root.named_children), f, (), table)
            self.modules = table
        return self.modules

    def _modules_in(
        self, stmts: list[Node], f: RubyFile, nesting: tuple[str, ...], table: dict[str, list[_Module]]
    ) -> None:
        for st in stmts:
            if st.type not in ("module", "class"):
                continue
            name = text(st.child_by_field_name("name")).lstrip(":")
            if not name:
                continue
            full = f"{nesting[-1]}::{name}" if nesting else name
            body = st.child_by_field_name("body")
            kids = list(body.named_children) if body is not None else []
            inner = (*nesting, full)
            table.setdefault(full, []).append(_Module(full, kids, f, inner))
            self._modules_in(kids, f, inner, table)

    def find_module(self, ref: str, nesting: tuple[str, ...]) -> list[_Module] | None:
        """The definitions of module ``ref`` as seen from ``nesting`` (None: not found), reading the
        files its name maps to (``PuppetX::Foo::Bar`` -> ``puppet_x/foo/bar.rb``, ``puppet_x/foo.rb``)
        under the lib roots when not already read."""
        ref = ref.lstrip(":")
        cands = [f"{n}::{ref}" for n in reversed(nesting)] + [ref]
        for full in cands:
            hit = self.module_table().get(full)
            if hit:
                return hit
        for full in cands:
            parts = [_snake(p) for p in full.split("::")]
            for k in range(len(parts), 0, -1):
                rel = os.path.join(*parts[:k]) + ".rb"
                for root in self.roots:
                    if os.path.isfile(os.path.join(root, rel)):
                        self.load(os.path.join(root, rel))
                hit = self.module_table().get(full)
                if hit:
                    return hit
        return None

    # -- the type's body ----------------------------------------------------------------------------

    def follow(self, newtype: Node, file: RubyFile) -> TypeCode:
        """Follow the ``newtype`` call's block, then the re-openings of the type in its file and in the
        files the type's code requires (Puppet runs the whole file, and what it requires, on loading).  A
        ``:parent`` type adds nothing: a type's attributes are its own class's (Puppet keeps them in class
        instance variables, which a subclass does not share)."""
        for call in _top_calls(file.root, newtype):  # what the file requires before the type is defined
            if call.start_byte > newtype.start_byte:
                break
            if (
                method_name(call) in ("require", "require_relative")
                and call.child_by_field_name("receiver") is None
            ):
                self.require(call, file)
        self.body(block_body(newtype), file, {}, (), 0)
        # the rest of the file: requires (whose files may re-open the type) and re-openings
        self.top_level(file, skip=newtype)
        return self.result

    def top_level(self, file: RubyFile, skip: Node | None = None) -> None:
        """Requires and re-openings of the type anywhere in ``file`` outside the ``newtype`` block (each
        file once).  The files a required file requires in turn are followed only under the type's
        own directory or a ``puppet_x`` directory (not the rest of Puppet, for a core type)."""
        if file.path in self.scanned:
            return
        self.scanned.add(file.path)
        for call in _top_calls(file.root, skip):
            m = method_name(call)
            if m in ("require", "require_relative") and call.child_by_field_name("receiver") is None:
                for f in self.require(call, file):
                    if skip is not None or self.nearby(f.path):
                        self.top_level(f)
            elif self.is_this_type(call.child_by_field_name("receiver")):
                if _conditional(call):
                    self.open("the type re-opened under a condition")
                else:
                    self.statement(call, file, {}, (), 0, receiver_is_self=True)

    def nearby(self, path: str) -> bool:
        """Under the type file's own directory, or under a ``puppet_x`` directory."""
        home = os.path.dirname(self.result.files[0]) + os.sep
        return path.startswith(home) or f"{os.sep}puppet_x{os.sep}" in path

    def is_this_type(self, n: Node | None) -> bool:
        """``Puppet::Type.type(:<this type>)`` or ``Puppet::Type::<This>``."""
        if n is None:
            return False
        if n.type == "call" and method_name(n) == "type":
            a = args(n)
            recv = text(n.child_by_field_name("receiver")).replace(" ", "")
            return recv in ("Puppet::Type", "::Puppet::Type") and bool(a) and name_of(a[0]) == self.type_name
        if n.type == "scope_resolution":
            return text(n).lstrip(":") == "Puppet::Type::" + self.type_name.capitalize()
        return False

    def body(
        self, stmts: list[Node], file: RubyFile, env: dict[str, Value], nesting: tuple[str, ...], depth: int
    ) -> None:
        # methods defined in this body are callable from the start (a class body defines before it calls,
        # in practice)
        for st in stmts:
            if st.type == "singleton_method" and text(st.child_by_field_name("object")) == "self":
                self.class_methods[text(st.child_by_field_name("name"))] = _Method(st, file, nesting)
            elif st.type == "singleton_class" and text(st.child_by_field_name("value")) == "self":
                b = st.child_by_field_name("body")
                for m in b.named_children if b is not None else ():
                    if m.type == "method":
                        self.class_methods[text(m.child_by_field_name("name"))] = _Method(m, file, nesting)
        outer, self.nesting = self.nesting, nesting
        try:
            for st in stmts:
                self.statement(st, file, env, nesting, depth)
        finally:
            self.nesting = outer

    def statement(
        self,
        st: Node,
        file: RubyFile,
        env: dict[str, Value],
        nesting: tuple[str, ...],
        depth: int,
        receiver_is_self: bool = False,
    ) -> None:
        t = st.type
        if t in ("comment", "method", "singleton_method", "singleton_class", "module", "class", "string"):
            return
        if t == "identifier":
            name = text(st)
            if name in env:
                return
            self.invoke(name, st, [], file, env, nesting, depth)
            return
        if t == "assignment":
            left, right = st.child_by_field_name("left"), st.child_by_field_name("right")
            if left is not None and left.type in ("identifier", "constant"):
                env[text(left)] = self.value(right, env)
            if right is not None and right.type in ("call", "if", "case", "begin"):
                self.probe([right], env, "an attribute defined in an assignment")
            return
        if t in _CONDITIONALS:
            self.probe([st], env, "attributes defined under a condition")
            return
        if t == "parenthesized_statements":
            for c in st.named_children:
                self.statement(c, file, env, nesting, depth)
            return
        if t != "call":
            return
        recv = st.child_by_field_name("receiver")
        m = method_name(st)
        if recv is not None and not receiver_is_self:
            rv = env.get(text(recv)) if recv.type == "identifier" else None
            if recv.type == "self" or rv is SELF:
                receiver_is_self = True
            elif self.is_this_type(recv):
                receiver_is_self = True
        if recv is not None and not receiver_is_self:
            if m in _LOOPS and st.child_by_field_name("block") is not None:
                self.loop(st, file, env, nesting, depth)
                return
            if any(self.value(a, env) is SELF for a in args(st) if a.type in ("self", "identifier")):
                helper = self.module_method(recv, m, nesting)  # PuppetX::M::Type.clone_type(self)
                if helper is not None:
                    self.call_method(helper, args(st), env, depth)
                else:
                    self.open(f"the type handed to {text(recv)}.{m}")
            return
        self.invoke(m, st, args(st), file, env, nesting, depth)

    def invoke(
        self,
        m: str,
        st: Node,
        arguments: list[Node],
        file: RubyFile,
        env: dict[str, Value],
        nesting: tuple[str, ...],
        depth: int,
    ) -> None:
        """A class-level call of ``m`` (on the type itself)."""
        if m in DEFINERS:
            name = _literal(arguments[0], env) if arguments else None
            if name is None:
                self.open(f"a computed {m} name")
            else:
                self.result.definitions.append(Definition(m, name, st, file))
            return
        if m == "ensurable":
            self.result.definitions.append(Definition(m, "ensure", st, file))
            return
        if m in ("extend", "include"):
            for a in arguments:
                self.mixin(m, a, nesting, depth)
            return
        if m in _SENDS:
            target = _literal(arguments[0], env) if arguments else None
            if target is None:
                self.open("a send of a computed method name")
            else:
                self.invoke(target, st, arguments[1:], file, env, nesting, depth)
            return
        if m in _DYNAMIC:
            block = st.child_by_field_name("block") if st.type == "call" else None
            proc = self.proc_body(arguments[0], nesting) if len(arguments) == 1 and m != "eval" else None
            if block is not None and not arguments and m != "eval":  # class_eval do ... end: a class body
                self.body(block_body(st), file, dict(env), nesting, depth + 1)
            elif proc is not None and depth < MAX_DEPTH:  # instance_eval(&COMMON_PARAMS): the proc's body
                self.body(proc[0], proc[1], {}, proc[2], depth + 1)
            else:
                self.open(f"code run by {m}")
            return
        if m == "newtype":
            return
        if m in ("require", "require_relative"):
            for f in self.require(st, file):
                self.top_level(f)
            return
        meth = self.class_methods.get(m)
        if meth is not None:
            self.call_method(meth, arguments, env, depth)
            return
        if m in HARMLESS:
            return
        self.open(f"a call of {m}, not found")

    def call_method(self, meth: _Method, arguments: list[Node], env: dict[str, Value], depth: int) -> None:
        key = id(meth.node)
        if depth >= MAX_DEPTH or key in self.active:
            self.open(f"{text(meth.node.child_by_field_name('name'))} nested too deep")
            return
        inner: dict[str, Value] = {}
        ps = meth.node.child_by_field_name("parameters")
        positional = [a for a in arguments if a.type not in ("pair", "block_argument", "hash_splat_argument")]
        keywords = _arg_pairs(arguments)
        i = 0
        for p in ps.named_children if ps is not None else ():
            if p.type == "identifier":
                inner[text(p)] = self.value(positional[i], env) if i < len(positional) else None
                i += 1
            elif p.type == "optional_parameter":
                nm = text(p.child_by_field_name("name"))
                if i < len(positional):
                    inner[nm] = self.value(positional[i], env)
                else:
                    inner[nm] = self.value(p.child_by_field_name("value"), env)
                i += 1
            elif p.type == "splat_parameter":
                vals = [self.value(x, env) for x in positional[i:]]
                i = len(positional)
                strs = [v for v in vals if isinstance(v, str)]
                inner[text(p.child_by_field_name("name"))] = tuple(strs) if len(strs) == len(vals) else None
            elif p.type == "keyword_parameter":
                nm = text(p.child_by_field_name("name"))
                v = keywords.get(nm)
                inner[nm] = self.value(v if v is not None else p.child_by_field_name("value"), env)
            else:
                nm = text(p.child_by_field_name("name"))
                if nm:
                    inner[nm] = None
        body = meth.node.child_by_field_name("body")
        self.active.add(key)
        try:
            self.body(
                list(body.named_children) if body is not None else [],
                meth.file,
                inner,
                meth.nesting,
                depth + 1,
            )
        finally:
            self.active.discard(key)

    def module_method(self, recv: Node, name: str, nesting: tuple[str, ...]) -> _Method | None:
        """The ``def self.<name>`` of the module ``recv`` names (None: not found)."""
        if recv.type not in ("constant", "scope_resolution"):
            return None
        for mod in self.find_module(text(recv).replace(" ", ""), nesting) or []:
            for st in mod.body:
                if st.type == "singleton_method" and text(st.child_by_field_name("name")) == name:
                    return _Method(st, mod.file, mod.nesting)
        return None

    def mixin_hooks(self, how: str, ref: Node) -> bool:
        """Whether extending/including module ``ref`` may run code at once: it is not found (and not
        Puppet's own), or it has an ``extended``/``included`` hook."""
        name = text(ref).replace(" ", "").lstrip(":")
        if ref.type not in ("constant", "scope_resolution"):
            return True
        mods = self.find_module(name, self.nesting)
        if mods is None:
            return not name.startswith("Puppet::") and name not in ("Comparable", "Enumerable")
        hook = "extended" if how == "extend" else "included"
        return any(
            (st.type == "singleton_method" and text(st.child_by_field_name("name")) == hook)
            or (st.type == "call" and method_name(st) == hook)
            for mod in mods
            for st in mod.body
        )

    def mixin(self, how: str, ref: Node, nesting: tuple[str, ...], depth: int) -> None:
        """``extend``/``include`` of module ``ref``: an extended module's methods become the type's class
        methods; its ``extended``/``included`` hook runs with the type as its argument."""
        name = text(ref).replace(" ", "").lstrip(":")
        mods = self.find_module(name, nesting) if ref.type in ("constant", "scope_resolution") else None
        if mods is None:
            if self.mixin_hooks(how, ref):
                self.open(f"{how} {name}, not found")
            return
        hook = "extended" if how == "extend" else "included"
        for mod in mods:
            for st in mod.body:
                if how == "extend" and st.type == "method":
                    self.class_methods[text(st.child_by_field_name("name"))] = _Method(
                        st, mod.file, mod.nesting
                    )
                    continue
                method = st.type == "singleton_method" and text(st.child_by_field_name("name")) == hook
                concern = st.type == "call" and method_name(st) == hook and st.child_by_field_name("block")
                if (method or concern) and depth >= MAX_DEPTH:
                    self.open(f"{name} nested too deep")
                elif method:
                    ps = st.child_by_field_name("parameters")
                    first = ps.named_children[0] if ps is not None and ps.named_child_count else None
                    inner: dict[str, Value] = {text(first): SELF} if first is not None else {}
                    body = st.child_by_field_name("body")
                    stmts = list(body.named_children) if body is not None else []
                    self.body(stmts, mod.file, inner, mod.nesting, depth + 1)
                elif concern:  # ActiveSupport::Concern's `included do ... end`
                    self.body(block_body(st), mod.file, {}, mod.nesting, depth + 1)

    def loop(
        self, st: Node, file: RubyFile, env: dict[str, Value], nesting: tuple[str, ...], depth: int
    ) -> None:
        """``<list>.each do |x| ... end`` at class level: the body once per element of a literal list (or
        key of a literal hash); over anything else, the body must define nothing."""
        recv = st.child_by_field_name("receiver")
        items = self.value(recv, env)
        names = block_params(st)
        body = block_body(st)
        if not isinstance(items, tuple) or items is SELF:
            self.probe(body, env, "attributes defined in a loop over computed values")
            return
        pairs = _hash_items(recv) if recv is not None and recv.type == "hash" else None
        for k, item in enumerate(items):
            inner = dict(env)
            if names:
                inner[names[0]] = item
            for extra in names[1:]:
                inner[extra] = None
            if pairs is not None and len(names) > 1:
                inner[names[1]] = pairs[k]
            if method_name(st) == "each_with_index" and len(names) > 1:
                inner[names[1]] = str(k)
            for c in body:
                self.statement(c, file, inner, nesting, depth)

    def probe(self, stmts: list[Node], env: dict[str, Value], why: str) -> None:
        """Code that may or may not run (a branch, a loop over unknown values): whatever it would define
        makes the type open instead of being counted."""
        bodies = ("body_statement", "then", "else", "block_body", "begin")
        for st in stmts:
            for n in _walk(st):
                if n.type == "identifier" and n.parent is not None and n.parent.type in bodies:
                    m = text(n)
                elif n.type == "call":
                    recv = n.child_by_field_name("receiver")
                    if recv is not None and recv.type != "self" and not self.is_this_type(recv):
                        if env.get(text(recv)) is not SELF:
                            continue
                    m = method_name(n)
                else:
                    continue
                if m in env:
                    continue
                if m in ("extend", "include") and n.type == "call":
                    if any(self.mixin_hooks(m, a) for a in args(n)):
                        self.open(why)
                        return
                    continue  # its methods, if called later, are calls of methods not found
                if m in DEFINERS or m in _MIXINS or m in _SENDS or m in _DYNAMIC or m in self.class_methods:
                    self.open(why)
                    return

    def value(self, n: Node | None, env: dict[str, Value]) -> Value:
        """A literal name, or a literal list of names (an array, ``%w``/``%i``, a hash's keys, a
        constant or variable bound to one, ``.freeze``d or not); None: not a literal."""
        if n is None:
            return None
        if n.type == "identifier":
            return env.get(text(n))
        if n.type == "self":
            return SELF
        if n.type in ("constant", "scope_resolution"):
            name = text(n).lstrip(":")
            if name in env:
                return env[name]
            return self.constant(name)
        if n.type == "array":
            out: list[str] = []
            for c in n.named_children:
                v = _literal(c, env)
                if v is None:
                    return None
                out.append(v)
            return tuple(out)
        if n.type in ("string_array", "symbol_array"):
            vals = [name_of(c) for c in n.named_children]
            return None if any(v is None for v in vals) else tuple(v for v in vals if v is not None)
        if n.type == "hash":
            keys = [name_of(c.child_by_field_name("key")) for c in n.named_children if c.type == "pair"]
            if len(keys) != n.named_child_count or any(k is None for k in keys):
                return None
            return tuple(k for k in keys if k is not None)
        if n.type == "call" and method_name(n) in ("freeze", "to_a", "keys") and not args(n):
            return self.value(n.child_by_field_name("receiver"), env)
        return _literal(n, env)

    def proc_body(
        self, argument: Node, nesting: tuple[str, ...]
    ) -> tuple[list[Node], RubyFile, tuple[str, ...]] | None:
        """The statements of the block of ``Proc.new``/``proc``/``lambda`` that a ``&CONSTANT`` block
        argument names, with its file and module nesting (None: not such a constant)."""
        if argument.type != "block_argument" or argument.named_child_count != 1:
            return None
        ref = argument.named_children[0]
        if ref.type not in ("constant", "scope_resolution"):
            return None
        hit = self.assignment_of(text(ref), nesting)
        if hit is None:
            return None
        right, f, inner = hit
        if right.type != "call" or right.child_by_field_name("block") is None:
            return None
        made = text(right.child_by_field_name("receiver")) + "." + method_name(right)
        if made.lstrip(".") in ("Proc.new", "proc", "lambda", "Kernel.proc", "Kernel.lambda"):
            return block_body(right), f, inner
        return None

    def assignment_of(
        self, ref: str, nesting: tuple[str, ...]
    ) -> tuple[Node, RubyFile, tuple[str, ...]] | None:
        """What constant ``ref`` is assigned, as Ruby finds it from ``nesting``: in the module its owner
        names, else in the enclosing modules (innermost first), else at the top level of a file read."""
        owner, _, short = ref.replace(" ", "").lstrip(":").rpartition("::")
        places: list[tuple[list[Node], RubyFile, tuple[str, ...]]] = []
        if owner:
            places += [(mod.body, mod.file, mod.nesting) for mod in self.find_module(owner, nesting) or []]
        else:
            table = self.module_table()
            for full in reversed(nesting):
                places += [(mod.body, mod.file, mod.nesting) for mod in table.get(full, [])]
            places += [(list(f.root.named_children), f, ()) for f in self.loaded]
        for stmts, f, inner in places:
            for st in stmts:
                if st.type == "assignment" and text(st.child_by_field_name("left")) == short:
                    right = st.child_by_field_name("right")
                    return (right, f, inner) if right is not None else None
        return None

    def constant(self, name: str) -> Value:
        """The literal list or name a constant is assigned (None: unknown, or not a literal)."""
        if name in self.resolving:
            return None
        hit = self.assignment_of(name, self.nesting)
        if hit is None:
            return None
        self.resolving.add(name)
        outer, self.nesting = self.nesting, hit[2]
        try:
            return self.value(hit[0], {})
        finally:
            self.nesting = outer
            self.resolving.discard(name)


def _arg_pairs(arguments: list[Node]) -> dict[str, Node | None]:
    out: dict[str, Node | None] = {}
    for c in arguments:
        for p in [c] if c.type == "pair" else (c.named_children if c.type == "hash" else []):
            if p.type == "pair":
                k = name_of(p.child_by_field_name("key"))
                if k is not None:
                    out[k] = p.child_by_field_name("value")
    return out


def _hash_items(n: Node) -> list[Value]:
    return [name_of(c.child_by_field_name("value")) for c in n.named_children if c.type == "pair"]


def follow_type(type_name: str, newtype: Node, file: RubyFile) -> TypeCode:
    """The attribute definitions of the type that ``newtype`` (a ``Puppet::Type.newtype`` call in
    ``file``) defines, followed through its code (an unexpected shape of code: what was found so far,
    the type open)."""
    follower = Follower(type_name, file)
    try:
        return follower.follow(newtype, file)
    except Exception as error:  # never lose the type, nor the index, to one helper's odd shape
        follower.open(f"code not read ({type(error).__name__})")
        return follower.result

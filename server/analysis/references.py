"""The reference index (no pygls imports): every use of every class, defined type, type alias,
resource type, function and variable in the workspace, keyed by what it refers to.

Why an index: find-references, highlight, rename and call hierarchy must answer from the names alone,
never by re-reading every file per request.  Each file contributes a list of :class:`Ref` computed
once from the parse the workspace index already does (:func:`index_file`) or from an open
document's current analysis (:meth:`RefIndex.set_analysis`); a query is a dictionary look-up.

Keys (one namespace per way Puppet resolves a name):

* ``("class", name)``: ``include``/``contain``/``require``/``class`` arguments (bare, string, array),
  ``class { 'x': }`` titles, ``Class['x']``, ``inherits x`` and the definition itself;
* ``("type", name)``: defined types, type aliases and resource types: resource expressions
  ``x::y { }``, every ``X::Y`` reference (``X::Y['t']``, parameter types, aliases, collectors,
  resource defaults) and the definitions;
* ``("function", name)``: ``f(x)``, ``f x`` and ``$x.f()``; ``("plan", name)`` for plan definitions;
* ``("var", "owner::x")``: a class's or define's parameters and body variables: ``$x`` inside it,
  ``$owner::x`` anywhere, ``x => ...`` in resource bodies of that class/define and Hiera keys
  ``owner::x``; ``("var", "::x")`` top scope; ``("lvar", path, scope offset, x)`` for variables
  local to a function, plan, node or lambda.

A qualified variable or Hiera key is also filed under ``("varprefix", owner)`` so that renaming a
class can rewrite ``$owner::x`` and ``owner::x:`` without a scan.

The index is an object (:class:`RefIndex`) the language server's session holds; this module keeps
nothing between calls.
"""

from __future__ import annotations

import bisect
import marshal
import os
import re
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from puppet_xpp.grammar import ast
from puppet_xpp.grammar.gcpause import paused
from puppet_xpp.server.analysis import features
from puppet_xpp.server.analysis.features import Analysed

if TYPE_CHECKING:
    from puppet_xpp.server.analysis.index import WorkspaceIndex

# what a reference refers to: (namespace, name) or ("lvar", path, scope offset, name); see above
RefKey = tuple[str, str] | tuple[str, str, int, str]
# the definition holding a reference: (kind, name), e.g. ("class", "apache::vhost") or ("node", "web1")
Owner = tuple[str, str]
Position = tuple[int, int]
_K = TypeVar("_K")

# THE table of functions that take class, defined type or resource type names as values: function ->
# (the arguments that name something: an index, or ALL_ARGUMENTS; what they name).  What they name:
# "class" (class names, strings or arrays of them), "any" (a class or a type: ``defined``), "type" (a
# resource type's name, e.g. 'mymod::thing' or 'Concat::Fragment'; the name "class" makes the next
# argument's titles, or its hash's keys, class names).  A wrapper of these functions is one line here.
ALL_ARGUMENTS = -1
NAME_ARGUMENTS: dict[str, tuple[int, str]] = {
    "include": (ALL_ARGUMENTS, "class"),
    "contain": (ALL_ARGUMENTS, "class"),
    "require": (ALL_ARGUMENTS, "class"),
    "class": (ALL_ARGUMENTS, "class"),
    "defined": (ALL_ARGUMENTS, "any"),
    "create_resources": (0, "type"),
    "ensure_resource": (0, "type"),
    "ensure_resources": (0, "type"),
    "stdlib::ensure_resource": (0, "type"),
    "stdlib::ensure_resources": (0, "type"),
}
# a name computed at run time where a class or type name is expected ("class", "type" or "any"): a
# rename cannot edit it, so it lists these places (("computed", what) keys; never under the cursor)
COMPUTED = "computed"
_LITERAL_NAMES = (ast.LiteralString, ast.QualifiedName, ast.QualifiedReference, ast.LiteralList)
_DEFS: dict[type[ast.Node], str] = {
    ast.HostClassDefinition: "class",
    ast.ResourceTypeDefinition: "type",
    ast.FunctionDefinition: "function",
    ast.PlanDefinition: "plan",
    ast.TypeAlias: "type",
}
# top-level keys of a Hiera YAML file that look like `module::...::name`
_HIERA_KEY = re.compile(rb"""^(["']?)((?:::)?[a-z][a-z0-9_]*(?:::[a-z0-9_]+)+)\1[ \t]*:""", re.M)
HIERA_DIRS = ("data", "hieradata")


@dataclass(slots=True)
class Ref:
    """One occurrence of a name.  ``start``/``end`` are LSP (line, column) positions of the name's text
    (without ``$`` and leading ``::``; inside the quotes of a string)."""

    key: RefKey
    path: str
    start: Position
    end: Position
    role: str  # def | write | read | ref
    text: str  # the name as written in the range
    owner: Owner | None = None  # innermost definition holding it: (kind, name) or None (top level)

    def contains(self, line: int, col: int) -> bool:
        return self.start <= (line, col) <= self.end


def norm(name: str) -> str:
    return name.lower().lstrip(":")


# ----------------------------------------------------------------------------------------------- extraction


@dataclass(slots=True)
class _Scope:
    kind: str  # top | class | define | local | lambda
    name: str
    offset: int
    names: set[str]  # variables declared here (parameters, assignments)
    parent: _Scope | None
    parent_class: str | None = None


def _declared(params: Iterable[ast.Parameter] | None, body: ast.Positioned | None) -> set[str]:
    """Names a scope declares: its parameters and the variables assigned in its body (nested scopes
    excluded: they declare their own)."""
    out = {p.name for p in params or ()}
    stack = [body] if body is not None else []
    while stack:
        n = stack.pop()
        if type(n) is ast.AssignmentExpression:
            left = n.left_expr
            for v in left.values if type(left) is ast.LiteralList else (left,):
                if type(v) is ast.VariableExpression:
                    out.add(getattr(v.expr, "value", ""))
        if isinstance(n, (ast.Definition, ast.LambdaExpression)):
            continue
        stack.extend(features.kids(n))
    return out


def _resolve(scope: _Scope, name: str, path: str) -> RefKey:
    """The key of unqualified ``$name`` seen from ``scope``."""
    s: _Scope | None = scope
    while s is not None:
        if name in s.names or (s.kind == "define" and name in ("title", "name")):
            if s.kind in ("class", "define"):
                return ("var", f"{s.name}::{name}")
            if s.kind == "top":
                return ("var", "::" + name)
            return ("lvar", path, s.offset, name)
        if s.kind in ("class", "define") and s.parent_class:
            return ("var", f"{s.parent_class}::{name}")
        if s.kind == "local" and s.name.startswith("function"):
            return ("lvar", path, s.offset, name)
        s = s.parent
    return ("var", "::" + name)


# one step of the extraction's walk: (node, scope, owner, assigned?)
_Step = tuple[ast.Positioned, _Scope, Owner | None, bool]


class _Extractor:
    """The walk that files one analysed file's references (an explicit stack: deep programs must not
    hit the recursion limit)."""

    def __init__(self, an: Analysed, path: str) -> None:
        self.an = an
        self.path = path
        self.data = an.data
        self.lines = an.lines
        self.out: list[Ref] = []

    def add(
        self,
        key: RefKey,
        off: int | None,
        length: int,
        role: str,
        owner: Owner | None,
        text: str | None = None,
    ) -> None:
        if off is None or length <= 0:
            return
        if text is None:
            text = self.data[off : off + length].decode("utf-8", "replace")
        if text.startswith("::"):
            off, length, text = off + 2, length - 2, text[2:]
        start, end = self.lines.range(off, length)
        r = Ref(key, self.path, start, end, role, text, owner)
        self.out.append(r)
        if key[0] == "var" and "::" in text:
            self.out.append(Ref(("varprefix", norm(text).rpartition("::")[0]), *_tail(r)))

    def add_name(
        self, kind: str, node: ast.Positioned | None, owner: Owner | None, role: str = "ref"
    ) -> None:
        """A QualifiedName / LiteralString / QualifiedReference naming a class/type."""
        if type(node) is ast.QualifiedName:
            self.add((kind, norm(node.value)), node.offset, node.length, role, owner)
        elif type(node) is ast.LiteralString:
            if node.length >= 2 and self.data[node.offset : node.offset + 1] in (b"'", b'"'):
                self.add((kind, norm(node.value)), node.offset + 1, node.length - 2, role, owner)
        elif type(node) is ast.QualifiedReference:
            self.add((kind, norm(node.value)), node.offset, node.length, role, owner)
        elif type(node) is ast.LiteralList:
            for v in node.values:
                self.add_name(kind, v, owner, role)

    def names(self, what: str, node: ast.Positioned | None, owner: Owner | None) -> None:
        """A value where a class (``what`` "class"), a class or a type ("any") or a type's name ("type")
        is expected: literal names are filed under their key(s), anything else as a computed name."""
        if node is None:
            return
        if type(node) is ast.LiteralList:
            for v in node.values:
                self.names(what, v, owner)
        elif type(node) is ast.LiteralString and node.value.startswith("$") and what == "any":
            return  # defined('$x'): a variable
        elif isinstance(node, _LITERAL_NAMES):
            for kind in ("class", "type") if what == "any" else (what,):
                self.add_name(kind, node, owner)
        elif type(node) is not ast.LiteralUndef and type(node) is not ast.LiteralDefault:
            self.add((COMPUTED, what), node.offset, node.length, "ref", owner)

    def name_arguments(self, function: str, args: Sequence[ast.Positioned], owner: Owner | None) -> None:
        """The names given to a function of :data:`NAME_ARGUMENTS`."""
        index, what = NAME_ARGUMENTS[function]
        if index == ALL_ARGUMENTS:
            for a in args:
                self.names(what, a, owner)
            return
        if index >= len(args):
            return
        first = args[index]
        if type(first) is ast.LiteralString and norm(first.value) == "class":
            titles = args[index + 1] if index + 1 < len(args) else None
            if type(titles) is ast.LiteralHash:  # create_resources('class', {'x' => {...}})
                for e in titles.entries:
                    self.names("class", e.key, owner)
            else:  # ensure_resource('class', 'x')
                self.names("class", titles, owner)
        elif type(first) is ast.LiteralString:
            self.add_name("type", first, owner)
        elif type(first) is not ast.QualifiedReference:  # a QualifiedReference is filed by the walk
            self.names("any", first, owner)

    def run(self) -> list[Ref]:
        prog = self.an.program
        if prog is None or prog.body is None:
            return self.out
        top = _Scope("top", "", 0, _declared((), prog.body), None)
        stack: list[_Step] = [(prog.body, top, None, False)]
        while stack:
            n, scope, owner, write = stack.pop()
            for item in self.visit(n, scope, owner, write):
                stack.append(item)
        return self.out

    def _def_name(self, d: ast.NamedDefinition | ast.TypeAlias, kind: str, owner: Owner) -> None:
        so, sl = features.name_span(self.an, d)
        if sl:
            self.add((kind, norm(d.name)), so, sl, "def", owner)

    def visit(self, n: ast.Positioned, scope: _Scope, owner: Owner | None, write: bool) -> list[_Step]:
        t = type(n)
        kids = features.kids(n)
        if isinstance(n, (ast.NamedDefinition, ast.TypeAlias)) and t in _DEFS:
            kind = _DEFS[t]
            me: Owner = (kind, norm(n.name))
            self._def_name(n, kind, me)
            if isinstance(n, ast.TypeAlias):
                return [(c, scope, me, False) for c in kids]
            params = n.parameters or []
            pc = norm(n.parent_class) if type(n) is ast.HostClassDefinition and n.parent_class else None
            if pc:
                self._inherits(n, pc, me)
            skind = {"class": "class", "type": "define"}.get(kind, "local")
            sname = norm(n.name) if skind != "local" else f"function {n.offset}"
            inner = _Scope(skind, sname, n.offset, _declared(params, n.body), scope, pc)
            for p in params:
                self.add(_resolve(inner, p.name, self.path), p.offset + 1, len(p.name.encode()), "def", me)
            steps: list[_Step] = [(c, inner, me, False) for c in kids if type(c) is not ast.Parameter]
            steps.extend((c, inner, me, False) for p in params for c in features.kids(p))
            return steps
        if type(n) is ast.NodeDefinition:
            me = ("node", " ".join(features.src(self.an, h) for h in n.host_matches))
            if n.host_matches:  # a definition ref, so call hierarchy can name the node
                h = n.host_matches[0]
                self.add(me, h.offset, h.length, "def", me, me[1])
            inner = _Scope("local", "node", n.offset, _declared((), n.body), scope)
            return [(c, inner, me, False) for c in kids]
        if type(n) is ast.LambdaExpression:
            inner = _Scope("lambda", "", n.offset, _declared(n.parameters, n.body), scope)
            for p in n.parameters:
                self.add(
                    ("lvar", self.path, n.offset, p.name), p.offset + 1, len(p.name.encode()), "def", owner
                )
            return [(c, inner, owner, False) for c in kids if type(c) is not ast.Parameter] + [
                (c, inner, owner, False) for p in n.parameters for c in features.kids(p)
            ]
        if type(n) is ast.VariableExpression:
            q = n.expr
            name = getattr(q, "value", None)
            off = n.offset
            if isinstance(name, str) and off is not None:
                # inside "${x}" Puppet positions the variable on its name and the name one byte off
                off += self.data[off : off + 1] == b"$"
                if self.data[off : off + len(name.encode())] != name.encode():
                    return []
                key: RefKey
                if "::" in name.lstrip(":"):
                    key = ("var", norm(name))
                elif name.startswith("::"):
                    key = ("var", name)
                else:
                    key = _resolve(scope, name, self.path)
                self.add(key, off, len(name.encode()), "write" if write else "read", owner)
            return []
        if type(n) is ast.AssignmentExpression:
            left = n.left_expr
            lefts: Sequence[ast.Positioned] = left.values if type(left) is ast.LiteralList else [left]
            return [(v, scope, owner, True) for v in lefts] + [(n.right_expr, scope, owner, False)]
        if type(n) is ast.CallNamedFunctionExpression:
            f = n.functor_expr
            if type(f) is ast.QualifiedName:
                self.add(("function", norm(f.value)), f.offset, f.length, "ref", owner)
                rest = [c for c in kids if c is not f]
                function = norm(f.value)
                if NAME_ARGUMENTS.get(function, (0, ""))[1] in ("class", "any"):
                    self.name_arguments(function, n.arguments, owner)
                    rest = [c for c in rest if c not in n.arguments or not isinstance(c, _LITERAL_NAMES)]
                elif function in NAME_ARGUMENTS:
                    self.name_arguments(function, n.arguments, owner)
                elif f.value == "lookup" and n.arguments and type(n.arguments[0]) is ast.LiteralString:
                    a = n.arguments[0]
                    if "::" in a.value:
                        self.add_name("var", a, owner)
                return [(c, scope, owner, False) for c in rest]
        if type(n) is ast.CallMethodExpression:
            fa = n.functor_expr
            if type(fa) is ast.NamedAccessExpression and type(fa.right_expr) is ast.QualifiedName:
                nm = fa.right_expr.value
                encoded = nm.encode()
                end = fa.offset + fa.length if fa.offset is not None else -1
                off = self.data.rfind(encoded, fa.offset or 0, end) if end > 0 else -1
                if off >= 0:
                    self.add(("function", norm(nm)), off, len(encoded), "ref", owner)
                return [(c, scope, owner, False) for c in kids if c is not fa] + [
                    (fa.left_expr, scope, owner, False)
                ]
        if type(n) is ast.ResourceExpression:
            tn = n.type_name
            tname = norm(getattr(tn, "value", "") or "")
            out: list[_Step] = []
            if tname == "class":
                for b in n.bodies:
                    self.names("class", b.title, owner)
                    if b.title is not None and not isinstance(b.title, _LITERAL_NAMES):
                        out.append((b.title, scope, owner, False))
                    titles = _titles(b.title)
                    for op in b.operations:
                        for ti in titles:
                            self._attr(op, ti, owner)
                        out.extend((c, scope, owner, False) for c in features.kids(op))
                return out
            if type(tn) is ast.QualifiedName:
                self.add(("type", tname), tn.offset, tn.length, "ref", owner)
            else:
                out.append((tn, scope, owner, False))
            for b in n.bodies:
                if b.title is not None:
                    out.append((b.title, scope, owner, False))
                for op in b.operations:
                    if tname:
                        self._attr(op, tname, owner)
                    out.extend((c, scope, owner, False) for c in features.kids(op))
            return out
        if type(n) is ast.ResourceDefaultsExpression:
            tr = n.type_ref
            tname = norm(getattr(tr, "value", "") or "")
            for op in n.operations:
                if tname and tname != "class":
                    self._attr(op, tname, owner)
            return [(c, scope, owner, False) for c in kids]
        if type(n) is ast.AccessExpression:
            left = n.left_expr
            if type(left) is ast.QualifiedReference and left.value.lower() == "class":
                for k in n.keys:
                    self.names("class", k, owner)
                return [(k, scope, owner, False) for k in n.keys if not isinstance(k, _LITERAL_NAMES)]
            if type(left) is ast.QualifiedReference and left.value.lower() == "resource" and n.keys:
                # Resource['mymod::thing', 't']: the first key names the type
                first = n.keys[0]
                if type(first) is ast.LiteralString:
                    self.add_name("type", first, owner)
                elif type(first) is not ast.QualifiedReference:
                    self.names("any", first, owner)
                return [
                    (c, scope, owner, False)
                    for c in kids
                    if c is not first or type(c) is not ast.LiteralString
                ]
        if type(n) is ast.QualifiedReference:
            if n.value.lower() not in ("class",):
                self.add(("type", norm(n.value)), n.offset, n.length, "ref", owner)
            return []
        return [(c, scope, owner, False) for c in kids]

    def _attr(self, op: ast.Positioned, owner_name: str, owner: Owner | None) -> None:
        if type(op) is ast.AttributeOperation and op.offset is not None:
            nm = op.attribute_name
            if self.data[op.offset : op.offset + len(nm.encode())] == nm.encode():
                self.add(("var", f"{owner_name}::{nm}"), op.offset, len(nm.encode()), "write", owner, nm)

    def _inherits(self, d: ast.Positioned, parent: str, owner: Owner) -> None:
        toks = self.an.tokens or ()
        i = bisect.bisect_left(toks, d.offset, key=lambda t: t.start_pos)
        end = d.offset + max(d.length, 0)
        for k in range(i, min(len(toks), i + 400)):
            tk = toks[k]
            if tk.start_pos >= end or tk.type == "LBRACE":
                return
            if tk.type == "INHERITS" and k + 1 < len(toks):
                nt = toks[k + 1]
                self.add(("class", parent), nt.start_pos, nt.end_pos - nt.start_pos, "ref", owner)
                return


def _titles(title: ast.Positioned | None) -> list[str]:
    if type(title) is ast.LiteralString or type(title) is ast.QualifiedName:
        return [norm(title.value)]
    if type(title) is ast.LiteralList:
        return [x for v in title.values for x in _titles(v)]
    return []


def _tail(r: Ref) -> tuple[str, Position, Position, str, str, Owner | None]:
    return (r.path, r.start, r.end, r.role, r.text, r.owner)


def refs_of(an: Analysed, path: str) -> list[Ref]:
    """The references of one analysed ``.pp`` file (never raises: a bad tree gives what was found)."""
    ex = _Extractor(an, path)
    try:
        return ex.run()
    except Exception:  # a parser bug must not cost the other files their references
        return ex.out


def hiera_refs(path: str, data: bytes) -> list[Ref]:
    """Top-level ``module::...::name`` keys of a Hiera YAML file (lines are plain: keys are ASCII)."""
    out = []
    for m in _HIERA_KEY.finditer(data):
        key = m.group(2).decode()
        line = data.count(b"\n", 0, m.start())
        col = m.start(2) - (data.rfind(b"\n", 0, m.start()) + 1)
        if key.startswith("::"):
            key, col = key[2:], col + 2
        r = Ref(("var", key), path, (line, col), (line, col + len(key)), "write", key)
        out.append(r)
        out.append(Ref(("varprefix", key.rpartition("::")[0]), *_tail(r)))
    return out


# ----------------------------------------------------------------------------------------------- the index


def encode_refs(refs: Iterable[Ref]) -> bytes:
    """A file's references as the index cache records them and an indexing worker sends them: one
    :mod:`marshal` string of plain tuples (no code is ever loaded from it), decoded only when a query
    needs them (:meth:`RefIndex.decode_pending`)."""
    return marshal.dumps(tuple((r.key, r.start, r.end, r.role, r.text, r.owner) for r in refs))


def decode_refs(data: bytes, path: str) -> list[Ref]:
    """The references of ``path`` from :func:`encode_refs`' string; raises (EOFError, TypeError,
    ValueError) on another shape."""
    rows = marshal.loads(data)
    if type(rows) is not tuple:
        raise TypeError("not a record of references")
    return [Ref(key, path, start, end, role, text, owner) for key, start, end, role, text, owner in rows]


# the most objects RefIndex.shared holds (the keys, owners, texts and positions of a large workspace:
# ~150,000 on issue 31's 80 modules)
SHARED_MAX = 1_000_000


class RefIndex:
    """path -> refs, and key -> {path: refs}: a query touches only the files that use the name."""

    def __init__(self) -> None:
        self.by_path: dict[str, list[Ref]] = {}
        self.by_key: dict[RefKey, dict[str, list[Ref]]] = {}
        self.by_owner: dict[Owner, dict[str, list[Ref]]] = {}
        self.source: dict[str, Analysed | None] = {}  # path -> the analysis its refs came from (None: disk)
        self.yaml: dict[str, int] = {}  # Hiera data file -> mtime when read
        self.hiera_roots: tuple[str, ...] | None = None
        self.lock = threading.Lock()
        # one object for each key, owner, text and position of the files read from disk (see set_file)
        self.shared: dict[Any, Any] = {}
        # path -> its references still encoded (:func:`encode_refs`: the index cache's, an indexing
        # worker's), filed by :meth:`decode_pending` before any query reads the index
        self.encoded: dict[str, bytes] = {}
        # held for the whole of a decode_pending, the files read again included: a query that comes
        # meanwhile waits for it, instead of finding nothing encoded and answering without those files
        self.decoding = threading.Lock()

    def set_file(self, path: str, refs: list[Ref] | bytes, source: Analysed | None = None) -> None:
        """File ``path``'s references.  Those of a file read from disk (``source`` None: the whole
        workspace's, kept for the session) share one object per equal key, owner, text and position
        (tens of thousands of references name a few thousand things: ~14 MB less on issue 31's
        80-module workspace); an open document's, replaced at each keystroke, are kept as made.

        ``refs`` encoded (bytes, :func:`encode_refs`) are kept so until a query needs the index
        (:meth:`decode_pending`): a second start files the index cache's ~80,000 references of issue
        31's workspace without building them first (~0.1 s of CPU before the workspace index is ready,
        spent later on a thread of their own or by the first query that reads references)."""
        if type(refs) is bytes:
            with self.lock:
                self._drop(path)
                self.encoded[path] = refs
            return
        assert type(refs) is list
        with self.lock:
            self._file(path, refs, source)

    def _file(self, path: str, refs: list[Ref], source: Analysed | None) -> None:
        self._drop(path)
        self.by_path[path] = refs
        self.source[path] = source
        if source is None:
            self._share(refs)
        for r in refs:
            self.by_key.setdefault(r.key, {}).setdefault(path, []).append(r)
            if r.owner is not None and r.key[0] != "varprefix":
                self.by_owner.setdefault(r.owner, {}).setdefault(path, []).append(r)

    def _share(self, refs: list[Ref]) -> None:
        if len(self.shared) > SHARED_MAX:  # (edits saved over a long session: start the table again)
            self.shared = {}
        share = self.shared.setdefault
        for r in refs:
            r.key = share(r.key, r.key)
            if r.owner is not None:
                r.owner = share(r.owner, r.owner)
            r.text = share(r.text, r.text)
            r.start = share(r.start, r.start)
            r.end = share(r.end, r.end)

    def decode_pending(self) -> None:
        """Decode and file the references set encoded (:meth:`set_file`).  A record that does not decode
        (which the index cache's digest and fingerprint make all but impossible) is never an answer:
        its file is parsed again from disk, as a file not in the cache is -- before a query that came
        meanwhile reads the index (``decoding``: the indexing decodes on a thread of its own)."""
        with self.decoding:
            if self.encoded:
                self._decode_pending()

    def _decode_pending(self) -> None:
        failed: list[str] = []
        # (tens of thousands of objects kept for the session, no cycle among them: the collections their
        # allocation would start find nothing)
        with self.lock, paused():
            pending, self.encoded = self.encoded, {}
            for path, data in pending.items():
                try:
                    refs = decode_refs(data, path)
                except (EOFError, TypeError, ValueError):
                    failed.append(path)
                    continue
                self._file(path, refs, None)
        if failed:
            from puppet_xpp.server.analysis.index import index_file

            hooks = (feed(self),)
            for path in failed:
                index_file(path, hooks=hooks)

    def _drop(self, path: str) -> None:
        self.encoded.pop(path, None)
        for r in self.by_path.pop(path, ()):
            _unfile(self.by_key, r.key, path)
            if r.owner is not None:
                _unfile(self.by_owner, r.owner, path)
        self.source.pop(path, None)

    def remove_file(self, path: str) -> None:
        with self.lock:
            self._drop(path)

    def set_analysis(self, path: str, an: Analysed) -> None:
        """An open document's current analysis (recomputed only when the analysis changed)."""
        if self.source.get(path) is an:
            return
        self.set_file(path, refs_of(an, path), an)

    def refs(self, key: RefKey) -> list[Ref]:
        self.decode_pending()
        with self.lock:
            per = dict(self.by_key.get(key, {}))
        gone = [p for p in per if not os.path.exists(p)]
        for p in gone:  # deleted or moved away since indexed
            if self.source.get(p) is None:
                self.remove_file(p)
                del per[p]
        out = [r for p in sorted(per) for r in sorted(per[p], key=_pos)]
        if key[0] == "var" and not self.is_class_parameter(out):
            # only a class parameter has a Hiera key (automatic parameter lookup): a same-named key is
            # no use of a define's parameter or of a class's body variable
            kept = [r for r in out if r.path not in self.yaml]
            if kept:
                out = kept
        return out

    @staticmethod
    def is_class_parameter(refs: Iterable[Ref]) -> bool:
        """``refs`` (of one ``("var", ...)`` key) hold a class parameter's definition."""
        return any(r.role == "def" and r.owner is not None and r.owner[0] == "class" for r in refs)

    def defs(self, key: RefKey) -> list[Ref]:
        return [r for r in self.refs(key) if r.role == "def"]

    def owned_by(self, owner: Owner) -> list[Ref]:
        self.decode_pending()
        with self.lock:
            per = dict(self.by_owner.get(owner, {}))
        return [r for p in sorted(per) for r in per[p]]

    def file_refs(self, path: str) -> list[Ref]:
        self.decode_pending()
        with self.lock:
            return list(self.by_path.get(path, ()))


def _unfile(table: dict[_K, dict[str, list[Ref]]], key: _K, path: str) -> None:
    """Drop ``path``'s entry under ``key`` (and the key when no file is left)."""
    d = table.get(key)
    if d is not None:
        d.pop(path, None)
        if not d:
            del table[key]


def _pos(r: Ref) -> Position:
    return r.start


def ref_at(refs: Sequence[Ref], line: int, col: int) -> Ref | None:
    """The (innermost) reference under the cursor in one file's refs."""
    found = refs_at(refs, line, col)
    return found[0] if found else None


def refs_at(refs: Sequence[Ref], line: int, col: int) -> list[Ref]:
    """The innermost references under the cursor: one, or several of one range (``defined('x')`` names
    a class or a type: filed under both keys, the caller picks the one defined)."""
    best = None
    for r in refs:
        if r.key[0] not in ("varprefix", COMPUTED) and r.contains(line, col):
            if best is None or (r.end[0], r.end[1]) < (best.end[0], best.end[1]) or r.start > best.start:
                best = r
    if best is None:
        return []
    return [
        r
        for r in refs
        if r.start == best.start and r.end == best.end and r.key[0] not in ("varprefix", COMPUTED)
    ]


# ----------------------------------------------------------------------------------------------- files


def feed(refs: RefIndex) -> Callable[[str, Analysed], None]:
    """A hook for the workspace indexing (server/analysis/index.py's ``index_file``): every manifest
    it parses also files its references (one parse for both indexes)."""

    def hook(path: str, an: Analysed) -> None:
        refs.set_file(path, refs_of(an, path))

    return hook


def build(roots: Sequence[str], refused: list[str] | None = None) -> tuple[WorkspaceIndex, RefIndex]:
    """(WorkspaceIndex, RefIndex) of every file under ``roots`` (the CLI and the benchmark); why each
    file not read was skipped goes to ``refused`` when given."""
    from puppet_xpp.server.analysis import index

    refs = RefIndex()
    idx = index.WorkspaceIndex()
    hooks = (feed(refs),)
    for p in index.workspace_files(roots):
        idx.set_file(p, index.index_file(p, hooks=hooks, refused=refused))
    index_hiera(refs, roots, refused)
    return idx, refs


def index_yaml(refs: RefIndex, path: str, refused: list[str] | None = None) -> None:
    """File the Hiera keys of one data file, read by the one source-reading rule
    (:func:`xpp.sources.read_bytes`: a FIFO, a device or a file over the size limit is skipped)."""
    from puppet_xpp.xpp.sources import read_bytes

    raw = read_bytes(path)
    if raw.data is None or raw.stat is None:
        if refused is not None and raw.diagnostic is not None:
            refused.append(raw.diagnostic.message)
        refs.remove_file(path)
        refs.yaml.pop(path, None)
        return
    refs.set_file(path, hiera_refs(path, raw.data))
    refs.yaml[path] = raw.stat.st_mtime_ns


def hiera_files(roots: Iterable[str]) -> list[str]:
    """YAML files under a ``data``/``hieradata`` directory below the roots (environment and module data)."""
    out: list[str] = []
    for root in roots:
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames[:] = sorted(d for d in dirnames if d not in (".git", ".xpp", "node_modules", "fixtures"))
            parts = dirpath.split(os.sep)
            if not any(p in HIERA_DIRS for p in parts):
                continue
            out.extend(os.path.join(dirpath, f) for f in sorted(filenames) if f.endswith((".yaml", ".yml")))
    return out


def index_hiera(refs: RefIndex, roots: Sequence[str], refused: list[str] | None = None) -> int:
    files = hiera_files(roots)
    for p in files:
        index_yaml(refs, p, refused)
    refs.hiera_roots = tuple(roots)
    return len(files)


def refresh_hiera(refs: RefIndex, roots: Sequence[str]) -> None:
    """Index the Hiera data of ``roots`` once, then re-read only the data files whose mtime changed
    (a stat per known data file: Hiera data is small and few files)."""
    if refs.hiera_roots != tuple(roots):
        index_hiera(refs, roots)
        return
    for p, m in list(refs.yaml.items()):
        try:
            now = os.stat(p).st_mtime_ns
        except OSError:
            now = None
        if now != m:
            index_yaml(refs, p)

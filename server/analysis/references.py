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
"""

from __future__ import annotations

import os
import re
import threading
from dataclasses import dataclass

from puppet_xpp.grammar import ast as A
from puppet_xpp.server.analysis import features as F

_CLASS_FUNCS = frozenset(("include", "contain", "require", "class"))
_DEFS = {
    A.HostClassDefinition: "class",
    A.ResourceTypeDefinition: "type",
    A.FunctionDefinition: "function",
    A.PlanDefinition: "plan",
    A.TypeAlias: "type",
}
_LOCAL_SCOPES = (A.FunctionDefinition, A.PlanDefinition, A.NodeDefinition)
# top-level keys of a Hiera YAML file that look like `module::...::name`
_HIERA_KEY = re.compile(rb"""^(["']?)((?:::)?[a-z][a-z0-9_]*(?:::[a-z0-9_]+)+)\1[ \t]*:""", re.M)
HIERA_DIRS = ("data", "hieradata")


@dataclass(slots=True)
class Ref:
    """One occurrence of a name.  ``start``/``end`` are LSP (line, column) positions of the name's text
    (without ``$`` and leading ``::``; inside the quotes of a string)."""

    key: tuple
    path: str
    start: tuple
    end: tuple
    role: str  # def | write | read | ref
    text: str  # the name as written in the range
    owner: tuple | None = None  # innermost definition holding it: (kind, name) or None (top level)

    def contains(self, line: int, col: int) -> bool:
        return self.start <= (line, col) <= self.end


def norm(name: str) -> str:
    return name.lower().lstrip(":")


# ----------------------------------------------------------------------------------------------- extraction


class _Scope:
    __slots__ = ("kind", "name", "offset", "names", "parent", "parent_class")

    def __init__(self, kind, name, offset, names, parent, parent_class=None):
        self.kind = kind  # top | class | define | local | lambda
        self.name = name
        self.offset = offset
        self.names = names  # variables declared here (parameters, assignments)
        self.parent = parent
        self.parent_class = parent_class


def _declared(params, body) -> set:
    """Names a scope declares: its parameters and the variables assigned in its body (nested scopes
    excluded: they declare their own)."""
    out = {p.name for p in params or ()}
    stack = [body] if body is not None else []
    while stack:
        n = stack.pop()
        t = type(n)
        if t is A.AssignmentExpression:
            left = n.left_expr
            for v in left.values if type(left) is A.LiteralList else (left,):
                if type(v) is A.VariableExpression:
                    out.add(getattr(v.expr, "value", ""))
        if isinstance(n, (A.Definition, A.LambdaExpression)):
            continue
        stack.extend(n.children())
    return out


def _resolve(scope: _Scope, name: str, path: str) -> tuple:
    """The key of unqualified ``$name`` seen from ``scope``."""
    s = scope
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


class _Extractor:
    def __init__(self, an, path: str):
        self.an = an
        self.path = path
        self.data = an.data
        self.lines = an.lines
        self.out: list[Ref] = []

    def add(self, key, off, length, role, owner, text=None):
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

    def add_name(self, kind, node, owner, role="ref"):
        """A QualifiedName / LiteralString / QualifiedReference naming a class/type."""
        t = type(node)
        if t is A.QualifiedName:
            self.add((kind, norm(node.value)), node.offset, node.length, role, owner)
        elif t is A.LiteralString:
            if node.length >= 2 and self.data[node.offset : node.offset + 1] in (b"'", b'"'):
                self.add((kind, norm(node.value)), node.offset + 1, node.length - 2, role, owner)
        elif t is A.QualifiedReference:
            self.add((kind, norm(node.value)), node.offset, node.length, role, owner)
        elif t is A.LiteralList:
            for v in node.values:
                self.add_name(kind, v, owner, role)

    def run(self):
        prog = self.an.program
        if prog is None or prog.body is None:
            return self.out
        top = _Scope("top", "", 0, _declared((), prog.body), None)
        # (node, scope, owner, assigned?) ; explicit stack: deep programs must not hit the recursion limit
        stack = [(prog.body, top, None, False)]
        while stack:
            n, scope, owner, write = stack.pop()
            for item in self.visit(n, scope, owner, write):
                stack.append(item)
        return self.out

    def _def_name(self, d, kind, owner):
        so, sl = F.name_span(self.an, d)
        if sl:
            self.add((kind, norm(d.name)), so, sl, "def", owner)

    def visit(self, n, scope, owner, write):
        t = type(n)
        kids = n.children()
        if t in _DEFS:
            kind = _DEFS[t]
            me = (kind, norm(n.name))
            self._def_name(n, kind, me)
            if t is A.TypeAlias:
                return [(c, scope, me, False) for c in kids]
            params = getattr(n, "parameters", None) or []
            pc = norm(n.parent_class) if t is A.HostClassDefinition and n.parent_class else None
            if pc:
                self._inherits(n, pc, me)
            skind = {"class": "class", "type": "define"}.get(kind, "local")
            sname = norm(n.name) if skind != "local" else f"function {n.offset}"
            inner = _Scope(skind, sname, n.offset, _declared(params, n.body), scope, pc)
            for p in params:
                self.add(_resolve(inner, p.name, self.path), p.offset + 1, len(p.name.encode()), "def", me)
            return [(c, inner, me, False) for c in kids if type(c) is not A.Parameter] + [
                (c, inner, me, False) for p in params for c in p.children()
            ]
        if t is A.NodeDefinition:
            me = ("node", " ".join(F.src(self.an, h) for h in n.host_matches))
            if n.host_matches:  # a definition ref, so call hierarchy can name the node
                h = n.host_matches[0]
                self.add(me, h.offset, h.length, "def", me, me[1])
            inner = _Scope("local", "node", n.offset, _declared((), n.body), scope)
            return [(c, inner, me, False) for c in kids]
        if t is A.LambdaExpression:
            inner = _Scope("lambda", "", n.offset, _declared(n.parameters, n.body), scope)
            for p in n.parameters:
                self.add(
                    ("lvar", self.path, n.offset, p.name), p.offset + 1, len(p.name.encode()), "def", owner
                )
            return [(c, inner, owner, False) for c in kids if type(c) is not A.Parameter] + [
                (c, inner, owner, False) for p in n.parameters for c in p.children()
            ]
        if t is A.VariableExpression:
            q = n.expr
            name = getattr(q, "value", None)
            off = n.offset
            if isinstance(name, str) and off is not None:
                # inside "${x}" Puppet positions the variable on its name and the name one byte off
                off += self.data[off : off + 1] == b"$"
                if self.data[off : off + len(name.encode())] != name.encode():
                    return []
                if "::" in name.lstrip(":"):
                    key = ("var", norm(name))
                elif name.startswith("::"):
                    key = ("var", name)
                else:
                    key = _resolve(scope, name, self.path)
                self.add(key, off, len(name.encode()), "write" if write else "read", owner)
            return []
        if t is A.AssignmentExpression:
            left = n.left_expr
            lefts = left.values if type(left) is A.LiteralList else [left]
            return [(v, scope, owner, True) for v in lefts] + [(n.right_expr, scope, owner, False)]
        if t is A.CallNamedFunctionExpression:
            f = n.functor_expr
            if type(f) is A.QualifiedName:
                self.add(("function", norm(f.value)), f.offset, f.length, "ref", owner)
                rest = [c for c in kids if c is not f]
                if f.value in _CLASS_FUNCS:
                    for a in n.arguments:
                        self.add_name("class", a, owner)
                    rest = [c for c in rest if c not in n.arguments]
                elif f.value == "lookup" and n.arguments and type(n.arguments[0]) is A.LiteralString:
                    a = n.arguments[0]
                    if "::" in a.value:
                        self.add_name("var", a, owner)
                return [(c, scope, owner, False) for c in rest]
        if t is A.CallMethodExpression:
            f = n.functor_expr
            if type(f) is A.NamedAccessExpression and type(f.right_expr) is A.QualifiedName:
                nm = f.right_expr.value
                b = nm.encode()
                end = f.offset + f.length if f.offset is not None else -1
                off = self.data.rfind(b, f.offset or 0, end) if end > 0 else -1
                if off >= 0:
                    self.add(("function", norm(nm)), off, len(b), "ref", owner)
                return [(c, scope, owner, False) for c in kids if c is not f] + [
                    (f.left_expr, scope, owner, False)
                ]
        if t is A.ResourceExpression:
            tn = n.type_name
            tname = norm(getattr(tn, "value", "") or "")
            out: list[tuple] = []
            if tname == "class":
                for b in n.bodies:
                    self.add_name("class", b.title, owner)
                    titles = _titles(b.title)
                    for op in b.operations:
                        for ti in titles:
                            self._attr(op, ti, owner)
                        out.extend((c, scope, owner, False) for c in op.children())
                return out
            if type(tn) is A.QualifiedName:
                self.add(("type", tname), tn.offset, tn.length, "ref", owner)
            else:
                out.append((tn, scope, owner, False))
            for b in n.bodies:
                if b.title is not None:
                    out.append((b.title, scope, owner, False))
                for op in b.operations:
                    if tname:
                        self._attr(op, tname, owner)
                    out.extend((c, scope, owner, False) for c in op.children())
            return out
        if t is A.ResourceDefaultsExpression:
            tr = n.type_ref
            tname = norm(getattr(tr, "value", "") or "")
            for op in n.operations:
                if tname and tname != "class":
                    self._attr(op, tname, owner)
            return [(c, scope, owner, False) for c in kids]
        if t is A.AccessExpression:
            left = n.left_expr
            if type(left) is A.QualifiedReference and left.value.lower() == "class":
                for k in n.keys:
                    self.add_name("class", k, owner)
                return []
        if t is A.QualifiedReference:
            if n.value.lower() not in ("class",):
                self.add(("type", norm(n.value)), n.offset, n.length, "ref", owner)
            return []
        return [(c, scope, owner, False) for c in kids]

    def _attr(self, op, owner_name, owner):
        if type(op) is A.AttributeOperation and op.offset is not None:
            nm = op.attribute_name
            if self.data[op.offset : op.offset + len(nm.encode())] == nm.encode():
                self.add(("var", f"{owner_name}::{nm}"), op.offset, len(nm.encode()), "write", owner, nm)

    def _inherits(self, d, parent, owner):
        toks = self.an.tokens or ()
        import bisect

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


def _titles(title) -> list:
    t = type(title)
    if t in (A.LiteralString, A.QualifiedName):
        return [norm(title.value)]
    if t is A.LiteralList:
        return [x for v in title.values for x in _titles(v)]
    return []


def _tail(r: Ref) -> tuple:
    return (r.path, r.start, r.end, r.role, r.text, r.owner)


def refs_of(an, path: str) -> list:
    """The references of one analysed ``.pp`` file (never raises: a bad tree gives what was found)."""
    ex = _Extractor(an, path)
    try:
        return ex.run()
    except Exception:  # a parser bug must not cost the other files their references
        return ex.out


def hiera_refs(path: str, data: bytes) -> list:
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


class RefIndex:
    """path -> refs, and key -> {path: refs}: a query touches only the files that use the name."""

    def __init__(self):
        self.by_path: dict[str, list] = {}
        self.by_key: dict[tuple, dict[str, list]] = {}
        self.by_owner: dict[tuple, dict[str, list]] = {}
        self.source: dict[str, object] = {}  # path -> the analysis its refs came from (None: disk)
        self.yaml: dict[str, int] = {}  # Hiera data file -> mtime when read
        self.hiera_roots: tuple | None = None
        self.lock = threading.Lock()

    def set_file(self, path: str, refs: list, source=None) -> None:
        with self.lock:
            self._drop(path)
            self.by_path[path] = refs
            self.source[path] = source
            for r in refs:
                self.by_key.setdefault(r.key, {}).setdefault(path, []).append(r)
                if r.owner is not None and r.key[0] != "varprefix":
                    self.by_owner.setdefault(r.owner, {}).setdefault(path, []).append(r)

    def _drop(self, path: str) -> None:
        for r in self.by_path.pop(path, ()):
            for table, k in ((self.by_key, r.key), (self.by_owner, r.owner)):
                d = table.get(k)
                if d is not None:
                    d.pop(path, None)
                    if not d:
                        del table[k]
        self.source.pop(path, None)

    def remove_file(self, path: str) -> None:
        with self.lock:
            self._drop(path)

    def set_analysis(self, path: str, an) -> None:
        """An open document's current analysis (recomputed only when the analysis changed)."""
        if self.source.get(path) is an:
            return
        self.set_file(path, refs_of(an, path), an)

    def refs(self, key: tuple) -> list:
        with self.lock:
            per = dict(self.by_key.get(key, {}))
        gone = [p for p in per if not os.path.exists(p)]
        for p in gone:  # deleted or moved away since indexed
            if self.source.get(p) is None:
                self.remove_file(p)
                del per[p]
        return [r for p in sorted(per) for r in sorted(per[p], key=_pos)]

    def defs(self, key: tuple) -> list:
        return [r for r in self.refs(key) if r.role == "def"]

    def owned_by(self, owner: tuple) -> list:
        with self.lock:
            per = dict(self.by_owner.get(owner, {}))
        return [r for p in sorted(per) for r in per[p]]

    def file_refs(self, path: str) -> list:
        with self.lock:
            return list(self.by_path.get(path, ()))


def _pos(r: Ref) -> tuple:
    return r.start


def ref_at(refs: list, line: int, col: int) -> Ref | None:
    """The (innermost) reference under the cursor in one file's refs."""
    best = None
    for r in refs:
        if r.key[0] != "varprefix" and r.contains(line, col):
            if best is None or (r.end[0], r.end[1]) < (best.end[0], best.end[1]) or r.start > best.start:
                best = r
    return best


# ----------------------------------------------------------------------------------------------- files


def feed(refs: RefIndex):
    """A hook for ``analysis_index.PARSED_HOOKS``: every manifest the workspace indexing parses also
    files its references (one parse for both indexes)."""

    def hook(path, an):
        refs.set_file(path, refs_of(an, path))

    return hook


def build(roots):
    """(WorkspaceIndex, RefIndex) of every file under ``roots`` (the CLI and the benchmark)."""
    from puppet_xpp.server.analysis import index as AI

    refs = RefIndex()
    idx = AI.WorkspaceIndex()
    hook = feed(refs)
    AI.PARSED_HOOKS.append(hook)
    try:
        for p in AI.workspace_files(roots):
            idx.set_file(p, AI.index_file(p))
    finally:
        AI.PARSED_HOOKS.remove(hook)
    index_hiera(refs, roots)
    return idx, refs


def index_yaml(refs: RefIndex, path: str) -> None:
    try:
        mtime = os.stat(path).st_mtime_ns
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        refs.remove_file(path)
        refs.yaml.pop(path, None)
        return
    refs.set_file(path, hiera_refs(path, data))
    refs.yaml[path] = mtime


def hiera_files(roots) -> list:
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


def index_hiera(refs: RefIndex, roots) -> int:
    files = hiera_files(roots)
    for p in files:
        index_yaml(refs, p)
    refs.hiera_roots = tuple(roots)
    return len(files)


def refresh_hiera(refs: RefIndex, roots) -> None:
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

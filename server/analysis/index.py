"""The workspace index (no pygls imports): every class, defined type, function, plan, type alias and
node of the workspace's ``.pp`` files, with locations, docs and parameters.  Open documents replace
their file's entries with those of their current analysis."""

from __future__ import annotations

import os
import threading
from typing import Any

from puppet_xpp.grammar import ast as A
from puppet_xpp.server.analysis import features as F
from puppet_xpp.server.analysis.document import LineIndex
from puppet_xpp.server.analysis.symbols import Attr, Param, Signature, Sym  # noqa: F401  (re-exported: the index's entries)


def symbols_of(an, path: str) -> list:
    """Index entries of one analysed file (its top-level and nested definitions)."""
    prog = an.program
    if prog is None:
        return []
    out = []
    lines = an.lines
    for d in prog.definitions:
        if type(d) is A.NodeDefinition:
            name = " ".join(F.src(an, h) for h in d.host_matches)
        else:
            name = getattr(d, "name", "")
        doc = F.leading_comment(an.data, d.offset)
        pdocs = F.param_docs(doc)
        params = [
            Param(
                p.name,
                F.expr_text(an, p.type_expr),
                F.expr_text(an, p.value),
                pdocs.get(p.name, ""),
                "repeated" if p.captures_rest else "optional" if p.value is not None else "required",
            )
            for p in (getattr(d, "parameters", None) or [])
        ]
        so, sl = F.name_span(an, d)
        kind = F.kind_name(d)
        sig = _signature(an, d, kind, name, params)
        sigs = []
        if kind in ("function", "plan"):  # one signature (signature help), its return type as written
            rt = getattr(d, "return_type", None)
            sigs = [Signature(params, F.expr_text(an, rt) if rt is not None else "")]
        out.append(
            Sym(
                name, kind, path, lines.range(d.offset, d.length), lines.range(so, sl), doc, params, sig, sigs
            )
        )
    return out


def _signature(an, d, kind, name, params) -> str:
    if kind == "type":
        return f"type {name} = {F.expr_text(an, getattr(d, 'type_expr', None))}"
    ps = []
    for p in params:
        s = (p.type + " " if p.type else "") + "$" + p.name + (" = " + p.default if p.default else "")
        ps.append(s)
    ret = ""
    rt = getattr(d, "return_type", None)
    if rt is not None:
        ret = " >> " + F.src(an, rt)
    if not ps:
        return f"{kind} {name}{'()' if kind in ('function', 'plan') else ''}{ret}"
    if len(ps) <= 3 and sum(len(x) for x in ps) < 70:
        return f"{kind} {name}({', '.join(ps)}){ret}"
    return f"{kind} {name}(\n  " + ",\n  ".join(ps) + f",\n){ret}"


class WorkspaceIndex:
    def __init__(self):
        self.by_path: dict[str, list] = {}
        self.by_key: dict[str, list] = {}
        self.lock = threading.Lock()

    def set_file(self, path: str, syms: list):
        with self.lock:
            for s in self.by_path.get(path, ()):
                lst = self.by_key.get(s.key)
                if lst is not None:
                    try:
                        lst.remove(s)
                    except ValueError:
                        pass
            self.by_path[path] = syms
            for s in syms:
                self.by_key.setdefault(s.key, []).append(s)

    def remove_file(self, path: str):
        self.set_file(path, [])
        with self.lock:
            self.by_path.pop(path, None)

    def lookup(self, name: str, kinds=None) -> list:
        with self.lock:
            out = list(self.by_key.get(name.lower().lstrip(":"), ()))
        if kinds:
            out = [s for s in out if s.kind in kinds]
        return out

    def all(self) -> list:
        with self.lock:
            return [s for syms in self.by_path.values() for s in syms]

    def search(self, query: str, limit: int = 500) -> list:
        q = query.lower()
        out = []
        for s in self.all():
            if not q or q in s.name.lower():
                out.append(s)
                if len(out) >= limit:
                    break
        return out


# callables (path, analysis) run on every manifest index_file parses
PARSED_HOOKS: list = []


def index_file(path: str, tasks: bool | None = None):
    """Parse one file from disk and return its index entries ([] when unreadable): a manifest's
    definitions, or what a module's Ruby file defines (server/analysis/ruby_index.py)."""
    from puppet_xpp.grammar.parser import parse

    if path.endswith(".rb"):
        from puppet_xpp.server.analysis.ruby_index import index_ruby_file

        return index_ruby_file(path)

    from puppet_xpp.server.analysis.workspace import in_plans_dir

    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return []
    text = data.decode("utf-8", "surrogateescape")
    if tasks is None:
        tasks = in_plans_dir(path)
    try:
        res = parse(text, path, epp=False, tasks=tasks)
    except Exception:  # a parser bug must not stop the indexing
        return []
    if res.program is None:
        return []

    class _An:  # the parts of an Analysis that symbols_of and the PARSED_HOOKS read
        program: Any
        tokens: list
        data: bytes
        lines: LineIndex

    loc: Any = res.locator  # a grammar.ast Locator (ParseResult types it as object)
    an = _An()
    an.program = res.program
    an.tokens = res.tokens
    an.data = loc._bytes()
    an.lines = LineIndex(an.data, list(loc.line_index))
    for hook in PARSED_HOOKS:  # one parse also feeds e.g. the reference index (server/analysis/references.py)
        hook(path, an)
    return symbols_of(an, path)


def workspace_files(roots, limit: int = 20000) -> list:
    """The .pp files and the Ruby files of Puppet's extension APIs (functions, types, facts) under the
    workspace roots and module directories (symlinks followed once; .xpp, .git, spec fixtures skipped)."""
    from puppet_xpp.server.analysis.ruby_index import kind_of_path

    out = []
    seen = set()
    for root in roots:
        for dirpath, dirnames, filenames in os.walk(root, followlinks=True):
            real = os.path.realpath(dirpath)
            if real in seen:
                dirnames[:] = []
                continue
            seen.add(real)
            dirnames[:] = sorted(
                d for d in dirnames if d not in (".git", ".xpp", "node_modules", "fixtures", "vendor", "spec")
            )
            for f in sorted(filenames):
                if f.endswith(".pp") or (f.endswith(".rb") and kind_of_path(os.path.join(dirpath, f))):
                    out.append(os.path.join(dirpath, f))
                    if len(out) >= limit:
                        return out
    return out

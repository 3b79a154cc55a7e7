"""Completion and completionItem/resolve (no pygls here): plain answers (server/analysis/answers.py).

Special places first (a Hiera key, an attribute's value, a resource title, a fact's key), then a
resource's attributes (of core, Ruby-defined and Puppet-defined types), then the document's and the
workspace's names: variables, keywords, types, functions, classes.  Every item replaces the typed
prefix (so ``::`` names complete alike in omnifunc and VS Code); a function gets a snippet of its
required parameters when the client takes snippets.
"""

from __future__ import annotations

import functools
import os
import re
from typing import NamedTuple

from puppet_xpp.grammar import ast
from puppet_xpp.server.analysis import features, hiera, tables, world
from puppet_xpp.server.analysis.answers import CompletionItem, Completions, Knowledge
from puppet_xpp.server.analysis.document import Analysis, LineIndex
from puppet_xpp.server.analysis.navigation import (
    attribute_markdown,
    function_markdown,
    local_symbols,
    span,
    type_markdown,
)
from puppet_xpp.server.analysis.symbols import Attr, Sym

BUILTIN_VARIABLES = ("facts", "trusted", "server_facts", "title", "name", "module_name", "environment")
SYMBOL_KINDS = {
    "class": "Class",
    "define": "Struct",
    "function": "Function",
    "plan": "Method",
    "type": "TypeParameter",
}


class Context(NamedTuple):
    """What the text says about a completion's place (the text scans of server.analysis.world and
    .features, made once per request: each looks back up to 20 KB, a Python loop)."""

    offset: int
    special: world.SpecialContext | None
    kind: str  # features.completion_context's: "variable", "attribute", "general"
    prefix: str
    rtype: str | None


def context_at(an: Analysis, line: int, character: int) -> Context:
    off = an.lines.offset(line, character)
    return Context(off, world.special_context(an, off), *features.completion_context(an, off))


def completion(
    an: Analysis,
    known: Knowledge,
    line: int,
    character: int,
    local: list[Sym] | None = None,
    context: Context | None = None,
) -> Completions:
    """The completions at (line, character).  ``local``: the document's own definitions, when ``an``
    is the current text alone (:func:`text_analysis`: no tree), else they are read from its tree.
    ``context``: :func:`context_at` of the same place, when the caller has it already."""
    off, sp, ctx, prefix, rtype = context if context is not None else context_at(an, line, character)
    if sp is not None:
        items = _special_items(an, known, sp)
        if items is not None:
            return _with_edits(an, known, off, sp[1], items)
    if ctx == "attribute" and rtype is not None:
        if rtype == "class":
            rtype = world.resource_title(an.data, off - len(prefix.encode())) or "class"
        attrs, owner, kind = world.attributes_of(known.index, rtype, known.level)
        if owner is not None and (kind in ("type", "class")):
            items = []
            for a in attrs:
                if isinstance(a, Attr):  # (a resource type's)
                    detail = (
                        ("namevar " if a.namevar else "")
                        + a.kind
                        + (": " + ", ".join(a.values) if a.values else "")
                    )
                else:
                    detail = a.type or "parameter"
                items.append(
                    CompletionItem(
                        a.name,
                        "Property",
                        detail=detail,
                        insert_text=f"{a.name} => ",
                        data={"k": "attr", "t": rtype, "n": a.name},
                    )
                )
            items.extend(_metaparameters())
            return _with_edits(an, known, off, prefix, items)
    items = _document_items(an, known, off, ctx, prefix, rtype, local)
    if ctx == "variable":
        if not prefix.startswith("::") or prefix.count("::") == 1:
            bare = prefix.startswith("::")
            custom = [s.name for s in known.index.all() if s.kind == "fact" and "." not in s.name]
            for f in sorted(set(world.legacy_facts()) | set(custom)):
                t = ("::" if bare else "") + f
                items.append(CompletionItem("$" + t, "Variable", "legacy fact", insert_text=t, filter_text=t))
    elif ctx == "general":
        out = []
        classes_only = _includes(an.data, off - len(prefix.encode()))
        for it in items:
            if classes_only and it.detail != "class":
                continue  # include/contain/require take classes only (a define is declared as a resource)
            if it.detail in ("fact",):
                continue
            if it.detail == "resource_type":
                it.kind = "Class"
            out.append(it)
        items = out
        names = {it.label for it in items}
        # resource references: Type['title'] of the core and Ruby-defined types
        if prefix[:1].isupper():
            for t in list(tables.RESOURCE_TYPES) + [
                s.name for s in known.index.all() if s.kind in ("resource_type", "define")
            ]:
                ref = "::".join(x.capitalize() for x in t.split("::"))
                if ref not in names:
                    names.add(ref)
                    items.append(CompletionItem(ref, "Reference", "resource reference"))
    return _with_edits(an, known, off, prefix, items)


# ``include``, ``contain``, ``require`` (statement or call form), then names so far, ending where the
# name being typed starts
_INCLUDE_CTX = re.compile(
    rb"(?:^|[^\w$:])(?:include|contain|require)(?:\s+|\s*\(\s*)(?:\[\s*)?"
    rb"(?:(?:::)?[\w:]+\s*,\s*|['\"][\w:]*['\"]\s*,\s*)*$"
)


def _includes(data: bytes, start: int) -> bool:
    """Whether the name starting at ``start`` is an argument of ``include``/``contain``/``require``
    (which name classes only)."""
    return _INCLUDE_CTX.search(data[max(0, start - 400) : start]) is not None


def _metaparameters() -> list[CompletionItem]:
    return [
        CompletionItem(a, "Property", "metaparameter", insert_text=f"{a} => ", sort_text="~" + a)
        for a in tables.META_PARAMETERS
    ]


def text_analysis(data: bytes, version: int | None, encoding: str, epp: bool, tasks: bool) -> Analysis:
    """The current text of a document as an analysis without a tree (no parse: nothing waits for
    one), for a completion :func:`needs_tree` says can do without: what it reads of the document is
    the text around the cursor (the context scans of server.analysis.features and .world)."""
    return Analysis(version, None, data, None, [], None, [], [], LineIndex(data, None, encoding), epp, tasks)


# How much of the text before the cursor's line :func:`window_analysis` keeps: more than the context
# scans read (world.special_context and features.completion_context read the cursor's line; the
# scans for an enclosing resource body, its title and an ``include`` look back at most 20,000 bytes
# and 200 more for the name before a brace).  tests/lsp/test_completion_window.py holds the answers
# from the window equal to those from the whole text, an enclosing body 20 KB back included.
WINDOW_BYTES = 24 * 1024


def window_analysis(
    data: bytes, line: int, version: int | None, encoding: str, epp: bool, tasks: bool
) -> tuple[Analysis, int]:
    """A :func:`text_analysis` of the part of ``data`` a completion on ``line`` reads: from a line
    start at least :data:`WINDOW_BYTES` before that line to its end, and the number of the window's
    first line (the position (line, c) of the text is (line - first, c) in the window; the answer's
    edits are moved back with :func:`shifted`).  Nothing in proportion to the size of the text but
    finding the line: a completion in a 300 KB manifest no longer indexes all its lines (~1-3 ms)."""
    parts = data.split(b"\n", line) if line > 0 else [data]
    if len(parts) <= line:  # (past the last line: the whole text, as the full analysis clamps it)
        return text_analysis(data, version, encoding, epp, tasks), 0
    start = len(data) - len(parts[-1])
    end = data.find(b"\n", start)
    if end < 0:
        end = len(data)
    first_byte = 0 if start <= WINDOW_BYTES else data.rfind(b"\n", 0, start - WINDOW_BYTES) + 1
    first = data.count(b"\n", 0, first_byte)
    return text_analysis(data[first_byte:end], version, encoding, epp, tasks), first


def shifted(completions: Completions, lines: int) -> Completions:
    """``completions`` with their edits ``lines`` lines further down (a window's answer, in the
    text's lines)."""
    if lines:
        for it in completions.items:
            if it.edit is not None:
                ((a, b), (c, d)), text = it.edit
                it.edit = ((a + lines, b), (c + lines, d)), text
    return completions


def needs_tree(an: Analysis, line: int, character: int, context: Context | None = None) -> bool:
    """Whether the completion at (line, character) reads the document's tree: the variables in scope
    there, the titles of a type's resources.  The other contexts (a resource's attributes or values,
    names, Hiera keys, facts) read the text around the cursor only."""
    c = context if context is not None else context_at(an, line, character)
    if c.special is not None and c.special[0] == "title":
        return True
    return c.kind == "variable"


def _document_items(
    an: Analysis,
    known: Knowledge,
    off: int,
    ctx: str,
    prefix: str,
    rtype: str | None,
    local: list[Sym] | None = None,
) -> list[CompletionItem]:
    """The names of the document and the workspace's manifests (and the core tables) at ``off``, in
    the context ``ctx`` (features.completion_context's, with its prefix and resource type)."""
    items: list[CompletionItem] = []
    index = known.index
    if ctx == "variable":
        seen = set()
        for name, node in features.visible_variables(an, off, an.node_locator).items():
            seen.add(name)
            detail = "parameter" if type(node) is ast.Parameter else "variable"
            items.append(CompletionItem("$" + name, "Variable", detail, insert_text=name, filter_text=name))
        for name in BUILTIN_VARIABLES:
            if name not in seen:
                items.append(
                    CompletionItem("$" + name, "Variable", "built-in", insert_text=name, filter_text=name)
                )
        if "::" in prefix:
            cls = prefix.lstrip(":").rpartition("::")[0]
            for s in index.lookup(cls, ("class",)):
                for p in s.params:
                    full = f"{cls}::{p.name}"
                    items.append(
                        CompletionItem(
                            "$" + full, "Field", p.type or "parameter", insert_text=full, filter_text=full
                        )
                    )
        return items
    if ctx == "attribute":
        attrs: list[tuple[str, str]] = []
        if rtype is None:
            pass
        elif rtype in tables.RESOURCE_TYPES:
            attrs = [(a, tables.RESOURCE_TYPES[rtype][0]) for a in tables.RESOURCE_TYPES[rtype][1]]
        else:
            for s in index.lookup(rtype, ("define", "class")):
                attrs = [(p.name, (p.type + " " if p.type else "") + (p.doc or "")) for p in s.params]
                break
        for a, detail in attrs:
            items.append(CompletionItem(a, "Property", detail.strip() or None, insert_text=f"{a} => "))
        items.extend(_metaparameters())
        return items
    for k in tables.KEYWORDS:
        items.append(CompletionItem(k, "Keyword"))
    for t, (desc, _attrs) in tables.RESOURCE_TYPES.items():
        items.append(CompletionItem(t, "Class", "resource type", documentation=desc))
    for f, sig in tables.FUNCTIONS.items():
        items.append(CompletionItem(f, "Function", sig))
    for t in tables.DATA_TYPES:
        items.append(CompletionItem(t, "TypeParameter", "data type"))
    seen_syms = set()
    for s in index.all() + (local_symbols(an) if local is None else local):
        key = (s.kind, s.name)
        if key in seen_syms or s.kind == "node":
            continue
        seen_syms.add(key)
        items.append(
            CompletionItem(
                s.name,
                SYMBOL_KINDS.get(s.kind, "Text"),
                s.kind,
                documentation=_summary(s.doc),
            )
        )
    return items


def _special_items(
    an: Analysis, known: Knowledge, sp: tuple[str, str, object]
) -> list[CompletionItem] | None:
    kind, _prefix, extra = sp
    if kind == "hiera_key":
        return [
            CompletionItem(k, "Constant", f"Hiera: {os.path.basename(p)}")
            for k, p in sorted(hiera.all_keys(known.hiera()).items())
        ]
    if kind == "value":
        assert isinstance(extra, tuple)
        rtype, attr = extra
        if rtype == "class":
            return None
        attrs, _owner, _k = world.attributes_of(known.index, rtype, known.level)
        for a in attrs:
            values: tuple[str, ...] = getattr(a, "values", ())
            if a.name == attr and values:
                return [
                    CompletionItem(v, "EnumMember", f"{rtype}.{attr}")
                    for v in values
                    if not v.startswith("/")
                ]
        return None
    if kind == "title":
        assert isinstance(extra, str)
        return [CompletionItem(t, "Reference", f"{extra} resource") for t in world.resource_titles(an, extra)]
    if kind == "fact":
        assert isinstance(extra, list)
        custom = [s.name for s in known.index.all() if s.kind == "fact"]
        return [
            CompletionItem(n, "Field" if leaf else "Module", "fact")
            for n, leaf in world.fact_keys(extra, custom)
        ]
    return None


@functools.lru_cache(maxsize=16384)
def _summary(doc: str) -> str | None:
    """The first sentence of a definition's documentation (features.summary_of), kept by its text: a
    completion of names in a workspace of the corpus's modules gives ~1,200 of them on every request,
    most of its time before they were kept."""
    return features.summary_of(doc) or None


def _snippet_of(sym: Sym) -> str:
    sigs = world.signatures_of(sym)
    if not sigs:
        return sym.name
    ps = [p for p in sigs[0].params if p.kind in ("required",)]
    body = ", ".join(f"${{{k + 1}:{p.name}}}" for k, p in enumerate(ps))
    return f"{sym.name}({body})"


def _with_edits(
    an: Analysis, known: Knowledge, off: int, prefix: str, items: list[CompletionItem]
) -> Completions:
    """Every item gets an edit over the typed prefix; functions a snippet when the client takes them."""
    start = off - len(prefix.encode())
    rng = span(an, start, off - start)
    for it in items:
        text = it.insert_text or it.label
        if it.kind == "Function" and it.data is None:
            syms = world.functions_named(known.index, it.label, level=known.level)
            if syms:
                it.data = {"k": "fn", "n": it.label}
                if known.snippets:
                    text = _snippet_of(syms[0])
                    it.snippet = True
        elif it.kind in ("Class", "Struct") and it.data is None:
            it.data = {"k": "type", "n": it.label}
        it.edit = (rng, text)
        it.insert_text = None
    return Completions(items)


def resolve(known: Knowledge, data: object) -> str | None:
    """The markdown documentation of a completion item whose ``data`` :func:`completion` set, or None."""
    d = data if isinstance(data, dict) else None
    if not d:
        return None
    text = None
    name = str(d.get("n", ""))
    if d.get("k") == "fn":
        syms = world.functions_named(known.index, name, level=known.level)
        if syms:
            text = (
                function_markdown(syms[0])
                if syms[0].origin != "puppet"
                else features.doc_markdown(syms[0].doc)
            )
    elif d.get("k") == "type":
        t = world.resource_type_named(known.index, name, known.level)
        if t is not None and not known.index.lookup(name, ("class", "define")):
            text = type_markdown(t)
        else:
            for s in known.index.lookup(name, ("class", "define")):
                text = f"```puppet\n{s.signature}\n```\n\n{features.doc_markdown(s.doc)}"
                break
    elif d.get("k") == "attr":
        attrs, owner, kind = world.attributes_of(known.index, str(d.get("t", "")), known.level)
        for a in attrs:
            if a.name == d.get("n") and owner is not None and kind is not None:
                text = attribute_markdown(owner, a, kind)
    return text or None

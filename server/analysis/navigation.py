"""Hover, go to definition, document and workspace symbols, signature help (no pygls here): plain
answers (server/analysis/answers.py) from an analysis and what the workspace knows.

Each question is asked of the wider world first (Ruby-defined and built-in functions and types,
facts, Hiera keys: server/analysis/world.py, server/analysis/hiera.py), then of the document and the
workspace's manifests, in that order, as the handlers always did.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from puppet_xpp.grammar import ast
from puppet_xpp.server.analysis import builtins, facts, features, hiera, tables, world
from puppet_xpp.server.analysis.answers import (
    DocumentSymbol,
    Hover,
    Knowledge,
    Location,
    SignatureHelp,
    SignatureInformation,
)
from puppet_xpp.server.analysis.document import Analysis, Span
from puppet_xpp.server.analysis.index import WorkspaceIndex, iter_symbols, symbols_of
from puppet_xpp.server.analysis.symbols import Attr, Sym


def span(an: Analysis, offset: int | None, length: int | None) -> Span:
    """The LSP span of ``length`` bytes at ``offset`` (None: 0)."""
    return an.lines.range(offset or 0, max(0, length or 0))


def lookup(index: WorkspaceIndex, kind: str, name: str) -> list[Sym]:
    """The workspace's definitions a reference of ``kind`` (server.analysis.features.reference_at)
    may mean."""
    kinds = {
        "class": ("class",),
        "define": ("define",),
        "class_or_define": ("class", "define"),
        "function": ("function", "plan"),
        "type": ("type", "define", "class"),
    }.get(kind)
    syms = index.lookup(name, kinds)
    if not syms and kind == "type":
        syms = index.lookup(name, ("type", "define", "class"))
    return syms


# ----------------------------------------------------------------------------------------------- markdown


def function_markdown(sym: Sym) -> str:
    name = sym.name
    sigs = world.signatures_of(sym)
    head = "\n".join(s.label(name) for s in sigs) or f"{name}(...)"
    origin = {
        "ruby4": "Ruby function (4.x API)",
        "ruby3": "Ruby function (3.x API)",
        "builtin": "built-in function",
    }
    text = f"```puppet\n{head}\n```\n({origin.get(sym.origin, 'function')})"
    doc = world.doc_of(sym)
    if doc:
        text += "\n\n" + features.doc_markdown(doc)
    return text


def type_markdown(sym: Sym) -> str:
    origin = {
        "native": "resource type (Ruby)",
        "resource_api": "resource type (Resource API)",
        "builtin": "core resource type",
    }
    namevars = [a.name for a in sym.attrs if a.namevar]
    text = f"**{sym.name}** ({origin.get(sym.origin, 'resource type')})"
    if namevars:
        text += f"\n\nnamevar: `{'`, `'.join(namevars)}`"
    props = [a.name for a in sym.attrs if a.kind == "property"]
    params = [a.name for a in sym.attrs if a.kind != "property"]
    if props:
        text += "\n\nproperties: " + ", ".join(props)
    if params:
        text += "\n\nparameters: " + ", ".join(params)
    doc = world.doc_of(sym)
    if doc:
        text += "\n\n" + features.doc_markdown(doc)
    return text


def attribute_markdown(owner: Sym, attr: Any, kind: str) -> str:
    """An attribute of a resource type (``kind`` "type": an :class:`Attr`) or a parameter of a class
    or defined type (a :class:`Param`)."""
    if kind == "type":
        what = "namevar" if attr.namevar else attr.kind
        text = f"**{attr.name}** ({what} of {owner.name})"
        if attr.type:
            text += f"\n\ntype: `{attr.type}`"
        if attr.values:
            text += "\n\nallowed values: " + ", ".join(f"`{v}`" for v in attr.values)
        if attr.default:
            text += f"\n\ndefault: `{attr.default}`"
        doc = world.attribute_doc(owner, attr)
    else:
        text = f"```puppet\n{attr.type + ' ' if attr.type else ''}${attr.name}{' = ' + attr.default if attr.default else ''}\n```\n(parameter of {kind} {owner.name})"
        doc = attr.doc
    if doc:
        text += "\n\n" + features.doc_markdown(doc)
    return text


# ----------------------------------------------------------------------------------------------- hover


def hover(an: Analysis, known: Knowledge, line: int, character: int) -> Hover | None:
    off = an.lines.offset(line, character)
    return (
        _definition_name_hover(an, off)
        or _world_hover(an, known, off)
        or _document_hover(an, known.index, off)
    )


def definition_markdown(sym: Sym) -> str:
    """The hover of a class, defined type, function, plan or type alias of the Puppet language: its
    signature and its puppet-strings documentation.  One text for a reference to it and for its own
    name in its definition, so that both hovers say the same."""
    text = f"```puppet\n{sym.signature}\n```"
    if sym.doc:
        text += "\n\n" + features.doc_markdown(sym.doc)
    return text


def _definition_name_hover(an: Analysis, off: int) -> Hover | None:
    """The name in ``class foo::bar (``, ``define``, ``function``, ``plan``, ``type Foo::T =``
    answered as a reference to that definition would be (the user expects the same hover on the name
    where it is defined as where it is used; puppet-editor-services answers nothing there: its hover
    knows no definition node), from this document's own text: the index may not have it yet (a
    document never saved) or hold an older version.  A node definition's names are host names, not
    a definition to describe: no answer (as before)."""
    prog = an.program
    if prog is None:
        return None
    for d in prog.definitions:
        if d.offset is None or not d.offset <= off <= d.offset + d.length or type(d) is ast.NodeDefinition:
            continue
        start, length = features.name_span(an, d)
        if length > 0 and start <= off <= start + length:  # an identifier's end counts, as for a reference
            sym = _own_symbol(an, d)
            return Hover(definition_markdown(sym), span(an, start, length)) if sym is not None else None
    return None


def _own_symbol(an: Analysis, d: ast.Definition) -> Sym | None:
    """The index entry of one definition of the document, made by the indexer's own rule
    (server.analysis.index.iter_symbols) over a view of the analysis whose Program holds that
    definition only: the whole document's entries cost in proportion to its size (seconds for a
    manifest of thousands of classes), one hover must not."""
    one = ast.Program(an.program.locator, None, [d])
    view = dataclasses.replace(an, program_source=one, node_locator_memo=None)
    return next(iter_symbols(view, ""), None)


def _world_hover(an: Analysis, known: Knowledge, off: int) -> Hover | None:
    """Ruby-defined and built-in functions and types, resource attributes, Hiera keys."""
    at = world.attribute_at(an, off)
    if at is not None:
        rtype, name, s, e = at
        if rtype == "class":
            rtype = world.resource_title(an.data, s) or rtype
        attrs, owner, kind = world.attributes_of(known.index, rtype, known.level)
        for a in attrs:
            if a.name == name and owner is not None and kind is not None:
                return Hover(attribute_markdown(owner, a, kind), span(an, s, e - s))
        return None
    fact = facts.fact_at(an, off, lambda name: name in features.visible_variables(an, off, an.node_locator))
    if fact is not None:
        custom = [fact.path[0]] if fact.path and known.index.lookup(fact.path[0], ("fact",)) else []
        text = facts.hover_markdown(fact, known.facts(), custom)
        if text is not None:
            return Hover(text, span(an, fact.start, fact.end - fact.start))
    hk = hiera.key_at(an, off)
    if hk is not None:
        key, s, e, param = hk
        text = hiera.hover_markdown(known.hiera(), key)
        if param is not None:  # the parameter itself first, then the data that sets it
            typ, dflt = features.expr_text(an, param.type_expr), features.expr_text(an, param.value)
            head = f"```puppet\n{typ + ' ' if typ else ''}${param.name}{' = ' + dflt if dflt else ''}\n```"
            if text is None:
                return None  # no data sets it: the plain parameter hover
            text = head + "\n\n" + text
        return Hover(text, span(an, s, e - s)) if text else None
    ref = world.reference_at(an, off, an.node_locator)
    if ref is None:
        return None
    kind, name, start, length = ref
    rng = span(an, start, length)
    if kind == "function":
        syms = world.functions_named(known.index, name, level=known.level)
        if syms and syms[0].origin != "puppet":
            return Hover(function_markdown(syms[0]), rng)
        return None
    if kind in ("class_or_define", "type"):
        if known.index.lookup(name, ("class", "define")):
            return None
        t = world.resource_type_named(known.index, name, known.level)
        if t is not None:
            return Hover(type_markdown(t), rng)
    return None


def _document_hover(an: Analysis, index: WorkspaceIndex, off: int) -> Hover | None:
    """Variables and parameters of the document, the workspace's manifests, the core tables."""
    ref = features.reference_at(an, off, an.node_locator)
    if ref is None:
        return None
    kind, name, node = ref
    text = None
    if kind == "variable":
        d = features.local_definition(an, ref, off, an.node_locator)
        if d is not None and type(d) is ast.Parameter:
            typ = features.src(an, d.type_expr)
            dflt = features.src(an, d.value)
            text = f"```puppet\n{(typ + ' ') if typ else ''}${d.name}{(' = ' + dflt) if dflt else ''}\n```\n(parameter)"
            owner = _owner_doc(an, d)
            if owner:
                pd = features.param_docs(owner).get(d.name)
                if pd:
                    text += "\n\n" + pd
        elif d is not None:
            text = (
                f"```puppet\n${name}\n```\n(variable, assigned at line {an.lines.position(d.offset)[0] + 1})"
            )
        elif "::" in name:
            cls, _, var = name.lstrip(":").rpartition("::")
            for s in index.lookup(cls, ("class",)):
                for p in s.params:
                    if p.name == var:
                        text = (
                            f"```puppet\n{p.type + ' ' if p.type else ''}${name}"
                            f"{' = ' + p.default if p.default else ''}\n```\n(parameter of class {s.name})"
                            + (f"\n\n{p.doc}" if p.doc else "")
                        )
    elif kind == "function" and name in tables.FUNCTIONS and not index.lookup(name, ("function",)):
        text = f"```puppet\n{tables.FUNCTIONS[name]}\n```\n(built-in function)"
    else:
        syms = lookup(index, kind, name)
        if syms:
            text = definition_markdown(syms[0])
        elif name.lower() in tables.RESOURCE_TYPES:
            desc, attrs = tables.RESOURCE_TYPES[name.lower()]
            text = f"**{name.lower()}** (core resource type)\n\n{desc}\n\nAttributes: " + ", ".join(attrs)
        elif kind == "type" and name in tables.DATA_TYPES:
            text = f"```puppet\n{name}\n```\n(built-in data type)"
    if text is None:
        return None
    return Hover(text, span(an, node.offset, node.length))


def _owner_doc(an: Analysis, param: ast.Parameter) -> str | None:
    for d in an.program.definitions if an.program is not None else ():
        if param in (getattr(d, "parameters", None) or []):
            doc: str = features.leading_comment(an.data, d.offset)
            return doc
    return None


# ----------------------------------------------------------------------------------------------- definition


def definition(
    an: Analysis, known: Knowledge, path: str | None, line: int, character: int
) -> list[Location] | None:
    """Where the name at (line, character) of the document at ``path`` is defined (None: nowhere
    known; a location's path None: that document)."""
    off = an.lines.offset(line, character)
    return _world_definition(an, known, off) or _document_definition(an, known.index, path, off)


def _world_definition(an: Analysis, known: Knowledge, off: int) -> list[Location] | None:
    at = world.attribute_at(an, off)
    if at is not None:
        return attribute_definition(an, known, at)
    hk = hiera.key_at(an, off)
    if hk is not None:
        locs = [Location(p, ((ln, c0), (ln, c1))) for p, ln, c0, c1, _v in hiera.find(known.hiera(), hk[0])]
        return locs or None
    fa = world.fact_at(an, off)
    if fa is not None:  # a module's custom fact: its lib/facter file
        locs = [Location(f.path, f.selection) for f in known.index.lookup(fa[0], ("fact",))]
        if locs:
            return locs
    ref = world.reference_at(an, off, an.node_locator)
    if ref is None:
        return None
    kind, name, _s, _l = ref
    syms: list[Sym] = []
    if kind == "function":
        syms = [
            s for s in world.functions_named(known.index, name, level=known.level) if s.origin != "puppet"
        ]
        if any(s.origin == "puppet" for s in known.index.lookup(name, ("function", "plan"))):
            return None
    elif kind in ("class_or_define", "type"):
        if known.index.lookup(name, ("class", "define")):
            return None
        t = world.resource_type_named(known.index, name, known.level)
        syms = [t] if t is not None else []
    for s in syms:  # the one Puppet would call
        loc = world.location_of(s)
        if loc is not None:
            return [Location(loc[0], loc[1])]
    return None


def attribute_definition(
    an: Analysis, known: Knowledge, at: tuple[str, str, int, int]
) -> list[Location] | None:
    """Where the attribute ``name =>`` of a resource body is declared: the parameter of the defined
    type (or of the class, for ``class { 'x': name => ... }``), in the workspace or this document; the
    attribute in a Ruby type's file where the index knows its line; else None."""
    rtype, name, start, _end = at
    if rtype == "class":
        rtype = world.resource_title(an.data, start) or rtype
    attrs, owner, kind = world.attributes_of(known.index, rtype, known.level)
    if owner is not None and kind == "type":
        if owner.origin == "builtin":  # a core type: its file in the installed Puppet
            ref = builtins.reference(owner.path, owner.name)
            attrs, owner = (ref.attrs, ref) if ref is not None else (attrs, owner)
        for a in attrs:
            if a.name == name and isinstance(a, Attr) and a.line >= 0 and owner.path:
                return [Location(owner.path, _ruby_attribute_span(owner.path, a.line, name))]
        return None
    kinds = ("class",) if at[0] == "class" else ("define",)
    local = [d for d in _definitions(an) if features.kind_name(d) in kinds and _named(d, rtype)]
    if local:  # this document's own definition first (it may not be saved yet)
        return _parameter_locations(an, None, local, name)
    for sym in known.index.lookup(rtype, kinds):
        other = _analysis_of_file(sym.path)
        if other is not None:
            found = [d for d in _definitions(other) if features.kind_name(d) in kinds and _named(d, rtype)]
            locs = _parameter_locations(other, sym.path, found, name)
            if locs:
                return locs
    return None


def _named(d: ast.Node, name: str) -> bool:
    return str(getattr(d, "name", "")).lower().lstrip(":") == name.lower().lstrip(":")


def _definitions(an: Analysis) -> list[ast.Node]:
    return list(an.program.definitions) if an.program is not None else []


def _parameter_locations(
    an: Analysis, path: str | None, defs: list[ast.Node], name: str
) -> list[Location] | None:
    locs = []
    for d in defs:
        for p in getattr(d, "parameters", None) or []:
            if p.name == name and p.offset is not None:
                text = an.data[p.offset : p.offset + p.length]
                k = text.find(b"$" + name.encode())
                start = p.offset + (k if k >= 0 else 0)
                locs.append(Location(path, span(an, start, len(name) + 1 if k >= 0 else p.length)))
    return locs or None


def _analysis_of_file(path: str) -> Analysis | None:
    """A plain parse of a manifest on disk (read by xpp.sources' rule), or None when it cannot be read
    or parsed."""
    from puppet_xpp.grammar.parser import parse
    from puppet_xpp.server.analysis.document import LineIndex
    from puppet_xpp.xpp.sources import read_source

    src = read_source(path)
    if not src.ok or src.text is None:
        return None
    try:
        res = parse(src.text, path, epp=False, tasks=False)
    except Exception:  # a parser bug costs this answer only
        return None
    if res.program is None:
        return None
    data = src.text.encode("utf-8", "surrogateescape")
    return Analysis(None, src.text, data, res.program, res.tokens, res.locator, [], [], LineIndex(data))


def _ruby_attribute_span(path: str, line: int, name: str) -> Span:
    """The attribute's name on its (0-based) line of a Ruby type (``newparam(:port``), or the line's
    start.  Columns in UTF-16 would only differ after non-ASCII text before the name."""
    from puppet_xpp.xpp.sources import read_source

    src = read_source(path)
    lines = (src.text or "").splitlines()
    text = lines[line] if 0 <= line < len(lines) else ""
    k = text.find(":" + name)
    k = k + 1 if k >= 0 else text.find(name)
    if k < 0:
        return ((line, 0), (line, 0))
    return ((line, k), (line, k + len(name)))


def _document_definition(
    an: Analysis, index: WorkspaceIndex, path: str | None, off: int
) -> list[Location] | None:
    ref = features.reference_at(an, off, an.node_locator)
    if ref is None:
        return None
    kind, name, _node = ref
    if kind == "variable":
        d = features.local_definition(an, ref, off, an.node_locator)
        if d is not None:
            return [Location(None, span(an, d.offset, d.length))]
        if "::" in name:
            cls = name.lstrip(":").rpartition("::")[0]
            return [Location(s.path, s.selection) for s in index.lookup(cls, ("class",))] or None
        return None
    # the current document first (it may not be saved yet)
    locs = []
    if an.program is not None:
        for d in an.program.definitions:
            if getattr(d, "name", "").lower().lstrip(":") == name.lower() and (
                kind in ("class_or_define", "type")
                or features.kind_name(d) == kind
                or (kind == "function" and features.kind_name(d) == "plan")
            ):
                so, sl = features.name_span(an, d)
                locs.append(Location(None, span(an, so, sl)))
    if locs:
        return locs
    return [Location(s.path, s.selection) for s in lookup(index, kind, name) if s.path != path] or None


# ----------------------------------------------------------------------------------------------- symbols


def document_symbols(an: Analysis) -> list[DocumentSymbol]:
    def conv(s: dict[str, Any]) -> DocumentSymbol:
        rng = span(an, *s["range"])
        sel = span(an, *s["selection"])
        if not (rng[0] <= sel[0] and sel[1] <= rng[1]):
            sel = rng
        return DocumentSymbol(
            s["name"] or "?", s["detail"] or None, s["kind"], rng, sel, [conv(c) for c in s["children"]]
        )

    return [conv(s) for s in features.document_symbols(an)]


def signature_help(an: Analysis, known: Knowledge, line: int, character: int) -> SignatureHelp | None:
    off = features.argument_start(an.data, an.lines.offset(line, character))
    res = world.signature_help(known.index, an, off, symbols_of(an, ""), known.level)
    if res is None:
        return None
    return SignatureHelp(
        [SignatureInformation(label, list(spans), doc or None) for label, spans, doc in res["signatures"]],
        res["active_signature"],
        res["active_parameter"],
    )


def local_symbols(an: Analysis) -> list[Sym]:
    """The document's own definitions as index entries ([] when they cannot be made)."""
    try:
        return symbols_of(an, "")
    except Exception:
        return []

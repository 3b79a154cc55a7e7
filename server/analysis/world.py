"""What the language server knows beyond the open file's Puppet code: Ruby-defined functions and
resource types of the indexed modules, Puppet's built-ins and the facts, and how they answer hover,
definition, signature help and completion contexts.  Plain data in, plain data out (no pygls
imports); server/lsp/ turns the answers into LSP objects.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Protocol, TypedDict

from puppet_xpp.grammar import ast
from puppet_xpp.server.analysis import builtins, features
from puppet_xpp.server.analysis.features import Analysed
from puppet_xpp.server.analysis.symbols import Attr, Param, Signature, Span, Sym

_ORDER = {"puppet": 0, "ruby4": 1, "ruby3": 2}


class SymbolIndex(Protocol):
    """What the world asks of the workspace index (server/analysis/index.py's WorkspaceIndex)."""

    def lookup(self, name: str, kinds: Iterable[str] | None = None) -> list[Sym]: ...


def functions_named(
    index: SymbolIndex, name: str, local: Iterable[Sym] = (), level: str | None = None
) -> list[Sym]:
    """Every definition of function `name`, in the order Puppet's loaders find them: its own built-in
    first (a module cannot replace one: stdlib's `length` is never called), then the Puppet
    language, 4.x and 3.x definitions of the modules.  `local`: the open document's own definitions
    (which the index may not hold yet), preferred to the index's."""
    key = name.lower().lstrip(":")
    syms = [s for s in local if s.key == key and s.kind in ("function", "plan")]
    syms += [s for s in index.lookup(key, ("function", "plan")) if not syms]
    syms.sort(key=lambda s: _ORDER.get(s.origin, 9))
    b = builtins.functions(level).get(key)
    return [b, *syms] if b is not None else syms


def resource_type_named(index: SymbolIndex, name: str, level: str | None = None) -> Sym | None:
    key = name.lower().lstrip(":")
    for s in index.lookup(key, ("resource_type",)):
        return s
    return builtins.types(level).get(key)


def attributes_of(
    index: SymbolIndex, rtype: str, level: str | None = None
) -> tuple[list[Attr] | list[Param], Sym | None, str | None]:
    """(attrs, owner Sym, kind) of a resource type: Ruby/core types' Attrs, or a define's/class's
    Params; kind is 'type' | 'define' | 'class' | None."""
    t = resource_type_named(index, rtype, level)
    if t is not None:
        return t.attrs, t, "type"
    for s in index.lookup(rtype, ("define", "class")):
        return s.params, s, s.kind
    return [], None, None


def signatures_of(sym: Sym) -> list[Signature]:
    if sym.signatures:
        return sym.signatures
    return [Signature(list(sym.params))] if sym.kind in ("function", "plan") else []


def doc_of(sym: Sym) -> str:
    """A symbol's documentation; a built-in's is read lazily from the installed Puppet."""
    if sym.doc or sym.origin != "builtin":
        return sym.doc
    ref = builtins.reference(sym.path, sym.name)
    return ref.doc if ref is not None else ""


def location_of(sym: Sym) -> tuple[str, Span] | None:
    """(path, selection) of a symbol's definition (built-ins: in the installed Puppet), or None."""
    if sym.origin == "builtin":
        ref = builtins.reference(sym.path, sym.name)
        return (sym.path, ref.selection) if ref is not None else None
    if not sym.path:
        return None
    return sym.path, sym.selection


def attribute_doc(sym: Sym, attr: Attr | Param) -> str:
    """An attribute's description (a built-in type's from the installed Puppet)."""
    if attr.doc or sym.origin != "builtin":
        return attr.doc
    ref = builtins.reference(sym.path, sym.name)
    for a in ref.attrs if ref is not None else ():
        if a.name == attr.name:
            return a.doc
    return ""


def summary(doc: str) -> str:
    """A doc's @summary (also when its text starts on the next line), else its first paragraph."""
    lines = doc.splitlines()
    for k, line in enumerate(lines):
        if line.strip().startswith("@summary"):
            rest = line.strip()[len("@summary") :].strip()
            for nxt in lines[k + 1 :]:
                if not nxt.strip() or nxt.strip().startswith("@"):
                    break
                rest += " " + nxt.strip()
            return rest.strip()
    return features.summary_of(doc)


# ----------------------------------------------------------------------------------------------- text contexts

_WORD_AT = re.compile(rb"(?:::)?[A-Za-z_][\w:]*")


def word_at(data: bytes, off: int) -> tuple[int, int, str]:
    """(start, end, word) of the identifier around byte offset `off` (word may be '')."""
    s = off
    while s > 0 and (data[s - 1 : s].isalnum() or data[s - 1 : s] in (b"_", b":")):
        s -= 1
    m = _WORD_AT.match(data, s)
    if m is None or m.end() < off:
        return off, off, ""
    return m.start(), m.end(), m.group().decode()


def reference_at(
    an: Analysed, off: int, locator: features.NodeLocator | None = None
) -> tuple[str, str, int, int] | None:
    """What the name at `off` refers to (features.reference_at), falling back to the text
    around it where the parser dropped the statement (a half-typed resource body):
    ``name {`` is a resource type, ``name(`` a function.  (kind, name, start, length) or None."""
    ref = features.reference_at(an, off, locator)
    if ref is not None:
        kind, name, node = ref
        return kind, name, node.offset, node.length
    s, e, w = word_at(an.data, off)
    if not w or w[0].isupper():
        return None
    nxt = an.data[e : e + 40].lstrip()
    if nxt.startswith(b"{"):
        return "class_or_define", w.lstrip(":"), s, e - s
    if nxt.startswith(b"("):
        return "function", w.lstrip(":"), s, e - s
    return None


def attribute_at(an: Analysed, off: int) -> tuple[str, str, int, int] | None:
    """(resource type, attribute, start, end) when `off` is on an attribute name (`name =>`) inside a
    resource body, else None."""
    s, e, w = word_at(an.data, off)
    if not w or "::" in w:
        return None
    if not re.match(rb"\s*(=>|\+>)", an.data[e : e + 40]):
        return None
    rtype = features.enclosing_resource_type(an.data, s)
    if rtype is None:
        return None
    return rtype, w, s, e


def resource_title(data: bytes, off: int) -> str | None:
    """The title of the resource body that encloses `off` (``class { 'x': ...``): 'x', or None."""
    depth = 0
    i = off - 1
    while i >= max(0, off - 20000):
        c = data[i : i + 1]
        if c in (b"}", b"]", b")"):
            depth += 1
        elif c in (b"{", b"[", b"("):
            if depth == 0:
                m = re.match(rb"\s*(['\"])((?:::)?[\w:]+)\1\s*:", data[i + 1 : off])
                return m.group(2).decode().lstrip(":") if m else None
            depth -= 1
        i -= 1
    return None


_LOOKUP_CTX = re.compile(r"\b(?:lookup|hiera|hiera_array|hiera_hash|hiera_include)\(\s*(['\"])([\w:.-]*)$")
_REF_CTX = re.compile(r"\b([A-Z][\w]*(?:::[A-Z]\w*)*)\[\s*(['\"])([^'\"]*)$")
_VALUE_CTX = re.compile(r"(\w+)\s*=>\s*(['\"]?)([\w:./-]*)$")
_FACTS_CTX = re.compile(r"\$(?:facts|::facts)((?:\[\s*['\"][\w.-]+['\"]\s*\])*)\[\s*(['\"])([\w.-]*)$")
_DIG_CTX = re.compile(r"\$facts\.dig\(\s*((?:['\"][\w.-]+['\"]\s*,\s*)*)(['\"])([\w.-]*)$")
_KEYS = re.compile(r"['\"]([\w.-]+)['\"]")


SpecialContext = (
    tuple[str, str, tuple[str, str]]  # ('value', prefix, (rtype, attribute))
    | tuple[str, str, list[str]]  # ('fact', prefix, keys so far)
    | tuple[str, str, str]  # ('title', prefix, type name)
    | tuple[str, str, None]  # ('hiera_key', prefix, None)
)


def special_context(an: Analysed, off: int) -> SpecialContext | None:
    """Completion contexts the generic analysis does not know:
    ('value', prefix, (rtype, attribute)) after `attr =>` in a resource body;
    ('fact', prefix, [keys so far]) inside ``$facts['…`` / ``$facts.dig('…``;
    ('title', prefix, type name) inside a resource reference ``Type['…``;
    ('hiera_key', prefix, None) in the key of ``lookup('…``; else None."""
    line_start = an.data.rfind(b"\n", 0, off) + 1
    before = an.data[line_start:off].decode("utf-8", "replace")
    m = _LOOKUP_CTX.search(before)
    if m:
        return "hiera_key", m.group(2), None
    m = _REF_CTX.search(before)
    if m:
        return "title", m.group(3), m.group(1).lower()
    for rx in (_FACTS_CTX, _DIG_CTX):
        m = rx.search(before)
        if m:
            return "fact", m.group(3), _KEYS.findall(m.group(1))
    m = _VALUE_CTX.search(before)
    if m:
        rtype = features.enclosing_resource_type(an.data, off - len(m.group(0).encode()))
        if rtype is not None:
            return "value", m.group(3), (rtype, m.group(1))
    return None


def fact_keys(keys: list[str], custom: Iterable[str] = ()) -> list[tuple[str, bool]]:
    """Next-level fact names below the key path `keys` ([]: top level): [(name, is_leaf)]."""
    out: dict[str, bool] = {}
    depth = len(keys)
    for name, legacy in list(builtins.facts().items()) + [(c, False) for c in custom]:
        if legacy and depth == 0:
            continue  # legacy names are top-scope variables, not $facts keys (they exist there too)
        parts = name.split(".")
        if parts[:depth] != keys or len(parts) <= depth:
            continue
        seg = parts[depth]
        leaf = len(parts) == depth + 1
        out[seg] = out.get(seg, False) or leaf
    return sorted(out.items())


def legacy_facts() -> list[str]:
    return sorted(k for k, legacy in builtins.facts().items() if legacy and "." not in k)


# ----------------------------------------------------------------------------------------------- signature help

_CALL_NAME = re.compile(rb"((?:::)?[a-z_][\w]*(?:::[a-z_]\w*)*)\s*$")


def call_at(data: bytes, off: int) -> tuple[str, int] | None:
    """(function name, active argument index) of the innermost unclosed ``name(`` before `off`, or
    None (also for a method call ``$x.name(``, whose receiver is the first argument: index + 1)."""
    depth = 0
    commas = 0
    for i, c in features.unquoted_back(data, off):
        if c in (b")", b"]", b"}"):
            depth += 1
        elif c in (b"[", b"{"):
            if depth == 0:
                return None
            depth -= 1
        elif c == b"(":
            if depth == 0:
                m = _CALL_NAME.search(data[max(0, i - 200) : i])
                if m is None:
                    return None
                name = m.group(1).decode()
                start = i - (len(m.group(0)))
                if name in ("if", "unless", "elsif", "case", "and", "or", "in", "node", "class", "define"):
                    return None
                method = data[start - 1 : start] == b"."
                return name, commas + (1 if method else 0)
            depth -= 1
        elif c == b"," and depth == 0:
            commas += 1
    return None


class SignatureHelp(TypedDict):
    signatures: list[tuple[str, list[tuple[int, int]], str]]  # (label, parameter spans in it, doc)
    active_signature: int
    active_parameter: int


def signature_help(
    index: SymbolIndex, an: Analysed, off: int, local: Iterable[Sym] = (), level: str | None = None
) -> SignatureHelp | None:
    """{'signatures': [(label, [(start, end) of each parameter in label], doc)], 'active_signature',
    'active_parameter'} for the call around `off`, or None."""
    hit = call_at(an.data, off)
    if hit is None:
        return None
    name, arg = hit
    syms = functions_named(index, name, local, level)
    if not syms:
        return None
    sym = syms[0]
    sigs = signatures_of(sym)
    if not sigs:
        return None
    doc = summary(doc_of(sym))
    out: list[tuple[str, list[tuple[int, int]], str]] = []
    active_sig = None
    active_par = 0
    for k, sg in enumerate(sigs):
        label = name + "("
        spans: list[tuple[int, int]] = []
        plain = [p for p in sg.params if p.kind not in ("block", "optional_block")]
        for j, p in enumerate(sg.params):
            if j:
                label += ", "
            star = "*" if p.kind == "repeated" else "&" if p.kind in ("block", "optional_block") else ""
            text = f"{p.type + ' ' if p.type else ''}{star}${p.name}"
            if p.kind == "optional":
                text += "?"
            spans.append((len(label), len(label) + len(text)))
            label += text
        label += ")" + (f" >> {sg.return_type}" if sg.return_type else "")
        out.append((label, spans, doc))
        rep = bool(plain) and plain[-1].kind == "repeated"
        if active_sig is None and (arg < len(plain) or rep):
            active_sig = k
            active_par = min(arg, len(plain) - 1) if plain else 0
    if active_sig is None:
        active_sig, active_par = 0, max(0, len(sigs[0].params) - 1)
    return {"signatures": out, "active_signature": active_sig, "active_parameter": active_par}


def resource_titles(an: Analysed, rtype: str) -> list[str]:
    """Titles (as written, unquoted) of the resources of type `rtype` declared in a document."""
    out: list[str] = []
    prog = an.program
    if prog is None or prog.body is None:
        return out
    stack: list[ast.Node] = [prog.body]
    while stack:
        n = stack.pop()
        if type(n) is ast.ResourceExpression:
            tn = getattr(n.type_name, "value", "")
            if str(tn).lower().lstrip(":") == rtype:
                for b in n.bodies:
                    vals = getattr(b.title, "values", None) or [b.title]  # an array title: each
                    for t in vals:
                        v = getattr(t, "value", None)
                        if isinstance(v, str) and v not in out:
                            out.append(v)
        stack.extend(n.children())
    return out


_FACT_REF = re.compile(rb"(?:\$facts\[\s*['\"]|\$facts\.dig\(\s*['\"]|\$::)$")


def fact_at(an: Analysed, off: int) -> tuple[str, int, int] | None:
    """(fact name, start, end) when `off` is on a top-level fact name: ``$facts['name']``,
    ``$facts.dig('name'…)`` or the top-scope variable ``$::name``; else None."""
    s, e, w = word_at(an.data, off)
    if not w:
        return None
    if w.startswith("::") and an.data[s - 1 : s] == b"$":
        return w[2:], s + 2, e
    if "::" in w or not _FACT_REF.search(an.data[max(0, s - 20) : s]):
        return None
    return w, s, e

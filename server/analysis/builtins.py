"""Puppet's own built-ins as the language server knows them: every built-in function with its
signatures, every core resource type with its attributes, allowed values and namevars, the
metaparameters, and Facter's core fact names; and Facter's own schema of its facts (types and
descriptions, ``data/facts.json``: :func:`fact_schema_entry`).

The facts come from ``data/builtins-<level>.json``, one per language level (grammar/levels.py:
level 8 from OpenVox 8.28.1, levels 7 and 7.23 from Debian's Puppet 7.23), generated at development
time by ``server/analysis/gen_builtins.rb`` (names, types and value lists only, no prose), so that the
server needs no Ruby at run time.  Reference text is read at run time from an installed Puppet when
there is one (:func:`reference`), with the same static Ruby reader as modules' functions.

The caches here (``functools.cache``) hold only what the shipped data files and the installed Puppet
say: a few entries per language level, never anything that grows with a workspace, so no session
needs to own or drop them.  No pygls imports here.
"""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Sequence
from typing import NotRequired, TypedDict, cast

from puppet_xpp.server.analysis.symbols import Attr, Param, Signature, Sym

DATA_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")
# language level -> the Puppet its data was generated from
DATA_FILES = {"8": "builtins-8.json", "7": "builtins-7.23.json", "7.23": "builtins-7.23.json"}

# where an installed Puppet's Ruby library may live (Debian, AIO agent, gems via RUBYLIB)
_PUPPET_LIBS = ("/usr/lib/ruby/vendor_ruby", "/opt/puppetlabs/puppet/lib/ruby/vendor_ruby")


# ----------------------------------------------------------------------------------------------- the JSON's shape
# (what gen_builtins.rb writes; keys a generator leaves out for a default are NotRequired)


class ParamData(TypedDict):
    name: str
    type: str | None
    kind: NotRequired[str]  # required | optional | repeated | block | optional_block


class SignatureData(TypedDict):
    params: list[ParamData]
    return_type: NotRequired[str | None]


class FunctionData(TypedDict):
    api: NotRequired[str]  # 4.x | 3.x
    signatures: NotRequired[list[SignatureData]]
    arity: NotRequired[int]  # 3.x: the count of arguments; negative: -(required + 1), the rest repeated
    rvalue: NotRequired[bool]  # 3.x: returns a value
    aliases: NotRequired[
        dict[str, str]
    ]  # 4.x: the type aliases its signatures name (its local types), as written


class AttributeData(TypedDict):
    kind: NotRequired[str]  # param | property
    values: NotRequired[list[str]]
    namevar: NotRequired[bool]


class TypeData(TypedDict):
    attributes: dict[str, AttributeData]
    namevars: NotRequired[list[str]]


class FactData(TypedDict, total=False):
    legacy: bool  # a legacy (top-scope variable) name
    os: list[str]


class BuiltinsData(TypedDict):
    generated_from: NotRequired[dict[str, str]]
    functions: dict[str, FunctionData]
    types: dict[str, TypeData]
    metaparameters: list[str]
    facts: dict[str, FactData]


def _level(level: str | None) -> str:
    """The data's language level for a requested one (unknown or None: the default level)."""
    from puppet_xpp.grammar.levels import DEFAULT_LEVEL

    return str(level) if str(level) in DATA_FILES else DEFAULT_LEVEL


@functools.cache
def _load(name: str) -> BuiltinsData:
    """One data file, read once (an unreadable file: no built-ins rather than no server)."""
    try:
        with open(os.path.join(DATA_DIR, name), encoding="utf-8") as f:
            return cast(BuiltinsData, json.load(f))
    except (OSError, ValueError):
        return {"functions": {}, "types": {}, "metaparameters": [], "facts": {}}


def data(level: str | None = None) -> BuiltinsData:
    """The generated data of a language level (None: the default level)."""
    return _load(DATA_FILES[_level(level)])


def _signature(s: SignatureData) -> Signature:
    return Signature(
        [Param(p["name"], p.get("type") or "", "", "", p.get("kind", "required")) for p in s["params"]],
        s.get("return_type") or "",
    )


def functions(level: str | None = None) -> dict[str, Sym]:
    """name -> Sym of the level's built-in functions (origin 'builtin'; path: the installed Puppet's
    file when present, else '')."""
    return _functions(_level(level))


@functools.cache
def _functions(level: str) -> dict[str, Sym]:
    out = {}
    for name, f in data(level)["functions"].items():
        sigs = [_signature(s) for s in f.get("signatures", ())]
        if not sigs and f.get("api") == "3.x":
            ar = f.get("arity", -1)
            ps = [Param(f"arg{i + 1}", "Any") for i in range(ar if ar >= 0 else -ar - 1)]
            if ar < 0:
                ps.append(Param("args", "Any", "", "", "repeated"))
            sigs = [Signature(ps, "Any" if f.get("rvalue") else "")]
        src = _installed(name, f.get("api", "4.x"), "function")
        out[name] = Sym(
            name, "function", src or "", ((0, 0), (0, 0)), ((0, 0), (0, 0)), "", [], "", sigs, [], "builtin"
        )
    return out


def function_aliases(name: str, level: str | None = None) -> dict[str, str]:
    """The type aliases a built-in 4.x function's signatures name -- its local types (``downcase``'s
    ``StringData``), which no workspace defines -- alias name -> the type it stands for, as written."""
    entry = data(level)["functions"].get(name)
    return dict(entry.get("aliases", {})) if entry is not None else {}


def types(level: str | None = None) -> dict[str, Sym]:
    """name -> Sym (kind 'resource_type', origin 'builtin') of the level's core resource types."""
    return _types(_level(level))


@functools.cache
def _types(level: str) -> dict[str, Sym]:
    out = {}
    for name, t in data(level)["types"].items():
        attrs = [
            Attr(a, v.get("kind", "param"), bool(v.get("namevar")), tuple(v.get("values", ())))
            for a, v in t["attributes"].items()
        ]
        src = _installed(name, "", "type")
        out[name] = Sym(
            name,
            "resource_type",
            src or "",
            ((0, 0), (0, 0)),
            ((0, 0), (0, 0)),
            "",
            [],
            "",
            [],
            attrs,
            "builtin",
        )
    return out


def metaparameters() -> tuple[str, ...]:
    return tuple(data().get("metaparameters", ()))


@functools.cache
def facts() -> dict[str, bool]:
    """Core fact name -> True when it is a legacy (top-scope variable) name.  Structured names are
    dotted (``os.family``)."""
    return {k: bool(v.get("legacy")) for k, v in data().get("facts", {}).items()}


# ----------------------------------------------------------------------------------------------- Facter's schema
# (data/facts.json, written by server/analysis/gen_facts.rb from the schema Facter ships)


class FactSchemaData(TypedDict):
    type: str  # integer | double | string | boolean | array | map | ip | ip6 | mac
    description: str
    hidden: NotRequired[bool]  # hidden from facter's output by default: a legacy name
    pattern: NotRequired[str]  # a dynamic name's regular expression (the name is then ``<what>``)
    elements: NotRequired[dict[str, FactSchemaData]]  # a map's known elements


FACTS_FILE = "facts.json"


@functools.cache
def fact_schema() -> dict[str, FactSchemaData]:
    """Facter's core facts by top-level name, as its schema documents them ({} when unreadable)."""
    try:
        with open(os.path.join(DATA_DIR, FACTS_FILE), encoding="utf-8") as f:
            return cast(dict[str, FactSchemaData], json.load(f).get("facts", {}))
    except (OSError, ValueError, AttributeError):
        return {}


def _schema_child(entries: dict[str, FactSchemaData], key: str) -> tuple[str, FactSchemaData] | None:
    """The schema entry ``key`` names among ``entries``: its own, else one whose pattern matches."""
    import re

    hit = entries.get(key)
    if hit is not None and "pattern" not in hit:
        return key, hit
    for name, entry in entries.items():
        pattern = entry.get("pattern")
        if pattern is not None:
            try:
                if re.fullmatch(pattern.strip("^$"), key):
                    return name, entry
            except re.error:
                continue
    return None


def fact_schema_entry(path: Sequence[str]) -> tuple[str, FactSchemaData] | None:
    """(the schema's name, entry) of the fact at key ``path`` (``["os", "family"]``: ``os.family``;
    dynamic names as the schema writes them: ``disks.<devicename>.size``), or None."""
    entries = fact_schema()
    names: list[str] = []
    entry: FactSchemaData | None = None
    for key in path:
        hit = _schema_child(entries, key)
        if hit is None:
            return None
        names.append(hit[0])
        entry = hit[1]
        entries = entry.get("elements", {})
    return (".".join(names), entry) if entry is not None else None


@functools.cache
def _puppet_lib() -> str | None:
    """The installed Puppet's Ruby library directory (RUBYLIB first), or None."""
    dirs = [d for d in os.environ.get("RUBYLIB", "").split(os.pathsep) if d] + list(_PUPPET_LIBS)
    for d in dirs:
        if os.path.isfile(os.path.join(d, "puppet", "functions.rb")):
            return d
    return None


def _installed(name: str, api: str, what: str) -> str | None:
    """The installed Puppet's Ruby file defining a built-in function or type (``what``), or None."""
    lib = _puppet_lib()
    if lib is None:
        return None
    if what == "type":
        p = os.path.join(lib, "puppet", "type", name + ".rb")
        return p if os.path.isfile(p) else None
    for sub in (("functions",), ("parser", "functions")) if api != "3.x" else (("parser", "functions"),):
        p = os.path.join(lib, "puppet", *sub, name + ".rb")
        if os.path.isfile(p):
            return p
    return None


@functools.lru_cache(maxsize=256)
def reference(path: str, name: str) -> Sym | None:
    """The Sym read from an installed Puppet's own Ruby file (docs, definition line), or None."""
    if not path:
        return None
    from puppet_xpp.server.analysis.ruby_index import index_ruby_source

    try:
        with open(path, "rb") as f:
            text = f.read()
    except OSError:
        return None
    p = path.replace(os.sep, "/")
    kind = "ruby3" if "/puppet/parser/functions/" in p else "ruby4" if "/puppet/functions/" in p else "type"
    for s in index_ruby_source(text, path, kind):
        if s.name == name:
            return s
    return None

"""Resource declarations: unknown resource types and classes, unknown parameters of classes, defined
types and Ruby/core types (metaparameters allowed, open types skipped), and missing required
parameters (no default -- whatever the type, as Puppet 7.23 does -- and for a class no Hiera value).

Puppet's words: ``Unknown resource type: 'x'``, ``Could not find declared class x``, ``Class[Foo]: has
no parameter named 'y'``, ``Foo::Bar[t]: expects a value for parameter 'x'``, ``no parameter named 'y' on
File[/x]``; the position is the resource expression's (a class's errors carry a column, a defined
type's and a Ruby type's the line only)."""

from __future__ import annotations

import re

from puppet_xpp.grammar import ast
from puppet_xpp.server.analysis import builtins
from puppet_xpp.server.analysis.deep import typecheck
from puppet_xpp.server.analysis.deep.codes import TITLE_PLACEHOLDER
from puppet_xpp.server.analysis.deep.context import Place
from puppet_xpp.server.analysis.deep.finding import Finding, make
from puppet_xpp.server.analysis.deep.internal import guarded
from puppet_xpp.server.analysis.deep.literals import (
    capitalized,
    literal_string,
    literal_strings,
    resource_ref,
)
from puppet_xpp.server.analysis.deep.names import ALWAYS_CLASSES, suggestions, unknown_name
from puppet_xpp.server.analysis.deep.world import Answers, key_of
from puppet_xpp.server.analysis.symbols import Param, Sym

__all__ = ["check_resource", "missing_class_parameters"]


def _meta() -> frozenset[str]:
    return frozenset(builtins.metaparameters())


def _ops(body: ast.ResourceBody) -> tuple[list[ast.AttributeOperation], bool]:
    """A body's attribute operations and whether it has a ``* =>`` splat (unknown names)."""
    named: list[ast.AttributeOperation] = []
    splat = False
    for op in body.operations:
        if type(op) is ast.AttributeOperation:
            named.append(op)
        else:
            splat = True
    return named, splat


@guarded
def check_resource(expr: ast.ResourceExpression, place: Place, answers: Answers) -> list[Finding]:
    """The findings of one resource expression (a bug inside: one ``DEEP_INTERNAL_ERROR`` at the
    resource, :mod:`server.analysis.deep.internal`)."""
    type_name = literal_string(expr.type_name)
    if type_name is None:
        return []
    key = key_of(type_name)
    path, off, ln = place.path, expr.offset, expr.length
    bodies = list(expr.bodies)
    defaults = [b for b in bodies if type(b.title) is ast.LiteralDefault]
    default_ops: list[ast.AttributeOperation] = []
    default_splat = False
    for b in defaults:
        named, splat = _ops(b)
        default_ops += named
        default_splat = default_splat or splat
    out: list[Finding] = []
    if key == "class":
        for body in bodies:
            if type(body.title) is ast.LiteralDefault:
                continue
            titles = literal_strings(body.title)
            for title in titles or ():
                cls_key = key_of(title)
                if cls_key in ALWAYS_CLASSES:
                    continue
                sym = answers.find_class(cls_key)
                if sym is None:
                    if not place.guarded:
                        found = unknown_name(
                            "declared_class", cls_key, path, off, ln, answers, place.complete
                        )
                        if found is not None:
                            out.append(found)
                    continue
                if expr.form != "regular":
                    continue
                out += _parameters(sym, body, default_ops, default_splat, f"Class[{capitalized(cls_key)}]", place, off, ln, True, answers)  # fmt: skip
        return out
    define = answers.find_define(key)
    if define is not None:
        if expr.form != "regular":
            return out
        for body in bodies:
            if type(body.title) is ast.LiteralDefault:
                continue
            titles = literal_strings(body.title)
            title = titles[0] if titles else TITLE_PLACEHOLDER
            if titles == []:
                continue
            out += _parameters(define, body, default_ops, default_splat, resource_ref(key, title), place, off, ln, False, answers)  # fmt: skip
        return out
    rtype = answers.find_resource_type(key)
    if rtype is not None:
        if _open(rtype):
            return out
        known = {a.name for a in rtype.attrs} | _meta() | {"name"}
        for body in bodies:
            if type(body.title) is ast.LiteralDefault:
                continue
            titles = literal_strings(body.title)
            if titles == []:
                continue
            ref = resource_ref(key, titles[0] if titles else TITLE_PLACEHOLDER)
            for op in _ops(body)[0]:
                if op.attribute_name not in known:
                    near = suggestions(op.attribute_name, sorted(known))
                    out.append(
                        make(
                            "DEEP_UNKNOWN_ATTRIBUTE",
                            path,
                            off,
                            ln,
                            {"suggestions": near, "param": op.attribute_name, "offset": op.offset},
                            param=op.attribute_name,
                            resource=ref,
                        )
                    )
        return out
    if answers.find_class(key) is not None or answers.resource_type_known(key) or place.guarded:
        return out  # (a class as a resource type is another error; a vendored type: its attributes unknown)
    found = unknown_name("resource_type", type_name, path, off, ln, answers, place.complete)
    return [found] if found is not None else []


def _open(sym: Sym) -> bool:
    """A type whose attributes cannot all be known (the Ruby reader's flag; no attributes read)."""
    return sym.open_attrs or not sym.attrs


def _parameters(
    sym: Sym,
    body: ast.ResourceBody,
    default_ops: list[ast.AttributeOperation],
    default_splat: bool,
    ref: str,
    place: Place,
    off: int,
    ln: int,
    is_class: bool,
    answers: Answers,
) -> list[Finding]:
    """Unknown and missing parameters of a class or defined type declared by one resource body."""
    named, splat = _ops(body)
    params = {p.name: p for p in sym.params}
    allowed = set(params) | _meta()
    if not is_class:
        allowed |= {"name", "title"}
    out: list[Finding] = []
    for op in named:
        if op.attribute_name not in allowed:
            near = suggestions(op.attribute_name, sorted(params))
            out.append(
                make(
                    "DEEP_UNKNOWN_PARAMETER",
                    place.path,
                    off,
                    ln,
                    {"suggestions": near, "param": op.attribute_name, "offset": op.offset},
                    column=is_class,
                    param=op.attribute_name,
                    resource=ref,
                )
            )
        else:
            p = params.get(op.attribute_name)
            if p is not None:
                phrases = typecheck.mismatches(p.type, op.value_expr, answers)
                if phrases:
                    out.append(
                        make(
                            "DEEP_WRONG_TYPE",
                            place.path,
                            off,
                            ln,
                            {"param": p.name, "offset": op.value_expr.offset},
                            column=is_class,
                            message=typecheck.parameter_error(ref, p.name, phrases),
                        )
                    )
    if splat or default_splat:
        return out
    given = {op.attribute_name for op in named} | {op.attribute_name for op in default_ops}
    if not is_class:
        out += _title_defaults(sym, body, given, ref, place, off, ln, answers)
    missing = [
        p.name
        for p in _required(sym.params)
        if p.name not in given and (not is_class or _hiera_lacks(sym, p, answers))
    ]
    unset: set[str] = set()
    if missing:  # (which defaults Puppet evaluates: those of the parameters provably not given)
        unset = {
            p.name
            for p in sym.params
            if p.name not in given and (not is_class or answers.hiera_has(f"{sym.key}::{p.name}") is False)
        }
    found = _missing(missing, ref, place, off, ln, is_class, sym.params, unset)
    if not is_class:  # (the file's pass drops these where the file sets resource defaults of the type)
        for f in found:
            f.data["defaults_type"] = sym.key
    return out + found


def _title_defaults(
    sym: Sym,
    body: ast.ResourceBody,
    given: set[str],
    ref: str,
    place: Place,
    off: int,
    ln: int,
    answers: Answers,
) -> list[Finding]:
    """A defined type's parameter not given whose default is ``$name``/``$title``: with a literal title
    its value is that title, and a type that rejects it is Puppet's error as for a given value."""
    title = body.title
    if title is None or type(title) not in (ast.LiteralString, ast.QualifiedName, ast.ConcatenatedString):
        return []
    if literal_string(title) is None:
        return []
    out = []
    for p in sym.params:
        if p.name in given or p.default.strip() not in ("$name", "$title"):
            continue
        phrases = typecheck.mismatches(p.type, title, answers)
        if phrases:
            out.append(
                make(
                    "DEEP_WRONG_TYPE",
                    place.path,
                    off,
                    ln,
                    {"param": p.name, "offset": title.offset},
                    column=False,
                    message=typecheck.parameter_error(ref, p.name, phrases),
                )
            )
    return out


_READS = re.compile(r"\$\{?([a-z_][A-Za-z0-9_]*)\b(?!::)")


def _missing(
    missing: list[str],
    ref: str,
    place: Place,
    off: int,
    ln: int,
    column: bool,
    params: list[Param],
    unset: set[str],
) -> list[Finding]:
    """One finding per missing parameter (``data['missing']``: all of them, for the quick fix) -- or,
    when the default of a parameter that is provably not given (``unset``) reads a missing one, the
    one error Puppet raises while it evaluates that default, before its check of the missing
    parameters: ``expects a value for parameter $b`` (the first such default, in parameter order)."""
    if not missing:
        return []
    for p in params:
        if p.default and p.name in unset:
            read = [name for name in _READS.findall(p.default) if name in missing]
            if read:
                return [
                    make(
                        "DEEP_MISSING_PARAMETER",
                        place.path,
                        off,
                        ln,
                        {"missing": missing, "param": read[0]},
                        column=column,
                        param=f"${read[0]}",
                        resource=ref,
                    )
                ]
    return [
        make(
            "DEEP_MISSING_PARAMETER",
            place.path,
            off,
            ln,
            {"missing": missing, "param": name},
            column=column,
            param=f"'{name}'",
            resource=ref,
        )
        for name in missing
    ]


def _required(params: list[Param]) -> list[Param]:
    """Parameters without a default: Puppet 7.23 requires a value for each whatever its type
    (``Optional[String] $x`` and ``Any $x`` too: "expects a value for parameter 'x'")."""
    return [p for p in params if p.kind == "required" and not p.default]


def _hiera_lacks(sym: Sym, p: Param, answers: Answers) -> bool:
    """Provably no Hiera value for the class parameter (``<class>::<param>``)."""
    return answers.hiera_has(f"{sym.key}::{p.name}") is False


def missing_class_parameters(sym: Sym, place: Place, off: int, ln: int, answers: Answers) -> list[Finding]:
    """``include``/``contain``/``require`` of a class whose required parameters no Hiera data gives."""
    missing = [p.name for p in _required(sym.params) if _hiera_lacks(sym, p, answers)]
    unset = {p.name for p in sym.params if _hiera_lacks(sym, p, answers)} if missing else set()
    found = _missing(missing, f"Class[{capitalized(sym.key)}]", place, off, ln, True, sym.params, unset)
    for f in found:  # (the file's pass drops these where the file declares the class with parameters)
        f.data["included"] = sym.key
    return found

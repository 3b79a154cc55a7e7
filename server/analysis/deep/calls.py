"""Function calls: unknown functions, wrong arity of functions with known signatures (4.x dispatches,
Puppet-language functions, 4.x built-ins), literals of the wrong type for a single-signature
function's parameter, and the classes ``include``/``contain``/``require`` name.

Puppet's words: ``Unknown function: 'x'.``, ``'f' expects between 1 and 2 arguments, got none`` (its
CountMismatch: the least restrictive range over every dispatch, reported only when every dispatch
rejects the count), ``Could not find class ::x``, ``Class[Foo]: expects a value for parameter 'x'``; the
position is the call's."""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Mapping

from puppet_xpp.grammar import ast
from puppet_xpp.server.analysis import builtins
from puppet_xpp.server.analysis.deep import typecheck
from puppet_xpp.server.analysis.deep.context import Place
from puppet_xpp.server.analysis.deep.finding import Finding, make
from puppet_xpp.server.analysis.deep.internal import guarded, swallowed
from puppet_xpp.server.analysis.deep.literals import class_names, literal_string
from puppet_xpp.server.analysis.deep.names import ALWAYS_CLASSES, unknown_name
from puppet_xpp.server.analysis.deep.params import missing_class_parameters
from puppet_xpp.server.analysis.deep.world import Answers, key_of
from puppet_xpp.server.analysis.symbols import Param, Signature, Sym

__all__ = ["arity_phrase", "check_call", "count_range"]

_CLASS_FUNCTIONS = frozenset({"include", "contain", "require"})
_PLAIN_KINDS = frozenset({"required", "optional", "repeated"})
_BLOCK_KINDS = frozenset({"block", "optional_block"})


def count_range(sig: Signature) -> tuple[int, float] | None:
    """(min, max) count of the arguments a signature takes (its block aside); None: a parameter kind
    we do not know."""
    lo = 0
    hi: float = 0
    for p in sig.params:
        if p.kind in _BLOCK_KINDS:
            continue
        if p.kind not in _PLAIN_KINDS:
            return None
        if p.kind == "required":
            lo += 1
            hi += 1
        elif p.kind == "optional":
            hi += 1
        else:
            hi = math.inf
    return lo, hi


def _range_text(lo: int, hi: float, zero: str) -> str:
    """Puppet's range_to_s."""
    if lo == hi:
        return zero if lo == 0 else str(lo)
    if lo == 0:
        return "unlimited" if hi == math.inf else f"at most {int(hi)}"
    if hi == math.inf:
        return f"at least {lo}"
    return f"between {lo} and {int(hi)}"


def arity_phrase(lo: int, hi: float) -> str:
    """``expects 2 arguments`` in Puppet's CountMismatch words."""
    suffix = "" if (lo == 1 and hi in (1, math.inf)) or (lo == 0 and hi == 1) else "s"
    return f"expects {_range_text(lo, hi, 'no')} argument{suffix}"


def _is_3x(sym: Sym, level: str | None) -> bool:
    if sym.origin == "ruby3":
        return True
    if sym.origin == "builtin":
        entry = builtins.data(level)["functions"].get(sym.name)
        return entry is not None and entry.get("api") == "3.x"
    return False


_DEF_CALL = re.compile(rb"^\s*def\s+(?:self\.)?call\s*\(", re.MULTILINE)


def _overrides_call(path: str) -> bool:
    """Does a Ruby 4.x function's file define its own ``call`` (stdlib's ``validate_legacy`` adds the
    scope to the arguments before dispatching): its dispatches do not say what a caller passes.
    (Cached while the file is unchanged.)"""
    from puppet_xpp.server.analysis.deep.hieraconf import stamp

    return _defines_call(path, stamp(path))


@functools.lru_cache(maxsize=1024)
def _defines_call(path: str, _stamp: tuple[tuple[int, int] | None, ...]) -> bool:
    from puppet_xpp.xpp.sources import read_bytes

    raw = read_bytes(path)
    return raw.data is None or _DEF_CALL.search(raw.data) is not None


def _signatures(sym: Sym) -> list[Signature]:
    if sym.signatures:
        return sym.signatures
    return (
        [Signature(list(sym.params))] if sym.kind in ("function", "plan") and sym.origin == "puppet" else []
    )


@guarded
def check_call(call: ast.CallExpression, place: Place, answers: Answers) -> list[Finding]:
    """The findings of one named function call or method call (a bug inside: one
    ``DEEP_INTERNAL_ERROR`` at the call, :mod:`server.analysis.deep.internal`)."""
    method = type(call) is ast.CallMethodExpression
    functor = call.functor_expr
    functor_receiver = None
    if method:
        if type(functor) is not ast.NamedAccessExpression:
            return []
        functor_receiver = functor.left_expr
        functor = functor.right_expr
    if type(functor) is not ast.QualifiedName:
        return []
    name = key_of(functor.value)
    path, off, ln = place.path, call.offset, call.length
    syms = answers.find_functions(name)
    if not syms:
        if place.tasks or place.guarded:
            return []
        found = unknown_name("function", name, path, off, ln, answers, place.complete)
        return [found] if found is not None else []
    sym = syms[0]
    out: list[Finding] = []
    args = list(call.arguments)
    if not method and name in _CLASS_FUNCTIONS and sym.origin == "builtin":
        out += _classes(args, place, off, ln, answers)
    if _is_3x(sym, answers.level) or any(type(a) is ast.UnfoldExpression for a in args):
        return out
    if sym.origin == "ruby4" and _overrides_call(sym.path):
        return out
    sigs = _signatures(sym)
    ranges = [count_range(s) for s in sigs]
    if not sigs or any(r is None for r in ranges):
        return out
    count = len(args) + (1 if method else 0)
    known = [r for r in ranges if r is not None]
    if all(not (lo <= count <= hi) for lo, hi in known):
        lo = min(r[0] for r in known)
        hi = max(r[1] for r in known)
        got = "none" if count == 0 else str(count)
        out.append(
            make(
                "DEEP_WRONG_ARITY",
                path,
                off,
                ln,
                {"min": lo, "max": None if hi == math.inf else int(hi), "got": count},
                name=functor.value.lstrip(":") if not method else name,
                expects=arity_phrase(lo, hi),
                got=got,
            )
        )
        return out
    receiver = [functor_receiver] if method and functor_receiver is not None else []
    # a built-in's own local types (downcase's StringData) resolve its signatures' alias names first
    local = builtins.function_aliases(name, answers.level) if sym.origin == "builtin" else {}
    if not method or receiver:
        out += _argument_types(sym, name, sigs, receiver + args, place, off, ln, answers, local)
        if not out:
            out += _block(
                name, sigs, receiver + args, call.lambda_ is not None, place, off, ln, answers, local
            )
    if not out and not method and name == "assert_type" and sym.origin == "builtin" and call.lambda_ is None:
        out += _assert_type(args, place, off, ln, answers)
    return out


def _assert_type(
    args: list[ast.Expression], place: Place, off: int, ln: int, answers: Answers
) -> list[Finding]:
    """``assert_type(T, literal)`` without a block, where T rejects the literal: the function's own
    error (Puppet's describer under the name ``assert_type():``)."""
    if len(args) != 2:
        return []
    spec: str | ast.Expression | None = args[0]
    if type(args[0]) not in (ast.QualifiedReference, ast.AccessExpression):
        spec = literal_string(args[0])  # (the type given as a string: assert_type('Integer', ...))
    if spec is None:
        return []
    try:
        from puppet_xpp.server.analysis.deep import types

        phrases = types.literal_mismatches(spec, args[1], typecheck.alias_resolver(answers))
    except Exception as e:  # a bug of the type model: no finding from it, reported (internal.guarded)
        swallowed(e)
        return []
    if not phrases or len(phrases) != 1:
        return []
    return [
        make(
            "DEEP_WRONG_TYPE",
            place.path,
            off,
            ln,
            {"offset": args[1].offset},
            message=f"assert_type(): {phrases[0]}",
        )
    ]


def _block(
    name: str,
    sigs: list[Signature],
    args: list[ast.Expression],
    given: bool,
    place: Place,
    off: int,
    ln: int,
    answers: Answers,
    local: Mapping[str, str],
) -> list[Finding]:
    """A lambda given to a function no signature of which takes a block, or none given where every
    signature requires one -- when a signature provably accepts the arguments (else Puppet reports
    those, not the block)."""
    takes = [any(p.kind in _BLOCK_KINDS for p in sig.params) for sig in sigs]
    needs = [any(p.kind == "block" for p in sig.params) for sig in sigs]
    if given and not any(takes):
        phrase = "does not expect a block"
    elif not given and all(needs):
        phrase = "expects a block"
    else:
        return []
    accepted = False
    for sig in sigs:
        r = count_range(sig)
        if r is None or not (r[0] <= len(args) <= r[1]):
            continue
        try:
            accepted = accepted or _first_rejected(sig, args, answers, local) is None
        except LookupError:
            continue
    if not accepted:
        return []
    return [make("DEEP_BLOCK", place.path, off, ln, {"block": given}, name=name, phrase=phrase)]


def _first_rejected(
    sig: Signature, args: list[ast.Expression], answers: Answers, local: Mapping[str, str]
) -> tuple[int, Param] | None:
    """The first argument a signature's parameter types provably reject, as Puppet's describer finds
    it: (index, parameter); None when the signature accepts them.  Raises LookupError when an
    argument cannot be judged (not a literal, a type we cannot decide)."""
    plain = [p for p in sig.params if p.kind not in _BLOCK_KINDS]
    if not plain:
        return None
    for k, arg in enumerate(args):
        p = plain[min(k, len(plain) - 1)]
        ok = typecheck.matches(p.type or "Any", arg, answers, local)
        if ok is None:
            raise LookupError(p.name)
        if not ok:
            return k, p
    return None


def _argument_types(
    sym: Sym,
    name: str,
    sigs: list[Signature],
    args: list[ast.Expression],
    place: Place,
    off: int,
    ln: int,
    answers: Answers,
    local: Mapping[str, str],
) -> list[Finding]:
    """A literal argument every signature rejects (each takes that many arguments).  When each rejects
    the same argument for a parameter of the same name, Puppet merges them into one phrase (``'length'
    parameter 'arg' expects a value of type Collection, String, or Binary, got Integer``); otherwise it
    lists each signature with what it rejected (``The function 'empty' was called with arguments it
    does not accept. It expects one of: ...``).  A mismatch of several phrases: no finding."""
    try:
        rejected = [_first_rejected(sig, args, answers, local) for sig in sigs]
    except LookupError:
        return []
    if not rejected or any(r is None for r in rejected):
        return []
    found = [r for r in rejected if r is not None]
    k, param = found[0]
    if len({i for i, _ in found}) == 1 and len({p.name for _, p in found}) == 1:
        # Puppet merges the signatures' mismatches of one parameter into one phrase (its describer's
        # merge, through the type model's)
        merged = typecheck.signatures_mismatch([(p.type, p.name) for _, p in found], args[k], answers, local)
        if merged is None:
            return []
        message = f"'{name}' {merged}"
    else:
        lines = [f"The function '{name}' was called with arguments it does not accept. It expects one of:"]
        for sig, (i, p) in zip(sigs, found):
            phrases = typecheck.mismatches(p.type, args[i], answers, local)
            shown = signature_string(sig)
            if not phrases or len(phrases) != 1 or shown is None:
                return []
            lines += [f"  ({shown})", f"    rejected: parameter '{p.name}' {phrases[0]}"]
        message = "\n".join(lines)
    return [
        make(
            "DEEP_WRONG_TYPE",
            place.path,
            off,
            ln,
            {"param": param.name, "offset": args[k].offset},
            message=message,
        )
    ]


def signature_string(sig: Signature) -> str | None:
    """A signature as Puppet's describer writes it in a rejection (``Collection coll, String sep?``);
    None when a type cannot be written as Puppet would."""
    from puppet_xpp.server.analysis.deep import types

    plain = [p for p in sig.params if p.kind not in _BLOCK_KINDS]
    blocks = [p for p in sig.params if p.kind in _BLOCK_KINDS]
    required = sum(1 for p in plain if p.kind == "required")
    parts = []
    for index, p in enumerate(plain):
        t = types.parse_type(p.type or "Any")
        if t is None:
            return None
        text = str(t)
        indicator = ""
        if p.kind == "repeated":
            indicator = "*"
        elif index + 1 > required:
            indicator = "?"
            if text.startswith("Optional[") and text.endswith("]"):
                text = text[len("Optional[") : -1]
        parts.append(f"{text} {p.name}{indicator}")
    for b in blocks:
        t = types.parse_type(b.type or "Callable")
        if t is None:
            return None
        parts.append(f"{t} {b.name}{'?' if b.kind == 'optional_block' else ''}")
    return ", ".join(parts)


def _classes(args: list[ast.Expression], place: Place, off: int, ln: int, answers: Answers) -> list[Finding]:
    out: list[Finding] = []
    for arg in args:
        names = class_names(arg)
        for cls, _node in names or ():
            key = key_of(cls)
            if not key or key in ALWAYS_CLASSES:
                continue
            sym = answers.find_class(key)
            if sym is None:
                if not place.guarded:
                    found = unknown_name("class", key, place.path, off, ln, answers, place.complete)
                    if found is not None:
                        out.append(found)
                continue
            out += missing_class_parameters(sym, place, off, ln, answers)
    return out

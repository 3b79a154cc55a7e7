"""Static validation of a parsed Puppet program: Puppet 7's ``Checker4_0`` (and ``TasksChecker`` with
``tasks=True``), with Puppet's issue codes, severities, messages, positions and order.

    from puppet_xpp.grammar.validator import validate
    diagnostics = validate(program, strict="warning", tasks=False, file="x.pp",
                           modulepath=["/etc/puppetlabs/code/modules"], manifest=None)

Every model element is visited in containment order (pre-order, Puppet's attribute order), after the
program itself and the module top-construct check, so the diagnostics come out in Puppet's order.  Each
element gets the ``check_<Class>`` method of its nearest class in the model hierarchy that has one; the
ancestors of the element are in ``self.path`` (``path[-1]`` is the parent).

Settings: ``level`` (``8`` | ``7`` | ``7.23``, see :mod:`grammar.levels`) selects Puppet 8's newer checker
or Puppet 7.23's; ``strict`` (``off`` | ``warning`` | ``error``, default: the level's) gives the severity
of DUPLICATE_KEY (``off`` drops it); ``tasks`` selects the tasks checker.  ``modulepath`` and ``manifest`` drive the module-location
checks (ILLEGAL_DEFINITION_LOCATION, ILLEGAL_TOP_CONSTRUCT_LOCATION), see :func:`namespace_for_file`.

Behaviour taken over from Puppet on purpose:

* a heredoc whose static text fails its ``:syntax`` checker (json, base64, pp, epp) stops the validation:
  Puppet raises that error at once, so it is the only diagnostic of the validator returned;
* the pp/epp heredoc checkers parse and validate the heredoc text the way Puppet does, and Puppet *logs*
  what that finds (warnings; errors when there are several) with positions relative to the heredoc text:
  those come first in the result, as ``validator_syntax.LoggedDiagnostic`` (no file offset);
* DUPLICATE_KEY compares keys with Ruby's ``eql?`` semantics as Puppet's literal evaluator does
  (``1`` and ``1.0`` differ; at level 7.23 type references, ``-1`` and other non-literals are never
  compared; the newer checker compares type references, ``X[...]`` and negated literals too);
* where the newer checker's evaluation makes Puppet fail with a Ruby error (``{-true => 1}``: no unary
  minus for ``true``), Puppet reports nothing usable; we report LITERAL_NEGATION_FAILS there and go on;
* unreachable checks of Puppet (MISSING_INDEX, which names an issue that does not exist) are left out.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterable
from typing import Any

from . import ast, levels
from .issues import ISSUES, Diagnostic
from .ruby import escape_slash, float_to_s
from .validator_labels import a_an, a_an_uc, article, label, the
from .validator_syntax import CHECKERS

__all__ = [
    "validate",
    "namespace_for_file",
    "NO_NAMESPACE",
    "BAD_MODULE_FILE",
    "idem",
    "contents",
    "literal_value",
    "literal_key",
    "ruby_to_s",
    "Checker",
    "TasksChecker",
]

_T: dict[str, Any] = ast.TYPES  # (the model classes are made at run time: typed loosely)
Program = _T["Program"]
Nop = _T["Nop"]
BlockExpression = _T["BlockExpression"]
ApplyBlockExpression = _T["ApplyBlockExpression"]
ApplyExpression = _T["ApplyExpression"]
HostClassDefinition = _T["HostClassDefinition"]
FunctionDefinition = _T["FunctionDefinition"]
NamedDefinition = _T["NamedDefinition"]
TypeAlias = _T["TypeAlias"]
TypeDefinition = _T["TypeDefinition"]
Definition = _T["Definition"]
NodeDefinition = _T["NodeDefinition"]
LambdaExpression = _T["LambdaExpression"]
VariableExpression = _T["VariableExpression"]
AccessExpression = _T["AccessExpression"]
LiteralList = _T["LiteralList"]
LiteralHash = _T["LiteralHash"]
QualifiedName = _T["QualifiedName"]
QualifiedReference = _T["QualifiedReference"]
LiteralInteger = _T["LiteralInteger"]
LiteralFloat = _T["LiteralFloat"]
LiteralNumber = _T["LiteralNumber"]
LiteralString = _T["LiteralString"]
LiteralBoolean = _T["LiteralBoolean"]
LiteralUndef = _T["LiteralUndef"]
LiteralDefault = _T["LiteralDefault"]
LiteralValue = _T["LiteralValue"]
LiteralRegularExpression = _T["LiteralRegularExpression"]
ConcatenatedString = _T["ConcatenatedString"]
TextExpression = _T["TextExpression"]
CollectExpression = _T["CollectExpression"]
RelationshipExpression = _T["RelationshipExpression"]
ResourceOverrideExpression = _T["ResourceOverrideExpression"]
AbstractResource = _T["AbstractResource"]
AttributesOperation = _T["AttributesOperation"]
UnaryExpression = _T["UnaryExpression"]
UnaryMinusExpression = _T["UnaryMinusExpression"]
ParenthesizedExpression = _T["ParenthesizedExpression"]
ComparisonExpression = _T["ComparisonExpression"]
BooleanExpression = _T["BooleanExpression"]
RenderStringExpression = _T["RenderStringExpression"]
AssignmentExpression = _T["AssignmentExpression"]
VirtualQuery = _T["VirtualQuery"]

MAX_INTEGER = 2**63 - 1
MIN_INTEGER = -(2**63)

# Puppet's name patterns (Ruby's \w is ASCII-only, hence re.ASCII); used with fullmatch (\A...\z).
_CLASSREF_DECL = re.compile(r"[a-z]\w*(?:::[a-z]\w*)*", re.ASCII)
_CLASSREF_EXT_DECL = re.compile(r"[A-Z]\w*(?:::[A-Z]\w*)*", re.ASCII)
_CLASSREF_EXT = re.compile(r"(?:(?:::)?[A-Z]\w*)+", re.ASCII)
_VAR_NAME = re.compile(r"(?:::)?(?:[a-z]\w*::)*[a-z_]\w*", re.ASCII)
_PARAM_NAME = re.compile(r"[a-z_]\w*", re.ASCII)
_NUMERIC_VAR_NAME = re.compile(r"0|[1-9][0-9]*")
_NUMERIC_PARAM = re.compile(r"(?:0x)?[0-9]+")
_ILLEGAL_HOSTNAME_CHARS = re.compile(r"[^-\w.]", re.ASCII)

RESERVED_TYPE_NAMES = frozenset(
    "type any unit scalar boolean numeric integer float collection array hash tuple struct variant optional "
    "enum regexp pattern runtime init object sensitive semver semverrange string timestamp timespan typeset".split()
)
FUTURE_RESERVED_WORDS = frozenset({"plan"})
RESERVED_PARAMETERS = frozenset({"name", "title"})

NO_NAMESPACE = "<no namespace>"
BAD_MODULE_FILE = "<bad module file>"
_MODULE_DIRS = frozenset({"manifests", "functions", "types", "plans"})


# ----------------------------------------------------------------------------------------------- model walk


def _containment(cls: Any) -> tuple[tuple[str, bool], ...]:
    """(attribute, is_list) of the contained attributes of a model class, in Puppet's content order."""
    out = []
    for f in cls._fields:
        if f in ("locator", "offset", "length") or (cls._name == "Program" and f == "definitions"):
            continue
        t = cls._types[f]
        names = re.findall(r"[A-Za-z]\w*", t)
        if any(n in _T and n != "Locator" for n in names):
            out.append((f, t.startswith("Array[")))
    return tuple(out)


_CONTAINMENT = {cls: _containment(cls) for cls in _T.values()}


def contents(node: Any) -> list[Any]:
    """The directly contained nodes of ``node`` in Puppet's order (``_pcore_contents``)."""
    out: list[Any] = []
    for f, is_list in _CONTAINMENT.get(type(node), ()):
        v = getattr(node, f)
        if v is None:
            continue
        if is_list:
            out.extend(x for x in v if isinstance(x, ast.Node))
        elif isinstance(v, ast.Node):
            out.append(v)
    return out


def _by_class(table: dict[str, Any], default: Any) -> Any:
    """A per-type resolver over a table keyed by model class name (nearest class in the hierarchy wins)."""
    cache: dict[type, Any] = {}

    def resolve(cls: type) -> Any:
        r = cache.get(cls, cache)
        if r is cache:
            r = default
            for k in cls.__mro__:
                name = k.__dict__.get("_name")
                if name in table:
                    r = table[name]
                    break
            cache[cls] = r
        return r

    return resolve


# ----------------------------------------------------------------------------------------------- idem


def _idem_block(o: Any) -> Any:
    return all(idem(s) for s in o.statements)


def _idem_if(o: Any) -> Any:
    return idem(o.test) and idem(o.then_expr) and idem(o.else_expr)


def _idem_case(o: Any) -> Any:
    return idem(o.test) and all(idem(opt) for opt in o.options)


def _idem_case_option(o: Any) -> Any:
    return all(idem(v) for v in o.values) and idem(o.then_expr)


_IDEM = _by_class(
    {
        "Nop": True,
        "Literal": True,
        "LiteralList": True,
        "LiteralHash": True,
        "AccessExpression": True,
        "BinaryExpression": True,
        "MatchExpression": False,
        "RelationshipExpression": False,
        "AssignmentExpression": False,
        "UnaryExpression": True,
        "ParenthesizedExpression": lambda o: idem(o.expr),
        "RenderExpression": False,
        "RenderStringExpression": False,
        "BlockExpression": _idem_block,
        "ConcatenatedString": True,
        "HeredocExpression": True,
        "SelectorExpression": True,
        "ApplyExpression": False,
        "IfExpression": _idem_if,
        "CaseExpression": _idem_case,
        "CaseOption": _idem_case_option,
    },
    False,
)


def idem(o: Any) -> bool:
    """True if evaluating ``o`` is known to have no effect (Puppet's 'idem' rule)."""
    if o is None:
        return True
    r = _IDEM(type(o))
    return bool(r(o) if callable(r) else r)


# ----------------------------------------------------------------------------------------------- literal keys


class _NotLiteral(Exception):
    pass


class _LiteralFailed(_NotLiteral):
    """Not literal because Puppet's own evaluation fails (already reported as LITERAL_NEGATION_FAILS)."""


class _DefaultValue:
    """Ruby's :default (the literal value of ``default``)."""

    __slots__ = ()


DEFAULT = _DefaultValue()


class RubyRegexp:
    __slots__ = ("source",)

    def __init__(self, source: Any) -> None:
        self.source = source


class RubyHash:
    """A Ruby Hash built from literal entries: ordered (key, value) pairs, later values win."""

    __slots__ = ("pairs",)

    def __init__(self, pairs: Any) -> None:
        self.pairs = pairs


class RubyError(Exception):
    """The newer checker's literal evaluation calls a Ruby method the value lacks (``-true``): Puppet 8
    fails with a Ruby ``NoMethodError`` there, so no Puppet diagnostic exists for it."""

    def __init__(self, node: Any, value: Any) -> None:
        super().__init__(value)
        self.node = node
        self.value = value


def _negate(node: Any, v: Any) -> Any:
    """Ruby's unary minus of a literal value: numbers negate, strings stay (``String#-@``), the rest fail."""
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return -v
    if isinstance(v, str):
        return v
    raise RubyError(node, v)


def literal_value(o: Any, newer: bool = False) -> Any:
    """The literal value of an expression as Puppet's LiteralEvaluator computes it.

    Strings (and names, and double-quoted strings without interpolation) → str, numbers → int/float,
    booleans → bool, undef → None, default → DEFAULT, regexes → RubyRegexp, arrays → list, hashes →
    RubyHash.  Puppet 7.23 (``newer`` False) raises _NotLiteral for anything else; the newer checker
    (Puppet 7.29+, 8) also evaluates type references (their downcased name), ``X[...]`` (the list of its
    literal keys, whatever ``X`` is, except a single list key) and unary minus (RubyError where Ruby has
    no such method).
    """
    if isinstance(o, (LiteralString, QualifiedName)):
        return o.value
    if isinstance(o, LiteralBoolean):
        return bool(o.value)
    if isinstance(o, (LiteralInteger, LiteralFloat)):
        return o.value
    if isinstance(o, LiteralUndef):
        return None
    if isinstance(o, LiteralDefault):
        return DEFAULT
    if isinstance(o, LiteralRegularExpression):
        v = o.value
        return RubyRegexp(getattr(v, "source", v))
    if isinstance(o, ConcatenatedString):
        segs = o.segments
        if len(segs) == 1 and isinstance(segs[0], LiteralString):
            return segs[0].value
        raise _NotLiteral
    if isinstance(o, LiteralList):
        return [literal_value(v, newer) for v in o.values]
    if isinstance(o, LiteralHash):
        out: dict[Any, Any] = {}
        for e in o.entries:
            k = literal_value(e.key, newer)
            v = literal_value(e.value, newer)
            ek = literal_key(k)
            out[ek] = (out[ek][0], v) if ek in out else (k, v)
        return RubyHash(list(out.values()))
    if newer:
        if isinstance(o, QualifiedReference):
            return o.value
        if isinstance(o, AccessExpression):
            if len(o.keys) == 1 and isinstance(o.keys[0], LiteralList):
                raise _NotLiteral
            return [literal_value(k, newer) for k in o.keys]
        if isinstance(o, UnaryMinusExpression):
            return _negate(o, literal_value(o.expr, newer))
    raise _NotLiteral


def literal_key(v: Any) -> Any:
    """A hashable key of a literal value such that keys are equal iff the Ruby values are ``eql?``."""
    if isinstance(v, str):
        return ("S", v)
    if isinstance(v, bool):
        return ("B", v)
    if isinstance(v, int):
        return ("I", v)
    if isinstance(v, float):
        return ("F", v)
    if v is None:
        return ("N",)
    if v is DEFAULT:
        return ("D",)
    if isinstance(v, RubyRegexp):
        return ("R", v.source)
    if isinstance(v, list):
        return ("L", tuple(literal_key(x) for x in v))
    if isinstance(v, RubyHash):
        return ("H", frozenset((literal_key(a), literal_key(b)) for a, b in v.pairs))
    raise TypeError(type(v))


_INSPECT_ESC = {
    "\n": "\\n",
    "\t": "\\t",
    "\r": "\\r",
    "\f": "\\f",
    "\v": "\\v",
    "\b": "\\b",
    "\a": "\\a",
    "\x1b": "\\e",
    '"': '\\"',
    "\\": "\\\\",
}


def _ruby_inspect_str(s: str) -> str:
    out = ['"']
    n = len(s)
    for i, c in enumerate(s):
        e = _INSPECT_ESC.get(c)
        if e is not None:
            out.append(e)
        elif c == "#" and i + 1 < n and s[i + 1] in "{$@":
            out.append("\\#")
        elif ord(c) < 0x20 or c == "\x7f":
            out.append(f"\\u{ord(c):04X}")
        else:
            out.append(c)
    out.append('"')
    return "".join(out)


def ruby_inspect(v: Any) -> str:
    """Ruby's ``inspect`` of a literal value."""
    if isinstance(v, str):
        return _ruby_inspect_str(v)
    if v is None:
        return "nil"
    if v is DEFAULT:
        return ":default"
    if isinstance(v, RubyRegexp):
        return "/" + escape_slash(v.source) + "/"
    if isinstance(v, list):
        return "[" + ", ".join(ruby_inspect(x) for x in v) + "]"
    if isinstance(v, RubyHash):
        return "{" + ", ".join(f"{ruby_inspect(a)}=>{ruby_inspect(b)}" for a, b in v.pairs) + "}"
    return ruby_to_s(v)


def ruby_to_s(v: Any) -> str:
    """Ruby's ``to_s`` of a literal value (what Puppet interpolates into the DUPLICATE_KEY message)."""
    if isinstance(v, str):
        return v
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return float_to_s(v)
    if v is None:
        return ""
    if v is DEFAULT:
        return "default"
    if isinstance(v, RubyRegexp):
        return "(?-mix:" + escape_slash(v.source) + ")"
    return ruby_inspect(v)


_RUBY_CLASS = {True: "TrueClass", False: "FalseClass"}


def _ruby_class(v: Any) -> str:
    """The Ruby class of a literal value (for the LITERAL_NEGATION_FAILS message)."""
    if isinstance(v, bool):
        return _RUBY_CLASS[v]
    if v is None:
        return "NilClass"
    if v is DEFAULT:
        return "Symbol"
    if isinstance(v, RubyRegexp):
        return "Regexp"
    if isinstance(v, list):
        return "Array"
    if isinstance(v, RubyHash):
        return "Hash"
    return type(v).__name__


def _ruby_model_class(o: Any) -> str:
    """``a_an`` of the Ruby class of a model object, as Puppet's label provider gives it for a Class."""
    name = f"Puppet::Pops::Model::{o._name}"
    return f"{article(name)} {name}"


# ----------------------------------------------------------------------------------------------- module layout


def _expand(path: str) -> str:
    return os.path.abspath(os.path.expanduser(path))


def namespace_for_file(file: Any, modulepath: Any = (), manifest: Any = None) -> str:
    """The namespace a module file may define names in (Puppet's rule, reproduced exactly).

    Returns NO_NAMESPACE when no location rule applies (no file, not a ``.pp`` file, the environment's
    manifest, outside every module-path directory), BAD_MODULE_FILE for a file of a module that is not in
    ``manifests``/``functions``/``types``/``plans``, else ``module[::dir...][::file]`` (downcased; a
    module's top ``init.pp`` gives just ``module``).
    """
    if not file:
        return NO_NAMESPACE
    if os.path.splitext(file)[1] != ".pp":
        return NO_NAMESPACE
    path = _expand(file)
    if manifest:
        m = _expand(manifest)
        if path == m or path.startswith(m):
            return NO_NAMESPACE
    rel = None
    for d in modulepath or ():
        parent = os.path.normpath(_expand(str(d))) + os.sep
        if path.startswith(parent):
            rel = path[len(parent) :]
            break
    if rel is None:
        return NO_NAMESPACE
    comps = rel.lower().split(os.sep)
    while comps and comps[-1] == "":
        comps.pop()
    if len(comps) < 2 or comps[1] not in _MODULE_DIRS:
        return BAD_MODULE_FILE
    names = [comps[0]] + comps[2:-1]
    filename = comps[-1]
    if not (len(comps) == 3 and filename == "init.pp"):
        names.append(filename[:-3])
    return "::".join(names)


# ----------------------------------------------------------------------------------------------- the checker


class _Abort(Exception):
    """A heredoc syntax checker failed: Puppet raises it at once and validation stops."""

    def __init__(self, diagnostic: Any) -> None:
        self.diagnostic = diagnostic


class Checker:
    """Puppet's Checker4_0."""

    tasks = False

    def __init__(
        self,
        *,
        strict: Any = None,
        file: Any = None,
        modulepath: Any = (),
        manifest: Any = None,
        level: Any = None,
    ) -> None:
        lv = levels.level(level)
        self.level = lv.name
        self.newer = lv.newer_checker
        self.strict = levels.resolve_strict(lv.name, strict)
        self.file = file
        self.modulepath = tuple(modulepath or ())
        self.manifest = manifest
        self.diagnostics: list[Diagnostic] = []
        self.logged: list[Diagnostic] = []  # what Puppet logs during validation (pp/epp heredoc checks)
        self.path: list[Any] = []
        self._namespace: str | None = None
        # where a node is, when its offset may be stale (the incremental parser moves statements
        # lazily: grammar.incremental_state._Positions.now); None: its offset
        self.offset_of: Any = None

    # -- reporting

    def accept(self, code: str, node: Any, **args: Any) -> None:
        if code == "DUPLICATE_KEY":
            if self.strict == "off":
                return
            severity = self.strict
        else:
            severity = ISSUES[code].severity
        if severity == "ignore":
            return
        length = getattr(node, "length", 0) or 0
        self.diagnostics.append(
            Diagnostic.make(code, self.where(node), length, args, severity, self.file or "")
        )

    def where(self, node: Any) -> Any:
        """The offset a diagnostic of node reports (offset_of's answer when one is set)."""
        offset = getattr(node, "offset", None)
        if offset is not None and self.offset_of is not None:
            offset = self.offset_of(node)
        return offset

    # -- driver

    def validate(self, program: Any) -> list[Diagnostic]:
        try:
            try:
                self._run(program, self._walk)
            except RecursionError:
                # a model nested deeper than Python's recursion limit: start again without recursion
                limit = sys.getrecursionlimit()
                sys.setrecursionlimit(max(limit, 50000))
                try:
                    self._run(program, self._walk_iteratively)
                finally:
                    sys.setrecursionlimit(limit)
        except _Abort as e:
            return self.logged + [e.diagnostic]
        return self.logged + self.diagnostics

    def _run(self, program: Any, walk: Any) -> None:
        self.diagnostics = []
        self.logged = []
        self.path = []
        self.check(program)
        self.check_top_construct_in_module(program)
        walk(program)

    def validate_part(self, node: Any, path: list[Any], stop: Any = frozenset()) -> tuple[Any, ...]:
        """Validate ``node`` and what is below it as validate() does where ``path`` (Program first)
        holds it, except below the nodes whose id() is in ``stop``: those are neither checked nor
        entered but returned with their path (the incremental parser keeps their diagnostics; for the
        Program, check_top_construct_in_module is the caller's).  Returns (logged, diagnostics, the
        diagnostic that aborted validation or None, [(stopped node, its path)])."""
        self.diagnostics = []
        self.logged = []
        self.path = path = list(path)
        stopped = []
        try:
            self.check(node)
            path.append(node)
            stack = [iter(contents(node))]
            while stack:
                child = next(stack[-1], None)
                if child is None:
                    stack.pop()
                    path.pop()
                elif id(child) in stop:
                    stopped.append((child, list(path)))
                else:
                    self.check(child)
                    kids = contents(child)
                    if kids:
                        path.append(child)
                        stack.append(iter(kids))
        except _Abort as e:
            return self.logged, self.diagnostics, e.diagnostic, stopped
        return self.logged, self.diagnostics, None, stopped

    @classmethod
    def _checks(cls) -> dict[type, Any]:
        """check method per model class (None when Puppet's check is a no-op), resolved once per checker class."""
        table: dict[type, Any] | None = cls.__dict__.get("_check_table")
        if table is None:
            table = {}
            for t in _T.values():
                m = None
                for k in t.__mro__:
                    name = k.__dict__.get("_name")
                    if name is not None:
                        m = getattr(cls, "check_" + name, None)
                        if m is not None:
                            break
                table[t] = m
            setattr(cls, "_check_table", table)  # noqa: B010 (set once per checker class)
        return table

    def _walk(self, node: Any) -> None:
        """Pre-order walk below ``node`` (recursive; the fast path)."""
        self._visit(node, self._checks(), _CONTAINMENT, self.path)

    def _visit(self, node: Any, checks: Any, cont: Any, path: list[Any]) -> None:
        # (a method, not a closure calling itself: that is a reference cycle holding the checker,
        # freed only by the cyclic GC, whose full passes pause the language server for 100-250 ms)
        path.append(node)
        for f, is_list in cont[type(node)]:
            v = getattr(node, f)
            if v is None:
                continue
            if is_list:
                for c in v:
                    t = type(c)
                    fn = checks[t]
                    if fn is not None:
                        fn(self, c)
                    if cont[t]:
                        self._visit(c, checks, cont, path)
            else:
                t = type(v)
                fn = checks[t]
                if fn is not None:
                    fn(self, v)
                if cont[t]:
                    self._visit(v, checks, cont, path)
        path.pop()

    def _walk_iteratively(self, root: Any) -> None:
        path = self.path
        path.append(root)
        stack = [iter(contents(root))]
        check = self.check
        while stack:
            child = next(stack[-1], None)
            if child is None:
                stack.pop()
                path.pop()
                continue
            check(child)
            kids = contents(child)
            if kids:
                path.append(child)
                stack.append(iter(kids))

    def check(self, o: Any) -> None:
        fn = self._checks().get(type(o))
        if fn is not None:
            fn(self, o)

    def container(self, index: Any = -1) -> Any:
        path = self.path
        return path[index] if -len(path) <= index < len(path) else None

    # -- top / placement

    def top(self, definition: Any, idx: Any = -1) -> None:
        while True:
            o = self.container(idx)
            idx -= 1
            if o is None or isinstance(o, (ApplyExpression, HostClassDefinition, Program)):
                return
            if isinstance(o, BlockExpression):
                c = self.container(idx)
                if not isinstance(c, Program) and isinstance(
                    definition, (FunctionDefinition, TypeAlias, TypeDefinition)
                ):
                    self.accept("NOT_ABSOLUTE_TOP_LEVEL", definition, value=a_an_uc(definition))
                    return
                continue
            self.accept("NOT_TOP_LEVEL", definition)
            return

    # -- assignment

    def assign(self, o: Any, via_index: Any = False) -> None:
        if isinstance(o, VariableExpression):
            e = o.expr
            name = e.value if isinstance(e, (QualifiedName, QualifiedReference)) else None
            if name is not None:
                if _NUMERIC_VAR_NAME.fullmatch(name):
                    self.accept("ILLEGAL_NUMERIC_ASSIGNMENT", o, varname=name)
                if "::" in name:
                    self.accept("CROSS_SCOPE_ASSIGNMENT", o, name=name)
        elif isinstance(o, AccessExpression):
            self.accept("ILLEGAL_INDEXED_ASSIGNMENT", o)
        elif isinstance(o, LiteralList):
            for x in o.values:
                self.assign(x)
        else:
            self.accept(
                "ILLEGAL_ASSIGNMENT_VIA_INDEX" if via_index else "ILLEGAL_ASSIGNMENT", o, value=a_an(o)
            )

    # -- rvalue / relation / query / hostname

    def rvalue(self, o: Any) -> None:
        while isinstance(o, UnaryExpression):
            o = o.expr
        if isinstance(o, (CollectExpression, Definition)):
            self.accept("NOT_RVALUE", o, value=a_an_uc(o))

    def relation(self, o: Any) -> None:
        if not isinstance(o, (CollectExpression, RelationshipExpression)):
            self.rvalue(o)

    def query(self, o: Any) -> None:
        if isinstance(o, ComparisonExpression):
            if o.operator not in ("==", "!="):
                self.accept("ILLEGAL_QUERY_EXPRESSION", o, expression=a_an_uc(o))
        elif isinstance(o, BooleanExpression):
            self.query(o.left_expr)
            self.query(o.right_expr)
        elif isinstance(o, ParenthesizedExpression):
            self.query(o.expr)
        elif isinstance(o, (VariableExpression, QualifiedName, LiteralNumber, LiteralString, LiteralBoolean)):
            pass
        else:
            self.accept("ILLEGAL_QUERY_EXPRESSION", o, expression=a_an_uc(o))

    def hostname(self, o: Any, semantic: Any) -> None:
        if isinstance(o, list):
            for x in o:
                self.hostname(x, semantic)
        elif isinstance(o, ConcatenatedString):
            segs = o.segments
            at = next((i for i, s in enumerate(segs) if isinstance(s, TextExpression)), None)
            if at is not None:
                self.accept("ILLEGAL_HOSTNAME_INTERPOLATION", segs[at].expr)
            elif len(segs) != 1:
                self.accept("ILLEGAL_HOSTNAME_INTERPOLATION", o)
            # else: Puppet matches the segment *object* against the pattern, which never matches
        elif isinstance(o, (LiteralNumber, LiteralRegularExpression, LiteralDefault)):
            pass
        elif isinstance(o, LiteralValue) and hasattr(o, "value"):
            v = o.value
            text = ("true" if v else "false") if isinstance(v, bool) else str(v)
            if _ILLEGAL_HOSTNAME_CHARS.search(text):
                self.accept("ILLEGAL_HOSTNAME_CHARS", o, hostname=text)
        else:
            self.accept(
                "ILLEGAL_EXPRESSION", o, expression=a_an_uc(o), feature="hostname", container=a_an(semantic)
            )

    # -- internal checks shared by several definitions

    def check_type_ref(self, o: Any, r: Any) -> None:
        if r is None:
            return
        n = r.left_expr if isinstance(r, AccessExpression) else r
        if isinstance(n, QualifiedReference):
            self.check_future_reserved_word(r, n.value)
        else:
            self.accept(
                "ILLEGAL_EXPRESSION", r, expression=a_an_uc(r), feature="a type reference", container=a_an(o)
            )

    def check_return_type(self, o: Any) -> None:
        if o.return_type is not None:
            self.check_type_ref(o, o.return_type)

    def check_no_idem_last(self, o: Any) -> None:
        body = o.body
        if isinstance(body, BlockExpression):
            last = body.statements[-1] if body.statements else None
            violator = last if idem(last) else None
        else:
            violator = body if idem(body) else None
        if violator is not None and not self.resource_without_title(violator):
            self.accept("IDEM_NOT_ALLOWED_LAST", violator, expression=label(violator), container=a_an_uc(o))

    def check_capture_last(self, o: Any) -> None:
        last = len(o.parameters) - 1
        for i, p in enumerate(o.parameters):
            if p.captures_rest and i != last:
                self.accept("CAPTURES_REST_NOT_LAST", p, param_name=p.name)

    def check_no_capture(self, o: Any, container: Any = None) -> None:
        container = o if container is None else container
        for p in o.parameters:
            if p.captures_rest:
                self.accept("CAPTURES_REST_NOT_SUPPORTED", p, container=a_an(container), param_name=p.name)

    def check_reserved_type_name(self, o: Any, name: Any) -> None:
        if name in RESERVED_TYPE_NAMES:
            self.accept("RESERVED_TYPE_NAME", o, name=name, expression=a_an(o))

    def check_future_reserved_word(self, o: Any, name: Any) -> None:
        if name in FUTURE_RESERVED_WORDS:
            self.accept("FUTURE_RESERVED_WORD", o, word=name)

    def check_reserved_params(self, o: Any) -> None:
        for p in o.parameters:
            if p.name in RESERVED_PARAMETERS:
                self.accept("RESERVED_PARAMETER", p, container=the(o), param_name=p.name)

    def check_parameter_name_uniqueness(self, o: Any) -> None:
        seen = set()
        for p in o.parameters:
            if p.name in seen:
                self.accept("DUPLICATE_PARAMETER", p, param_name=p.name)
            else:
                seen.add(p.name)

    def check_illegal_assignment(self, o: Any) -> None:
        if isinstance(o, AssignmentExpression):
            self.accept("ILLEGAL_ASSIGNMENT_CONTEXT", o)
        elif not isinstance(o, LambdaExpression):
            for c in contents(o):
                self.check_illegal_assignment(c)

    def namespace(self) -> str:
        if self._namespace is None:
            self._namespace = namespace_for_file(self.file, self.modulepath, self.manifest)
        return self._namespace

    def check_file_namespace(self, o: Any) -> None:
        if not self.file:
            return
        ns = self.namespace()
        if ns == NO_NAMESPACE:
            return
        if ns == BAD_MODULE_FILE or not o.name.lower().startswith(ns):
            self.accept("ILLEGAL_DEFINITION_LOCATION", o, name=o.name, file=self.file)

    def check_top_construct_in_module(self, prog: Any) -> None:
        if not isinstance(prog, Program) or prog.body is None:
            return
        if self.file is None or self.namespace() == NO_NAMESPACE:
            return
        body = prog.body
        if isinstance(body, Nop):
            return
        for s in body.statements if isinstance(body, BlockExpression) else (body,):
            if not (isinstance(s, Definition) and not isinstance(s, NodeDefinition)):
                self.accept("ILLEGAL_TOP_CONSTRUCT_LOCATION", s, value=label(s))

    def resource_without_title(self, o: Any) -> bool:
        if type(o) is BlockExpression:
            st = o.statements
            return len(st) == 2 and type(st[0]) is QualifiedName and type(st[1]) is LiteralHash
        return False

    # -- heredoc :syntax checkers

    def external_syntax(self, text: Any, syntax: Any, ref: Any) -> None:
        if not syntax:
            return
        segments = syntax.split("+")
        while segments and segments[-1] == "":
            segments.pop()
        checker = None
        while segments:
            checker = CHECKERS.get("+".join(segments))
            if checker is not None:
                break
            segments.pop(0)
        if checker is None:
            return
        problem, logged = checker(text, syntax, reparse=self.reparse)
        self.logged.extend(logged)
        if problem is not None:
            code, detail = problem
            severity = ISSUES[code].severity
            raise _Abort(
                Diagnostic.make(
                    code,
                    self.where(ref),
                    ref.length or 0,
                    {"syntax": syntax, "detail": detail},
                    severity,
                    self.file or "",
                )
            )

    def reparse(self, text: str, epp: bool) -> tuple[Any, list[Diagnostic]]:
        """Parse (and, when the parse succeeded, validate with this checker's settings) a pp/epp heredoc's
        text: the function the pp and epp syntax checkers are given (as Puppet registers its checkers),
        so that :mod:`validator_syntax` needs neither the parser nor this module."""
        from .parser import parse

        res = parse(text, file="", epp=epp, tasks=self.tasks)
        if res.program is None or any(d.severity == "error" for d in res.diagnostics):
            return res, []
        return res, validate(res.program, strict=self.strict, tasks=self.tasks, file="", level=self.level)

    # ------------------------------------------------------------------------------------------- checks

    def check_AssignmentExpression(self, o: Any) -> None:
        op = o.operator
        if op == "=":
            self.assign(o.left_expr)
            self.rvalue(o.right_expr)
        elif op in ("+=", "-="):
            self.accept("APPENDS_DELETES_NO_LONGER_SUPPORTED", o, operator=op)
        else:
            self.accept("UNSUPPORTED_OPERATOR", o, operator=op)

    def check_AttributeOperation(self, o: Any) -> None:
        if o.operator == "+>":
            p = self.container()
            if not isinstance(p, (CollectExpression, ResourceOverrideExpression)):
                self.accept("ILLEGAL_ATTRIBUTE_APPEND", o, name=o.attribute_name, parent=a_an(p))
        self.rvalue(o.value_expr)

    def check_AttributesOperation(self, o: Any) -> None:
        p = self.container()
        if not isinstance(p, (AbstractResource, CollectExpression)):
            parent2 = o if p is None else self.container(-2)
            if not isinstance(parent2, AbstractResource):
                self.accept("UNSUPPORTED_OPERATOR_IN_CONTEXT", parent2, operator="* =>", value=a_an(parent2))
        self.rvalue(o.expr)

    def check_BinaryExpression(self, o: Any) -> None:
        self.rvalue(o.left_expr)
        self.rvalue(o.right_expr)

    def check_BlockExpression(self, o: Any) -> None:
        if self.resource_without_title(o):
            self.accept("RESOURCE_WITHOUT_TITLE", o, name=o.statements[0].value)
        else:
            for s in o.statements[:-1]:
                if idem(s):
                    self.accept("IDEM_EXPRESSION_NOT_LAST", s, expression=label(s))
                    break

    def check_CallNamedFunctionExpression(self, o: Any) -> None:
        f = o.functor_expr
        if isinstance(f, QualifiedReference) or (
            isinstance(f, AccessExpression) and isinstance(f.left_expr, QualifiedReference)
        ):
            return
        if isinstance(f, QualifiedName):
            return
        if isinstance(f, RenderStringExpression):
            self.accept("ILLEGAL_EPP_PARAMETERS", o)
        else:
            self.accept(
                "ILLEGAL_EXPRESSION", f, expression=a_an_uc(f), feature="function name", container=a_an(o)
            )

    def check_EppExpression(self, o: Any) -> None:
        p = self.container()
        if isinstance(p, LambdaExpression):
            self.check_no_capture(p, o)
            self.check_parameter_name_uniqueness(p)

    def check_HeredocExpression(self, o: Any) -> None:
        e = o.text_expr
        if isinstance(e, LiteralString):
            self.external_syntax(e.value, o.syntax, e)

    def check_CaseExpression(self, o: Any) -> None:
        self.rvalue(o.test)
        found = False
        for option in o.options:
            for v in option.values:
                if isinstance(v, LiteralDefault):
                    if found:
                        self.accept("DUPLICATE_DEFAULT", v, container=label(o))
                    found = True

    def check_CaseOption(self, o: Any) -> None:
        for v in o.values:
            self.rvalue(v)

    def check_CollectExpression(self, o: Any) -> None:
        if not isinstance(o.type_expr, QualifiedReference):
            self.accept(
                "ILLEGAL_EXPRESSION",
                o.type_expr,
                expression=a_an_uc(o.type_expr),
                feature="type name",
                container=a_an(o),
            )

    def check_NamedAccessExpression(self, o: Any) -> None:
        name = o.right_expr
        if not isinstance(name, QualifiedName):
            self.accept(
                "ILLEGAL_EXPRESSION",
                name,
                expression=a_an_uc(name),
                feature="function name",
                container=a_an(self.container()),
            )

    def check_NamedDefinition(self, o: Any) -> None:
        self.top(o)
        if not _CLASSREF_DECL.fullmatch(o.name):
            self.accept("ILLEGAL_DEFINITION_NAME", o, name=o.name, value=a_an(o))
        self.check_file_namespace(o)
        self.check_reserved_type_name(o, o.name)
        self.check_future_reserved_word(o, o.name)

    def check_TypeAlias(self, o: Any) -> None:
        self.top(o)
        if not _CLASSREF_EXT_DECL.fullmatch(o.name):
            self.accept("ILLEGAL_DEFINITION_NAME", o, name=o.name, value=a_an(o))
        self.check_reserved_type_name(o, o.name)
        self.check_type_ref(o, o.type_expr)

    def check_TypeMapping(self, o: Any) -> None:
        self.top(o)
        lhs = o.type_expr
        kind = 0
        if isinstance(lhs, AccessExpression):
            left = lhs.left_expr
            if isinstance(left, QualifiedReference) and left.cased_value == "Runtime":
                kind = 1
                if len(lhs.keys) == 2 and _pattern_with_replacement(lhs.keys[1]):
                    kind = 2
        if kind == 0:
            self.accept("UNSUPPORTED_EXPRESSION", o, expression=a_an(o))
            return
        rhs = o.mapping_expr
        single = dict(expected="Type", expression=a_an_uc(o))
        regexp = dict(expected="Tuple[Regexp,String]", expression=a_an_uc(o))
        if _pattern_with_replacement(rhs):
            if kind == 1:
                self.accept("ILLEGAL_TYPE_MAPPING", o, **single)
        elif _type_ref(rhs):
            if kind == 2:
                self.accept("ILLEGAL_TYPE_MAPPING", o, **regexp)
        else:
            self.accept("ILLEGAL_TYPE_MAPPING", o, **(single if kind == 1 else regexp))

    def check_TypeDefinition(self, o: Any) -> None:
        self.top(o)
        self.check_reserved_type_name(o, o.name)
        self.accept("UNSUPPORTED_EXPRESSION", o, expression=a_an(o))

    def check_FunctionDefinition(self, o: Any) -> None:
        self.check_NamedDefinition(o)
        self.check_return_type(o)
        self.check_parameter_name_uniqueness(o)

    def check_HostClassDefinition(self, o: Any) -> None:
        self.check_ResourceTypeDefinition(o)
        if self.newer:
            self.check_parameter_type_literal(o)

    def check_ResourceTypeDefinition(self, o: Any) -> None:
        self.check_NamedDefinition(o)
        self.check_no_capture(o)
        self.check_parameter_name_uniqueness(o)
        self.check_reserved_params(o)
        self.check_no_idem_last(o)

    def check_parameter_type_literal(self, o: Any) -> None:
        """The newer checker: a class parameter's type must be a literal (Puppet 7.29+, a deprecation)."""
        for p in o.parameters:
            t = p.type_expr
            if t is None:
                continue
            try:
                value = self.literal(t)
            except _LiteralFailed:
                continue  # Puppet stops with a Ruby error here, reported as such
            except _NotLiteral:
                value = None
            if value is None:
                self.accept(
                    "ILLEGAL_NONLITERAL_PARAMETER_TYPE", p, name=p.name, type_class=_ruby_model_class(t)
                )

    def check_IfExpression(self, o: Any) -> None:
        self.rvalue(o.test)

    def check_KeyedEntry(self, o: Any) -> None:
        self.rvalue(o.key)
        self.rvalue(o.value)

    def check_LambdaExpression(self, o: Any) -> None:
        self.check_capture_last(o)
        self.check_return_type(o)

    def check_LiteralList(self, o: Any) -> None:
        for v in o.values:
            self.rvalue(v)

    def check_LiteralInteger(self, o: Any) -> None:
        v = o.value
        if v < MIN_INTEGER or v > MAX_INTEGER:
            hexv = ("+" if v >= 0 else "-") + hex(abs(v))
            self.accept(
                "NUMERIC_OVERFLOW", o, expression=a_an_uc(o), bound="max" if v > 0 else "min", value=hexv
            )

    def literal(self, o: Any) -> Any:
        """literal_value at this checker's level; a Ruby failure of Puppet's evaluation is reported here
        (Puppet itself stops validating with a Ruby error) and treated as not literal."""
        try:
            return literal_value(o, self.newer)
        except RubyError as e:
            v = e.value
            self.accept(
                "LITERAL_NEGATION_FAILS",
                e.node,
                value=ruby_inspect(v),
                ruby_class=_ruby_class(v),
                puppet=levels.level(self.level).puppets,
            )
            raise _LiteralFailed from None

    def check_LiteralHash(self, o: Any) -> None:
        seen = set()
        for entry in o.entries:
            try:
                v = self.literal(entry.key)
            except _NotLiteral:
                continue
            k = literal_key(v)
            if k in seen:
                self.accept("DUPLICATE_KEY", entry, key=ruby_to_s(v))
            else:
                seen.add(k)

    def check_NodeDefinition(self, o: Any) -> None:
        self.hostname(o.host_matches, o)
        self.top(o)
        self.check_no_idem_last(o)
        if o.parent is not None:
            self.accept("ILLEGAL_NODE_INHERITANCE", o.parent)

    def check_QualifiedName(self, o: Any) -> None:
        pass

    def check_QualifiedReference(self, o: Any) -> None:
        if not _CLASSREF_EXT.fullmatch(o.cased_value):
            self.accept("ILLEGAL_CLASSREF", o, name=o.cased_value)

    def check_QueryExpression(self, o: Any) -> None:
        if o.expr is not None:
            self.query(o.expr)

    def check_RelationshipExpression(self, o: Any) -> None:
        self.relation(o.left_expr)
        self.relation(o.right_expr)

    def check_Parameter(self, o: Any) -> None:
        if _NUMERIC_PARAM.fullmatch(o.name):
            self.accept("ILLEGAL_NUMERIC_PARAMETER", o, name=o.name)
        if not _PARAM_NAME.fullmatch(o.name):
            self.accept("ILLEGAL_PARAM_NAME", o, name=o.name)
        if o.value is not None:
            self.check_illegal_assignment(o.value)

    def check_ResourceExpression(self, o: Any) -> None:
        t = o.type_name
        if o.form and o.form != "regular" and isinstance(t, QualifiedName) and t.value == "class":
            self.accept("CLASS_NOT_VIRTUALIZABLE", o)

    def check_ResourceBody(self, o: Any) -> None:
        seen = False
        for op in o.operations:
            if isinstance(op, AttributesOperation):
                if seen:
                    self.accept("MULTIPLE_ATTRIBUTES_UNFOLD", op)
                else:
                    seen = True

    def check_ResourceDefaultsExpression(self, o: Any) -> None:
        if o.form != "regular":
            self.accept("NOT_VIRTUALIZEABLE", o)

    check_ResourceOverrideExpression = check_ResourceDefaultsExpression

    def check_ReservedWord(self, o: Any) -> None:
        if o.future:
            self.accept("FUTURE_RESERVED_WORD", o, word=o.word)
        else:
            self.accept("RESERVED_WORD", o, word=o.word)

    def check_SelectorExpression(self, o: Any) -> None:
        self.rvalue(o.left_expr)
        defaults = [s for s in o.selectors if isinstance(s.matching_expr, LiteralDefault)]
        if len(defaults) > 1:
            self.accept("DUPLICATE_DEFAULT", defaults[1].matching_expr, container=label(o))

    def check_SelectorEntry(self, o: Any) -> None:
        self.rvalue(o.matching_expr)

    def check_UnaryExpression(self, o: Any) -> None:
        self.rvalue(o.expr)

    check_UnlessExpression = check_IfExpression

    def check_VariableExpression(self, o: Any) -> None:
        e = o.expr
        if isinstance(e, LiteralInteger):
            return
        if not isinstance(e, QualifiedName):
            self.accept("ILLEGAL_EXPRESSION", o, expression=a_an_uc(o), feature="name", container=a_an(o))
            return
        name = e.value
        if name[:1].isdigit() and name[:1].isascii():
            if not _NUMERIC_VAR_NAME.fullmatch(name):
                self.accept("ILLEGAL_NUMERIC_VAR_NAME", o, name=name)
        elif not _VAR_NAME.fullmatch(name):
            self.accept("ILLEGAL_VAR_NAME", o, name=name)


def _pattern_with_replacement(o: Any) -> bool:
    if isinstance(o, LiteralList):
        v = o.values
        return len(v) == 2 and isinstance(v[0], LiteralRegularExpression) and isinstance(v[1], LiteralString)
    return False


def _type_ref(o: Any) -> bool:
    if isinstance(o, AccessExpression):
        o = o.left_expr
    return isinstance(o, QualifiedReference)


def _apply_only(name: str) -> Any:  # (a method once set in the class body)
    """A TasksChecker check: Checker's ``name`` inside an ``apply`` block, else the expression is illegal."""
    base = getattr(Checker, name)

    def check(self: TasksChecker, o: Any) -> None:
        if self.in_apply():
            base(self, o)
        else:
            self.illegal_tasks_expression(o)

    check.__name__ = name
    return check


class TasksChecker(Checker):
    """Puppet's TasksChecker: catalog expressions are only allowed inside ``apply`` blocks."""

    tasks = True

    def in_apply(self) -> bool:
        path = self.path
        for o in path[:0:-1]:  # ancestors below the program root, innermost first
            if isinstance(o, ApplyBlockExpression):
                return True
        return False

    def illegal_tasks_expression(self, o: Any) -> None:
        self.accept("EXPRESSION_NOT_SUPPORTED_WHEN_SCRIPTING", o, expr=a_an_uc(o))

    def check_CollectExpression(self, o: Any) -> None:
        if self.in_apply():
            if isinstance(o.query, VirtualQuery):
                Checker.check_CollectExpression(self, o)
            else:
                self.accept("EXPRESSION_NOT_SUPPORTED_WHEN_COMPILING", o, expr=a_an_uc(o))
        else:
            self.illegal_tasks_expression(o)

    def check_HostClassDefinition(self, o: Any) -> None:
        self.illegal_tasks_expression(o)

    check_ResourceTypeDefinition = check_HostClassDefinition

    check_NodeDefinition = _apply_only("check_NodeDefinition")
    check_RelationshipExpression = _apply_only("check_RelationshipExpression")
    check_ResourceDefaultsExpression = _apply_only("check_ResourceDefaultsExpression")
    check_ResourceExpression = _apply_only("check_ResourceExpression")
    check_ResourceOverrideExpression = _apply_only("check_ResourceOverrideExpression")

    def check_ApplyExpression(self, o: Any) -> None:
        if self.in_apply():
            self.accept("EXPRESSION_NOT_SUPPORTED_WHEN_COMPILING", o, expr=a_an_uc(o))

    def resource_without_title(self, o: Any) -> bool:
        return False


def validate(
    program: Any,
    *,
    strict: str | None = None,
    tasks: bool = False,
    file: str | None = None,
    modulepath: Iterable[str] = (),
    manifest: str | None = None,
    level: str | None = None,
) -> list[Diagnostic]:
    """Validate a parsed program; returns the diagnostics in Puppet's order.

    ``level`` is the language level (:mod:`grammar.levels`: ``8`` by default, ``7``, ``7.23``): it selects
    the checker and, when ``strict`` is None, the severity of DUPLICATE_KEY.

    ``file`` defaults to the program's locator file; it names the file in diagnostics and drives the
    module-location checks together with ``modulepath`` (directories) and ``manifest`` (the environment's
    manifest file or directory, exempt from those checks).
    """
    if program is None:
        return []
    if file is None:
        loc = getattr(program, "locator", None)
        file = getattr(loc, "file", None) or None
    cls = TasksChecker if tasks else Checker
    checker = cls(strict=strict, file=file, modulepath=modulepath, manifest=manifest, level=level)
    return checker.validate(program)

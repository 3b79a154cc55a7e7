"""The checks several node kinds share (Puppet's checker calls them from its per-node checks): placement
at the top, assignment targets, rvalues, collection queries, host names, type references, parameters,
reserved names, the last expression of a body, the module-location rules, and the heredoc ``:syntax``
checkers (:mod:`puppet_xpp.grammar.validator.syntax`), which stop the validation when they fail.
"""

from __future__ import annotations

import re
from typing import Any

from puppet_xpp.grammar.issues import ISSUES, Diagnostic
from puppet_xpp.grammar.validator.labels import a_an, a_an_uc, label, the
from puppet_xpp.grammar.validator.location import BAD_MODULE_FILE, NO_NAMESPACE, namespace_for_file
from puppet_xpp.grammar.validator.model import (
    AccessExpression,
    ApplyExpression,
    AssignmentExpression,
    BlockExpression,
    BooleanExpression,
    CollectExpression,
    ComparisonExpression,
    ConcatenatedString,
    Definition,
    FunctionDefinition,
    HostClassDefinition,
    LambdaExpression,
    LiteralBoolean,
    LiteralDefault,
    LiteralHash,
    LiteralList,
    LiteralNumber,
    LiteralRegularExpression,
    LiteralString,
    LiteralValue,
    NodeDefinition,
    Nop,
    ParenthesizedExpression,
    Program,
    QualifiedName,
    QualifiedReference,
    RelationshipExpression,
    TextExpression,
    TypeAlias,
    TypeDefinition,
    UnaryExpression,
    VariableExpression,
    contents,
    idem,
)
from puppet_xpp.grammar.validator.syntax import CHECKERS
from puppet_xpp.grammar.validator.walk import Abort, Walker

# Puppet's name patterns (Ruby's \w is ASCII-only, hence re.ASCII); used with fullmatch (\A...\z).
NUMERIC_VAR_NAME = re.compile(r"0|[1-9][0-9]*")
ILLEGAL_HOSTNAME_CHARS = re.compile(r"[^-\w.]", re.ASCII)

RESERVED_TYPE_NAMES = frozenset(
    "type any unit scalar boolean numeric integer float collection array hash tuple struct variant optional "
    "enum regexp pattern runtime init object sensitive semver semverrange string timestamp timespan typeset".split()
)
FUTURE_RESERVED_WORDS = frozenset({"plan"})
RESERVED_PARAMETERS = frozenset({"name", "title"})


class Rules(Walker):
    """The shared checks of Puppet's checker (see the module's docstring)."""

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
                if NUMERIC_VAR_NAME.fullmatch(name):
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
            if ILLEGAL_HOSTNAME_CHARS.search(text):
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
        if self.file_namespace is None:
            self.file_namespace = namespace_for_file(self.file, self.modulepath, self.manifest)
        return self.file_namespace

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
        problem, logged = checker(text, syntax, reparse=self.reparse, level=self.level)
        self.logged.extend(logged)
        if problem is not None:
            code, detail = problem
            severity = ISSUES[code].severity
            raise Abort(
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
        so that :mod:`puppet_xpp.grammar.validator.syntax` needs neither the parser nor the validator."""
        from puppet_xpp.grammar.parser import parse
        from puppet_xpp.grammar.validator import validate

        res = parse(text, file="", epp=epp, tasks=self.tasks)
        if res.program is None or any(d.severity == "error" for d in res.diagnostics):
            return res, []
        return res, validate(res.program, strict=self.strict, tasks=self.tasks, file="", level=self.level)

"""The walk: every statement of a file checked against the world, one top-level statement at a time.

A top-level statement's findings are a pure function of (the statement's AST, the answers to the
questions it asked of the world): :func:`statement_findings` returns both, so the language server can
keep them per statement (like validation) until the statement changes or the answer to one of its
questions does (:meth:`World.answer_key`).  The per-file parts -- duplicate declarations (which need
no world) and keeping one note per missing module -- are :func:`file_findings`' on top."""

from __future__ import annotations

import weakref
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

from puppet_xpp.grammar import ast
from puppet_xpp.server.analysis.deep import calls, duplicates, params, references, variables
from puppet_xpp.server.analysis.deep.context import Place
from puppet_xpp.server.analysis.deep.duplicates import LineOf
from puppet_xpp.server.analysis.deep.finding import Finding
from puppet_xpp.server.analysis.deep.literals import literal_string, literal_strings
from puppet_xpp.server.analysis.deep.world import Answers, Asked, Recording, World

__all__ = [
    "BodyMemo",
    "Part",
    "StatementResult",
    "file_findings",
    "statement_findings",
    "top_statements",
]

_CALLS = (ast.CallNamedFunctionExpression, ast.CallMethodExpression)
_DEFINITION_KINDS = {
    ast.HostClassDefinition: "class",
    ast.ResourceTypeDefinition: "define",
    ast.FunctionDefinition: "function",
    ast.PlanDefinition: "plan",
    ast.NodeDefinition: "node",
}


@dataclass(frozen=True)
class StatementResult:
    """The findings of one top-level statement and the questions they depended on."""

    statement: ast.Positioned
    findings: tuple[Finding, ...]
    asked: frozenset[Asked]
    # the answers to what it asked, when the check has them already (a long definition's: its parts
    # keep theirs), else None (the caller asks the world)
    answers: tuple[tuple[Asked, tuple[object, ...]], ...] | None = None


def top_statements(program: ast.Program | None) -> list[ast.Positioned]:
    """The statements the checks are cached by: the file's top-level statements."""
    if program is None or program.body is None:
        return []
    body = program.body
    if type(body) in (ast.BlockExpression, ast.ApplyBlockExpression):
        return list(getattr(body, "statements", ()))
    return [body] if type(body) is not ast.Nop else []


def _guarded_test(test: object) -> bool:
    """Does a condition call ``defined()`` (then its branches may name what does not exist)?"""
    stack = [test]
    while stack:
        n = stack.pop()
        if type(n) is ast.CallNamedFunctionExpression and literal_string(n.functor_expr) == "defined":
            return True
        if isinstance(n, ast.Node):
            stack.extend(n.children())
    return False


def statement_findings(
    statement: ast.Positioned, place: Place, world: World, memo: BodyMemo | None = None
) -> StatementResult:
    """The findings of one top-level statement (the duplicate and once-per-module rules aside); with
    ``memo``, a long class or define is checked one body statement at a time, each kept in the memo
    (:class:`BodyMemo`)."""
    if memo is not None:
        if _splits(statement):
            return _split_findings(statement, place, world, memo)  # type: ignore[arg-type]
        return memo.whole(statement, place, world)
    answers = Recording(world)
    found = _walk(statement, place, answers)
    return StatementResult(statement, tuple(found), frozenset(answers.asked))


def _walk(
    root: ast.Positioned, place: Place, answers: Answers, scope: variables.Scope | None = None
) -> list[Finding]:
    """One pass over a statement: each check where its node is met, the duplicate declarations of
    each body, the variables of each class/define scope judged once its body is walked (``scope``:
    the enclosing one's collector, judged by the caller)."""
    out: list[Finding] = []
    scopes: list[variables.Scope] = []
    none: frozenset[str] = frozenset()
    stack: list[tuple[ast.Node, Place, variables.Scope | None, frozenset[str]]] = [(root, place, scope, none)]
    pop, push = stack.pop, stack.append
    while stack:
        node, here, scope, inner = pop()
        t = type(node)
        if t is ast.VariableExpression:
            if scope is not None:
                scope.use(node, inner)  # type: ignore[arg-type]
            continue
        kind = _DEFINITION_KINDS.get(t)
        if kind is not None:
            here = here.inside(kind)
            scope = None
            inner = none
            if kind in ("class", "define") and getattr(node, "body", None) is not None:
                scope = variables.Scope(node, here)  # type: ignore[arg-type]
                scopes.append(scope)
        elif t is ast.AssignmentExpression:
            if scope is not None:
                scope.assign(node.left_expr)  # type: ignore[attr-defined]
        elif t in _CALLS:
            out += calls.check_call(node, here, answers)  # type: ignore[arg-type]
        elif t is ast.ResourceExpression:
            out += params.check_resource(node, here, answers)  # type: ignore[arg-type]
            out += references.check_references(node, here, answers)  # type: ignore[arg-type]
        elif t is ast.BlockExpression or t is ast.ApplyBlockExpression:
            out += duplicates.in_body(node.statements, here.path)  # type: ignore[attr-defined]
        elif t is ast.LambdaExpression:
            inner = inner | {p.name for p in node.parameters}  # type: ignore[attr-defined]
        elif t in (ast.IfExpression, ast.UnlessExpression) and _guarded_test(getattr(node, "test", None)):
            here = here.guard()
        for field in t._child_fields:  # (children that have children: no check looks at a leaf)
            v = getattr(node, field)
            if type(v) is list:
                for x in v:
                    if x is not None and x._child_fields:
                        push((x, here, scope, inner))
            elif v is not None and v._child_fields:
                push((v, here, scope, inner))
    for scope in scopes:
        out += scope.findings(answers)
    out.sort(key=lambda f: (f.offset, f.code))
    return out


# a class or define whose text is at least this long is checked one body statement at a time
SPLIT_BYTES = 4096


def _splits(statement: ast.Positioned) -> bool:
    t = type(statement)
    return (
        (t is ast.HostClassDefinition or t is ast.ResourceTypeDefinition)
        and statement.length >= SPLIT_BYTES
        and type(getattr(statement, "body", None)) is ast.BlockExpression
    )


@dataclass(frozen=True)
class Part:
    """One statement of a long class/define body checked alone (at ``offset``, where it was when
    checked): its findings, the variables it assigns, its uses that may be unknown (judged with the
    whole body's assignments by :func:`_split_findings`), the questions it asked and their answers
    as of ``stamp``."""

    offset: int
    findings: tuple[Finding, ...]
    assigned: frozenset[str]
    uses: tuple[variables.Use, ...]
    declared: tuple[duplicates.Declaration, ...]  # (what may be a duplicate in the body)
    asked: frozenset[Asked]
    answers: tuple[tuple[Asked, tuple[object, ...]], ...]
    stamp: object
    idle: int = 0  # checks since one last used it (BodyMemo.used)

    def moved(self, delta: int, stamp: object) -> Part:
        if not delta:
            return Part(
                self.offset,
                self.findings,
                self.assigned,
                self.uses,
                self.declared,
                self.asked,
                self.answers,
                stamp,
            )
        # (most parts have no findings, uses or declarations: no generator made for those)
        return Part(
            self.offset + delta,
            tuple([f.moved(delta) for f in self.findings]) if self.findings else (),
            self.assigned,
            tuple([(n, o + delta, n_len) for n, o, n_len in self.uses]) if self.uses else (),
            tuple([(t, k, title, o + delta, n_len) for t, k, title, o, n_len in self.declared])
            if self.declared
            else (),
            self.asked,
            self.answers,
            stamp,
        )


# (where it is, the statement's text): what a part is kept by
PartKey = tuple[Place, bytes]
# the parts of a memo by place, then by text
Parts = dict[Place, dict[bytes, list[Part]]]


class BodyMemo:
    """The parts (:class:`Part`) of one document's long definitions, kept from its last check
    (``old``) by their text: a statement whose text is unchanged keeps its findings, moved with it,
    while the answers to what it asked are the same (checked one by one when ``stamp`` -- what the
    caller says the world was made of -- changed).  ``used`` is what this check used: the next
    one's ``old``; ``judged``, the unknown-variable findings (kept too: a long body may have
    hundreds, and each is the same object as long as its place is the same).

    The top-level statements the caller did not keep are kept here the same way (as parts of the
    file's place: :meth:`whole`).

    A broken text (an open quote: the rest of the file a string, then code where strings were)
    shows a tree made by the parser's recovery, with the statements after the break elsewhere or
    missing.  So the parts a check did not use are kept for ``IDLE`` more checks (those of a place it
    did not meet at all, as they were): the keystroke that repairs the text (the quote closed again)
    then checks the statements it changed, not the whole body again."""

    IDLE = 32  # checks an unused part is kept for

    def __init__(self, data: bytes, stamp: object, old: Parts | None = None) -> None:
        self.data = data
        self.stamp = stamp
        self.old = old if old is not None else {}
        self.fresh: Parts = {}
        self.log: list[tuple[PartKey, Part]] = []  # the parts used, in order
        self.checked = 0  # parts checked (not taken from the memo): the tests' measure
        self.made: dict[variables.Use, Finding] = {}  # (judged)
        self.judging = False  # a long definition's variables were judged
        self.judged_before: dict[variables.Use, Finding] = {}

    def keep(self, key: PartKey, part: Part) -> None:
        """Keep ``part`` for the next check (one of a definition the caller did not check again)."""
        self.fresh.setdefault(key[0], {}).setdefault(key[1], []).append(part)

    @property
    def judged(self) -> dict[variables.Use, Finding]:
        """The unknown-variable findings this check made, or the last ones when it met no long
        definition (kept as its parts are)."""
        return self.made if self.judging else self.judged_before

    @property
    def used(self) -> Parts:
        """The parts this check used or kept, and those of the places it did not meet (as they were:
        their stamp tells whether the answers they depended on are to be asked again)."""
        out = self.fresh
        for here, texts in self.old.items():
            mine = out.get(here)
            if mine is None:
                out[here] = texts  # (not met: as they were)
                continue
            for text, parts in texts.items():
                for part in parts:
                    if part.idle < self.IDLE:
                        mine.setdefault(text, []).append(replace(part, idle=part.idle + 1))
        self.old = {}  # (moved into what this returns)
        return out

    def whole(self, statement: ast.Positioned, place: Place, world: World) -> StatementResult:
        """A top-level statement's result, kept by its text as a part of the file's place."""
        lo = statement.offset
        text = self.data[lo : lo + statement.length]
        kept = self.old.get(place, {}).get(text)
        part = kept.pop(0) if kept else None
        stamp = self.stamp
        if part is not None and part.stamp != stamp:
            if not all(world.answer_key(q) == k for q, k in part.answers):
                part = None
        if part is None:
            answers = Recording(world)
            found = _walk(statement, place, answers)
            asked = answers.asked
            part = Part(
                lo, tuple(found), frozenset(), (), (), frozenset(asked), _answered(world, asked), stamp
            )
            self.checked += 1
            if not contained(statement, lo, lo + statement.length):
                return StatementResult(statement, part.findings, part.asked, part.answers)
        elif part.offset != lo or part.idle:
            part = part.moved(lo - part.offset, stamp)
        self.fresh.setdefault(place, {}).setdefault(text, []).append(part)
        self.log.append(((place, text), part))
        return StatementResult(statement, part.findings, part.asked, part.answers)

    def parts(
        self,
        here: Place,
        statements: Sequence[ast.Positioned],
        bounds: Sequence[tuple[int, int]],
        world: World,
    ) -> list[Part]:
        """The parts of one body's ``statements``, the tokens of each within the text of its
        ``bounds``: from the end of the statement before it to the start of the one after it (a
        node's span may be less than its text -- an assignment's is from its ``=`` -- so the
        statement's own span cannot be the key)."""
        old = self.old.get(here, {})
        used = self.fresh.setdefault(here, {})
        data, stamp, log = self.data, self.stamp, self.log
        out = []
        for statement, (lo, hi) in zip(statements, bounds, strict=True):
            text = data[lo:hi]
            kept = old.get(text)
            part = kept.pop(0) if kept else None
            if part is not None and part.stamp != stamp:
                if all(world.answer_key(q) == k for q, k in part.answers):
                    part = part.moved(0, stamp)
                else:
                    part = None
            if part is None:
                part = _check_part(statement, lo, here, world, stamp)
                self.checked += 1
                if not contained(statement, lo, hi):
                    out.append(part)  # (its text does not say all it is: checked every time, never kept)
                    continue
            elif part.idle or (part.offset != lo and (part.findings or part.uses or part.declared)):
                # (a part with nothing at a place -- most of a body's -- is not moved: its offset is
                # read for nothing else)
                part = part.moved(lo - part.offset, stamp)
            used.setdefault(text, []).append(part)
            log.append(((here, text), part))
            out.append(part)
        return out


class KeptAnswers(Recording):
    """The answers a long body's whole-body pass asks at every check -- whether each name its
    statements use without assigning it is a fact or a top-scope variable (hundreds in a long class)
    -- kept from check to check while the world and the memo's stamp are the same (what a part's
    findings are kept by too), and their answer keys with them."""

    def __init__(self, world: World, kept: dict[Asked, object]) -> None:
        super().__init__(world)
        self.kept = kept

    def fact_known(self, name: str) -> bool:
        q = ("fact", name.lstrip(":"))
        self.asked.add(q)
        v = self.kept.get(q)
        if v is None:
            v = self.kept[q] = self.world.fact_known(name)
        return bool(v)

    def top_variable(self, name: str) -> bool | None:
        q = ("top_variable", name)
        self.asked.add(q)
        if q in self.kept:
            return self.kept[q]  # type: ignore[return-value]
        v = self.kept[q] = self.world.top_variable(name)
        return v

    def answer_key(self, q: Asked) -> tuple[object, ...]:
        if q[0] == "fact" or q[0] == "top_variable":
            if q in self.kept:
                return (self.kept[q],)
        return self.world.answer_key(q)


# world -> (the stamp, the answers kept under it): one per world (a document's; weakly held)
_KEPT_ANSWERS: weakref.WeakKeyDictionary[World, tuple[object, dict[Asked, object]]] = (
    weakref.WeakKeyDictionary()
)


def kept_answers(world: World, stamp: object) -> KeptAnswers:
    """A :class:`KeptAnswers` of ``world`` with what was kept under ``stamp`` (nothing when it changed)."""
    held = _KEPT_ANSWERS.get(world)
    if held is None or held[0] != stamp:
        held = _KEPT_ANSWERS[world] = (stamp, {})
    return KeptAnswers(world, held[1])


def contained(root: ast.Positioned, lo: int, hi: int) -> bool:
    """Every node under ``root`` lies within the text ``lo``..``hi`` (what a statement's findings are
    kept by).  Not so where the parser's recovery from a syntax error shares a node between two
    statements (an assignment whose left side is the statement before it)."""
    if root.offset < lo or root.offset + root.length > hi:
        return False
    stack: list[ast.Node] = [root]
    pop, push = stack.pop, stack.append
    while stack:
        n = pop()
        for name in type(n)._child_fields:
            v = getattr(n, name)
            for x in v if type(v) is list else (v,):
                if x is None:
                    continue
                at = getattr(x, "offset", None)
                if at is None or at < lo or at + x.length > hi:
                    return False
                if x._child_fields:
                    push(x)
    return True


def _check_part(statement: ast.Positioned, lo: int, here: Place, world: World, stamp: object) -> Part:
    answers = Recording(world)
    scope = variables.Scope(None, here)
    found = _walk(statement, here, answers, scope)
    return Part(
        lo,
        tuple(found),
        frozenset(scope.known),
        tuple(scope.candidates()),
        tuple(duplicates.declarations([statement])),
        frozenset(answers.asked),
        _answered(world, answers.asked),
        stamp,
    )


def _answered(world: World, asked: set[Asked]) -> tuple[tuple[Asked, tuple[object, ...]], ...]:
    return tuple((q, world.answer_key(q)) for q in sorted(asked))


def _split_findings(
    node: ast.HostClassDefinition | ast.ResourceTypeDefinition, place: Place, world: World, memo: BodyMemo
) -> StatementResult:
    """A long class/define's findings as :func:`_walk` of it gives them, from its parts: its head
    (parameters, parent) walked, each body statement a part (:meth:`BodyMemo.part`), the body's
    duplicates and its unknown variables (every part's assignments known) on top."""
    here = place.inside("class" if type(node) is ast.HostClassDefinition else "define")
    answers = kept_answers(world, memo.stamp)
    scope = variables.Scope(node, here)
    out: list[Finding] = []
    t = type(node)
    for name in t._child_fields:  # (the head: every child but the body, as the walk meets them)
        if name == "body":
            continue
        v = getattr(node, name)
        for x in v if type(v) is list else [v]:
            if x is not None and x._child_fields:
                out += _walk(x, here, answers, scope)
    body: ast.BlockExpression = node.body  # type: ignore[assignment]
    known = scope.known
    uses = scope.candidates()
    asked = set(answers.asked)
    statements = body.statements
    last = len(statements) - 1
    lo = node.offset  # (the first statement's text begins with the definition's head)
    bounds = []
    for i, statement in enumerate(statements):
        end = statement.offset + statement.length
        hi = statements[i + 1].offset if i < last else node.offset + node.length
        bounds.append((min(lo, statement.offset), max(hi, end)))
        lo = end
    declared: list[duplicates.Declaration] = []
    answered: list[tuple[Asked, tuple[object, ...]]] = []
    for part in memo.parts(here, statements, bounds, world):
        out += part.findings
        declared += part.declared
        answered += part.answers
        known |= part.assigned
        uses += part.uses
        asked |= part.asked
    out += duplicates.duplicated(declared, here.path)
    memo.judging = True
    out += variables.judge(node, known, uses, here, answers, memo.judged_before, memo.made)
    asked |= answers.asked
    answered += ((q, answers.answer_key(q)) for q in answers.asked)
    out.sort(key=lambda f: (f.offset, f.code))
    return StatementResult(node, tuple(out), frozenset(asked), tuple(answered))


def file_findings(
    results: Sequence[StatementResult], program: ast.Program | None, path: str, line_of: LineOf
) -> list[Finding]:
    """A file's findings from its statements' results: one note per missing module (its first use),
    the duplicate declarations, in the order of the file."""
    out: list[Finding] = []
    noted: set[str] = set()
    declared: set[str] | None = None
    defaults: dict[str, set[str]] | None = None
    for result in results:
        for f in result.findings:
            if "defaults_type" in f.data:  # a define's parameter a resource default may give
                if defaults is None:
                    defaults = defaulted_types(program)
                given = defaults.get(f.data["defaults_type"], set()) | defaults.get("*", set())
                if f.data.get("param") in given or "*" in given:
                    continue
            if "included" in f.data:  # include of a class this file may declare with its parameters
                if declared is None:
                    declared = declared_classes(program)
                if f.data["included"] in declared:
                    continue
            if f.code == "DEEP_MISSING_MODULE":
                module = str(f.data.get("module", ""))
                if module in noted:
                    continue
                noted.add(module)
            out.append(f)
    out += duplicates.in_body(top_statements(program), path)
    out = duplicates.with_lines(out, line_of)
    out.sort(key=lambda f: (f.offset, f.code))
    return out


def defaulted_types(program: ast.Program | None) -> dict[str, set[str]]:
    """type -> the parameters a file's resource defaults set for it (``Type { attr => v }``,
    ``Resource[t] {}``; type ``*``: one whose type is computed; parameter ``*``: a ``* =>`` splat).
    Defaults are dynamically scoped: a missing parameter they set may come from them, so it is not
    provable in that file (nor, strictly, where a class that declares the resource is included from a
    scope that sets them: not static)."""
    out: dict[str, set[str]] = {}
    if program is None or program.body is None:
        return out
    stack: list[ast.Node] = [program.body]
    while stack:
        n = stack.pop()
        if isinstance(n, ast.ResourceDefaultsExpression):
            ref = n.type_ref
            key = "*"
            if type(ref) is ast.QualifiedReference:
                key = ref.cased_value.lower().lstrip(":")
            elif isinstance(ref, ast.AccessExpression) and len(ref.keys) == 1:
                name = literal_string(ref.keys[0])
                if name is None and type(ref.keys[0]) is ast.QualifiedReference:
                    name = ref.keys[0].cased_value
                key = name.lower().lstrip(":") if name else "*"
            params = out.setdefault(key, set())
            for op in n.operations:
                params.add(op.attribute_name if isinstance(op, ast.AttributeOperation) else "*")
        stack.extend(n.children())
    return out


def declared_classes(program: ast.Program | None) -> set[str]:
    """The classes a file declares resource-like (``class { 'x': ... }``): an ``include`` of one of them
    after the declaration takes its parameters from there, so a missing-parameter finding on the
    include is not provable."""
    out: set[str] = set()
    if program is None or program.body is None:
        return out
    stack: list[ast.Node] = [program.body]
    while stack:
        n = stack.pop()
        if type(n) is ast.ResourceExpression and literal_string(n.type_name) == "class":
            for body in n.bodies:
                out.update(t.lower().lstrip(":") for t in literal_strings(body.title) or ())
        stack.extend(n.children())
    return out


def check_statements(
    statements: Iterable[ast.Positioned], place: Place, world: World
) -> list[StatementResult]:
    return [statement_findings(s, place, world) for s in statements]

"""The Puppet parser: lexer tokens → lark LALR(1) tables → our own LR driver → the Puppet::AST model.

lark builds the LALR(1) tables from grammar/puppet.lark once per process; the driver below runs them
with the reduce actions of grammar/build.py.  Owning the driver loop gives us:

* speed: no parse tree, one callback per reduction;
* error recovery: a syntax error is reported (Puppet's SYNTAX_ERROR, message and position for the first
  one), then parsing resumes at the next top-level statement boundary, so every independent error is
  reported and the statements that parse are kept in the Program;
* resumable runs for the incremental parser (grammar.incremental): `Driver.run` goes on from any LR
  configuration and tells a ``watch`` where statement lists grow and end and where bodies open, so a
  run can stop at an old statement boundary or take a body kept from an earlier parse whole.
"""

from __future__ import annotations

import bisect
import os
from dataclasses import dataclass, field
from typing import Any, cast

from . import ast
from .build import Builder
from .issues import Diagnostic
from .lexer import load_accelerator, master_pattern
from .recovery import ScanMemo, next_resume, resume_in_block
from .ruby import escape_slash

GRAMMAR_FILE = os.path.join(os.path.dirname(__file__), "puppet.lark")
MAX_STACK = 6000  # LR stack depth; deeper nesting gets PARSE_TOO_DEEP instead of exhausting later passes
MAX_DEPTH = (
    2000  # AST nesting depth (e.g. a chain of 10,000 `+`); every consumer of the AST must cope with it
)


class EndToken:
    """The end-of-input token (`$END`)."""

    __slots__ = ("start_pos", "end_pos", "value")
    type = "$END"

    def __init__(self, pos: int) -> None:
        self.start_pos = self.end_pos = pos
        self.value = ""


class CutToken(EndToken):
    """Where a hard lexer error cut the tokens.  Puppet's lexer raises when the parser reads that
    token, so nothing is accepted or reduced on it: only reductions racc makes without reading a
    token (Tables.only_reduce) happen before the error."""

    __slots__ = ()
    type = "$CUT"


class Tables:
    """LALR(1) tables, compiled once into plain ints for a fast driver.

    ``actions[state][token_type]`` is ``n >= 0`` (shift, go to state n) or ``n < 0`` (reduce rule -n-1);
    ``gotos[state][nonterminal]`` is the state after a reduction; ``rules[i]`` is
    ``(action name, number of symbols, nonterminal)``.
    """

    def __init__(self) -> None:
        data = _load_tables()
        self.actions: list[dict[str, int]] = data["actions"]
        self.gotos: list[dict[str, int]] = data["gotos"]
        rules: list[tuple[str, int, str]] = data["rules"]
        self.rules = rules
        # racc (Puppet's parser generator) reduces by a state's default rule (its most frequent reduce)
        # on any lookahead it has no entry for, and only then reports the error. Reductions have side
        # effects (Puppet raises some errors from rule actions), so we emulate them on errors.
        self.default_reduce = []
        self.only_reduce: list[int | None] = []  # a state's one action when it is a reduce (racc's
        # states without an action table row: it reduces there without reading the next token)
        # Not for a statement list's end (`statements: stmts`): that would close the body (or the
        # program) before the same error, and the recovery keeps the list open instead.
        for acts in self.actions:
            counts: dict[int, int] = {}
            for v in acts.values():
                if v < 0 and rules[-v - 1][2] not in ("start", "statements"):
                    counts[v] = counts.get(v, 0) + 1
            self.default_reduce.append(max(counts, key=lambda k: (counts[k], k)) if counts else None)
            only = set(acts.values())
            self.only_reduce.append(only.pop() if len(only) == 1 and min(only) < 0 else None)
        self.start: int = data["start"]
        self.end: int = data["end"]
        self.goto_stmts = self.gotos[self.start].get("stmts")
        self.goto_statements = self.gotos[self.start].get("statements")
        # states just after a statement list (`statements: stmts .`): racc's default reduction there
        # completes the list (its call transform runs) before a syntax error is reported
        self.after_stmts = frozenset(g["stmts"] for g in self.gotos if "stmts" in g)


def _lark_tables() -> dict[str, Any]:
    """lark's LALR(1) tables for grammar/puppet.lark, as plain lists, dicts, strings and ints (see Tables)."""
    from lark import Lark
    from lark.lexer import Lexer as LarkLexer
    from lark.parsers.lalr_analysis import Shift

    class NoLexer(LarkLexer):
        def __init__(self, conf: Any) -> None:
            pass

        def lex(self, data: Any, parser_state: Any = None) -> Any:  # pragma: no cover - never lexes for us
            return iter(data)

    lk = Lark.open(GRAMMAR_FILE, parser="lalr", lexer=NoLexer)
    table = lk.parser.parser.parser.parse_table
    rule_index: dict[Any, int] = {}
    rules: list[tuple[str, int, str]] = []
    nstates = max(table.states) + 1
    actions: list[dict[str, int]] = [dict() for _ in range(nstates)]
    gotos: list[dict[str, int]] = [dict() for _ in range(nstates)]
    for st, row in table.states.items():
        acts, goto = actions[st], gotos[st]
        for name, (action, arg) in row.items():
            sym = str(name)  # (lark's names may be str subclasses: plain strings, for marshal)
            if action is Shift:
                if sym.isupper() or sym == "$END":
                    acts[sym] = arg
                else:
                    goto[sym] = arg
            else:
                k = rule_index.get(arg)
                if k is None:
                    k = rule_index[arg] = len(rules)
                    rules.append(
                        (str(arg.alias or arg.origin.name), len(arg.expansion), str(arg.origin.name))
                    )
                acts[sym] = -k - 1
    return {
        "actions": actions,
        "gotos": gotos,
        "rules": rules,
        "start": table.start_states["start"],
        "end": table.end_states["start"],
    }


# the form of the cached tables (a change to _lark_tables' output changes it)
TABLES_FORMAT = 1


def _valid_tables(data: Any) -> bool:
    """Whether ``data`` (read from a cache file) has the shape _lark_tables gives."""
    if not isinstance(data, dict) or data.get("format") != TABLES_FORMAT:
        return False
    actions, gotos, rules = data.get("actions"), data.get("gotos"), data.get("rules")
    if not (isinstance(actions, list) and isinstance(gotos, list) and isinstance(rules, list)):
        return False
    n = len(actions)
    if not n or len(gotos) != n or not all(isinstance(x, dict) for x in actions + gotos):
        return False
    if not all(isinstance(r, tuple) and len(r) == 3 for r in rules):
        return False
    for row in actions:
        for v in row.values():
            if not isinstance(v, int) or v >= n or -v - 1 >= len(rules):
                return False
    for row in gotos:
        if not all(isinstance(v, int) and 0 <= v < n for v in row.values()):
            return False
    return all(isinstance(data.get(k), int) and 0 <= data[k] < n for k in ("start", "end"))


def _load_tables() -> dict[str, Any]:
    """The converted tables, from the user's cache (``tables-<digest of the grammar>.marshal``) or made by
    lark and cached: reading and checking them takes ~10 ms, where importing lark and loading its own
    cache of the parser took ~80 ms of every process's start.  The tables are a function of the grammar
    (lark's LALR(1) construction is deterministic).  The cache is every cache's rule
    (:func:`puppet_xpp.open_cache_dir`: our own private directory, files opened relative to it, never
    through a link); a damaged or foreign file is ignored and written again (temporary file + rename)."""
    import hashlib
    import marshal

    from puppet_xpp import open_cache_dir, user_cache_dir

    with open(GRAMMAR_FILE, "rb") as f:
        digest = hashlib.sha256(f.read() + b"\0%d" % TABLES_FORMAT).hexdigest()[:16]
    name = f"tables-{digest}.marshal"
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC
    dfd = open_cache_dir(user_cache_dir(), create=False)
    if dfd is not None:
        try:
            fd = os.open(name, flags, dir_fd=dfd)
            with os.fdopen(fd, "rb") as f:
                data = marshal.loads(f.read())
            if _valid_tables(data):
                return cast(dict[str, Any], data)
        except (OSError, ValueError, EOFError, TypeError):
            pass
        finally:
            os.close(dfd)
    data = dict(_lark_tables(), format=TABLES_FORMAT)
    dfd = open_cache_dir(user_cache_dir(), create=True)
    if dfd is None:
        return data
    tmp = f".{name}.{os.getpid()}.tmp"
    try:
        fd = os.open(
            tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600, dir_fd=dfd
        )
        with os.fdopen(fd, "wb") as f:
            f.write(marshal.dumps(data))
        os.replace(tmp, name, src_dir_fd=dfd, dst_dir_fd=dfd)
    except (OSError, ValueError):
        try:
            os.unlink(tmp, dir_fd=dfd)
        except OSError:
            pass
    finally:
        os.close(dfd)
    return data


_TABLES: Tables | None = None


_accel = load_accelerator()

#: whether the accelerator's fix_positions takes ``skip`` (an older build: the Python walk with one)
_FIX_SKIP = bool(getattr(_accel, "FIX_SKIP", 0))

#: which LR driver loop runs a parse without a watch: "C (grammar._accel)" or "Python" (the one loop of
#: Driver.run; the incremental parser's watched runs always use it).  Drivers made after it is set to
#: "Python" use the Python loop (tests compare the two, benches time them).
ACCELERATOR = "C (grammar._accel)" if _accel is not None else "Python"


def tables() -> Tables:
    global _TABLES
    if _TABLES is None:
        _TABLES = Tables()
    return _TABLES


def prepare() -> None:
    """Everything a parse sets up once per process made now: the tables and the plain Builder's rule plan
    (with the C loop's tables), and the lexer's patterns for manifests (EPP's are made when first used).
    For a process about to fork workers (``--compile``): they share it instead of each making it."""
    rule_plan(Builder)
    master_pattern(False, False)
    master_pattern(False, True)


@dataclass
class ParseResult:
    program: object | None  # grammar.ast Program
    diagnostics: list[Any] = field(default_factory=list)
    locator: object = None
    tokens: list[Any] = field(default_factory=list)
    block_recovery: bool = False  # a syntax error was recovered from inside a body

    @property
    def errors(self) -> list[Any]:
        return [d for d in self.diagnostics if d.severity == "error"]


class NeedTokens(Exception):
    """A run that drops the tokens it has read (``Driver.release``) met what needs them again (a syntax
    error's recovery, a nesting too deep to report): the caller parses again keeping them."""


class _SyntaxError(Exception):
    def __init__(self, index: int) -> None:
        self.index = index


def _where(tok: Any) -> str:
    if tok.type == "$END":
        return "end of input"
    v = tok.value
    if tok.type == "REGEX":  # Puppet shows the token's Regexp (Ruby's Regexp#to_s)
        v = f"(?-mix:{escape_slash(v)})"
    return f"'{v}'"


def syntax_error(tok: Any, file: str) -> Diagnostic:
    """Puppet's SYNTAX_ERROR at a token (or at the end of input)."""
    return Diagnostic.make(
        "SYNTAX_ERROR", tok.start_pos, tok.end_pos - tok.start_pos, {"where": _where(tok)}, file=file
    )


# Driver.run's answer when its `watch` stopped the parse, or a reduction would have gone below `floor`.
STOPPED = object()


@dataclass(frozen=True)
class RulePlan:
    """What the driver needs per rule of the tables for one Builder class, made once per class (a Driver
    per parse: binding 283 methods and deriving two lists each time was a fifth of a small file's parse).

    ``callbacks[k]`` is ``(the class's function for rule k's action, number of symbols, nonterminal)``
    (called as ``function(builder, children)``); ``watched[k]``: 1 = a statement list grew (after the
    action), 2 = a list is complete (before its call transform runs); ``unit[k]``: the action passes its
    one value on (`expression: unary -> pass1`...; the most frequent: seven per item of a list of
    numbers), so the driver only changes the state on top."""

    callbacks: list[tuple[Any, int, str]]
    watched: list[int]
    unit: list[bool]
    machine: Any  # the tables and these in the C loop (grammar/_accel.c), or None (not built, disabled)


_PLANS: dict[type, RulePlan] = {}


def rule_plan(cls: type) -> RulePlan:
    """The RulePlan of a Builder class (made at its first parse)."""
    plan = _PLANS.get(cls)
    if plan is None:
        rules = tables().rules
        watched = [1 if o == "stmts" else 2 if o == "statements" else 0 for _n, _s, o in rules]
        plain = getattr(cls, "pass1", None) is Builder.pass1
        callbacks = [(getattr(cls, name), size, origin) for name, size, origin in rules]
        unit = [
            plain and name == "pass1" and size == 1 and w == 0 for (name, size, _o), w in zip(rules, watched)
        ]
        plan = _PLANS[cls] = RulePlan(callbacks, watched, unit, _machine(callbacks, unit, watched))
    return plan


def _machine(callbacks: list[tuple[Any, int, str]], unit: list[bool], watched: list[int]) -> Any:
    """The C loop's Machine for these rule actions (the tables as dense int arrays), or None."""
    if _accel is None:
        return None
    t = tables()
    terms = sorted({sym for acts in t.actions for sym in acts})
    term_ids = {sym: k for k, sym in enumerate(terms)}
    nonterms = sorted({sym for g in t.gotos for sym in g} | {origin for _f, _s, origin in callbacks})
    nonterm_ids = {sym: k for k, sym in enumerate(nonterms)}
    # (map over the bound get: half the time of a generator, in every process that parses)
    actions: list[int | None] = []
    for acts in t.actions:
        actions.extend(map(acts.get, terms))
    gotos: list[int | None] = []
    for row in t.gotos:
        gotos.extend(map(row.get, nonterms))
    return _accel.Machine(
        nstates=len(t.actions),
        nterms=len(terms),
        nnonterms=len(nonterms),
        actions=actions,
        gotos=gotos,
        default_reduce=t.default_reduce,
        only_reduce=t.only_reduce,
        sizes=[size for _f, size, _o in callbacks],
        origins=[nonterm_ids[origin] for _f, _s, origin in callbacks],
        unit=[int(u) for u in unit],
        watched=watched,
        lbrace=term_ids.get("LBRACE", -1),
        end_state=t.end,
        term_ids=term_ids,
        callbacks=tuple(fn for fn, _s, _o in callbacks),
    )


class Driver:
    """Runs the LR tables over a token list with a Builder's actions."""

    def __init__(
        self, builder: Builder, nested: bool = True, cut: bool = False, memo: ScanMemo | None = None
    ) -> None:
        t = tables()
        self.t = t
        self.b = builder
        self.nested = nested  # recover from errors inside bodies (recover_in_block)
        self.cut = cut  # the tokens end at a hard lexer error, not at the end of the input
        # drop each token from the list once shifted (parse(keep_tokens=False)): a token is then freed
        # when the reduction that reads it is done, and the tree grows as the tokens go (a 5 MB one-line
        # list: the peak is the tokens', not the tokens' plus the tree's); whatever would read a token
        # again (recovery, the too-deep report) raises NeedTokens instead
        self.release = False
        self.memo = memo  # recovery scans of earlier runs over the same tokens (grammar.recovery)
        plan = rule_plan(type(builder))
        self.callbacks = plan.callbacks
        self.watched = plan.watched
        self.unit = plan.unit
        self.machine = plan.machine if ACCELERATOR != "Python" else None

    def run(
        self,
        tokens: list[Any],
        i: int,
        n: int,
        eof_pos: int,
        stack: list[int] | None = None,
        values: list[Any] | None = None,
        watch: Any = None,
        floor: int = 0,
    ) -> tuple[Any, int | None]:
        """Parse tokens[i:n] as a program. Returns (value, None) or (salvaged, error_index).

        The incremental parser (grammar.incremental) runs the same loop from the middle of a parse:
        ``stack``/``values`` are the LR state there (the list is used and changed in place); ``watch`` is
        called as ``watch(event, i, stack, values)`` with event "item" after a statement list grew (the
        list is ``values[-1]``, the lookahead ``tokens[i]``), "end" before a complete list's call
        transform and "list" after it (``values[-1]`` is then the transformed list), "resume" where
        recovery from a syntax error inside a body goes on (``tokens[i]``); when it returns
        True, or when a reduction would pop the stack below ``floor`` entries, the parse stops there
        and ``(STOPPED, i)`` is returned.  After a `{` is shifted, event "open": a token index
        returned means the watch pushed the body's statements itself (a body kept from an earlier
        parse) and the parse goes on at that token (the body's `}`)."""
        actions = self.t.actions
        gotos = self.t.gotos
        callbacks = self.callbacks
        b = self.b
        default_reduce = self.t.default_reduce
        watched = self.watched
        unit = self.unit
        defaults = 0
        resumed = -1  # token index where block recovery last resumed
        if stack is None:
            stack = [self.t.start]
            values = []
        elif values is None:
            raise ValueError("a stack needs its values")
        end_tok = CutToken(eof_pos) if self.cut else EndToken(eof_pos)
        end_state = self.t.end
        release = self.release
        # the C loop (grammar/_accel.c) runs the same steps as the loop below (the watch called at the same
        # events, with the stack and values as they are then), up to an acceptance, a syntax error, too
        # deep a stack or a stop; what follows an error stays here
        machine = self.machine
        while True:
            if machine is not None:
                status, v, i = machine.run(
                    b, tokens, i, n, end_tok, stack, values, self.cut, release, MAX_STACK, watch, floor
                )
                if status == 0:
                    return v, None
                if status == 3:
                    return STOPPED, i
                if status == 2:
                    if release:
                        raise NeedTokens
                    raise _TooDeep(i - 1)
                tok = tokens[i] if i < n else end_tok
                k = self.error_met(tok, tokens, i, n, stack, values, resumed)
                if k is None:
                    return self.salvage(stack, values), i
                resumed = i = k
                if watch is not None and watch("resume", i, stack, values):
                    return STOPPED, i
                continue
            tok = tokens[i] if i < n else end_tok
            act = actions[stack[-1]].get(tok.type)
            if act is None:
                if tok is end_tok and self.cut:
                    act = self.t.only_reduce[stack[-1]]
                else:
                    act = default_reduce[stack[-1]]  # racc's default reduction (Tables)
                defaults += 1
                if act is None or defaults > 1000:
                    k = self.error_met(tok, tokens, i, n, stack, values, resumed)
                    if k is None:
                        return self.salvage(stack, values), i
                    resumed = i = k
                    defaults = 0
                    if watch is not None and watch("resume", i, stack, values):
                        return STOPPED, i
                    continue
            else:
                defaults = 0
            if act >= 0:
                stack.append(act)
                values.append(tok)
                if release and tok is not end_tok:
                    tokens[i] = None
                i += 1
                if len(stack) > MAX_STACK:
                    if release:
                        raise NeedTokens
                    raise _TooDeep(i - 1)
                if watch is not None and tok.type == "LBRACE":
                    k = watch("open", i, stack, values)
                    if k:
                        i = k
                continue
            fn, size, origin = callbacks[-act - 1]
            if unit[-act - 1] and (watch is None or len(stack) > floor):
                stack[-1] = gotos[stack[-2]][origin]  # (the value stays: it is the result)
                if tok is end_tok and stack[-1] == end_state:
                    return values[-1], None
                continue
            if watch is not None:
                w = watched[-act - 1]
                if len(stack) - size < floor or (w == 2 and watch("end", i, stack, values)):
                    return STOPPED, i
            else:
                w = 0
            if size:
                s = values[-size:]
                del values[-size:]
                del stack[-size:]
            else:
                s = []
            v = fn(b, s)
            stack.append(gotos[stack[-1]][origin])
            values.append(v)
            if w and watch("item" if w == 1 else "list", i, stack, values):
                return STOPPED, i
            if tok is end_tok and stack[-1] == end_state:
                return v, None

    def error_met(
        self, tok: Any, tokens: list[Any], i: int, n: int, stack: list[int], values: list[Any], resumed: int
    ) -> int | None:
        """A syntax error at token i (``tok``, or the end token): told to the builder, then recovered from
        inside a body (recover_in_block) when the driver is ``nested``.  Returns the token index to go on
        at, or None (the run ends: the caller salvages)."""
        if self.release:
            raise NeedTokens
        after_stmts = stack[-1] in self.t.after_stmts and tok.type != "$CUT"
        self.b.syntax_error_met(tok.start_pos, values[-1] if after_stmts else None)
        return self.recover_in_block(tokens, i, n, stack, values, resumed) if self.nested else None

    def recover_in_block(
        self, tokens: list[Any], err: int, n: int, stack: list[int], values: list[Any], resumed: int
    ) -> int | None:
        """Recovery from a syntax error inside a body (class, define, node, function, lambda, if, case,
        block, template...): report it, drop the statement it cut, skip to the next statement start of
        that body (or to the `}` closing it) and go on, so the rest of the body and of the file parse
        as usual.  Returns the token index to continue at, or None (top level: the caller's recovery)."""
        j = block_context(self.t, stack, values)
        if j is None or err >= n:
            return None
        opener = values[j - 1]
        if getattr(opener, "type", None) != "LBRACE":
            return None  # a template's own statement list (after its parameters): the top level's recovery
        data = self.b.locator.source_bytes()
        gs = self.t.gotos[stack[j]].get("stmts")
        keep = j + 2 if j + 1 < len(stack) and stack[j + 1] == gs else j + 1
        # brackets are counted from the cut statement's start (the body's earlier statements are
        # complete), or from the body's `{`
        first = values[keep - 1] if keep - 1 < len(values) else None
        at = getattr(first, "start_pos", None)
        if at is None:
            at = getattr(first, "offset", None)
        if at is None or at < opener.end_pos:
            before = bisect.bisect_left(tokens, opener.start_pos, key=_start_pos)  # the `{`
        else:
            before = bisect.bisect_left(tokens, at, key=_start_pos) - 1  # the token before the statement
        k = resume_in_block(tokens, data, before, err, n, self.memo)
        if k is None or k == resumed:
            return None
        if err != resumed:  # an error right where we resumed is a consequence of the previous one
            tok = tokens[err]
            self.b.diagnostics.append(
                Diagnostic.make(
                    "SYNTAX_ERROR",
                    tok.start_pos,
                    tok.end_pos - tok.start_pos,
                    {"where": _where(tok)},
                    file=self.b.file,
                )
            )
        del stack[keep:]
        del values[keep - 1 :]
        self.b.namestack[:] = open_class_names(self.t, stack, values)
        self.b.had_errors = True
        return k

    def reduce(self, stack: list[int], values: list[Any], k: int) -> Any:
        """Reduce by rule k: pop its symbols, run its action, push the goto state; returns the value.
        (Driver.run inlines this in its loop, the hot path.)"""
        fn, size, origin = self.callbacks[k]
        if size:
            s = values[-size:]
            del values[-size:]
            del stack[-size:]
        else:
            s = []
        v = fn(self.b, s)
        stack.append(self.t.gotos[stack[-1]][origin])
        values.append(v)
        return v

    def salvage(self, stack: list[int], values: list[Any]) -> Any:
        """What is kept of the input before a syntax error (the parse stops there, as Puppet's does):
        ``("stmts", raw statement list)`` -- when the input so far is a complete program, the statement
        the error cut is completed and kept too; ``("statements", list)`` when the list was complete
        (its call transform done); ``("nop", Nop)`` for an empty program; for a template
        ``("program", Program)`` when complete, else ``("epp", (EPP_START token, params, raw statements))``;
        or None."""
        t = self.t
        if self._completes(stack):
            actions, rules = t.actions, t.rules
            stack = list(stack)
            values = list(values)
            while True:
                if len(stack) == 2 and stack[1] == t.goto_stmts:
                    return ("stmts", values[0])
                if len(stack) == 2 and stack[1] == t.goto_statements:  # the call transform has run
                    return ("statements", values[0])
                k = -actions[stack[-1]]["$END"] - 1
                v = self.reduce(stack, values, k)
                if stack[-1] == t.end:
                    return ("nop", v.body) if rules[k][0] == "empty_program" else ("program", v)
        if len(stack) > 1 and stack[1] == t.goto_stmts and isinstance(values[0], list):
            return ("stmts", values[0])
        if values and getattr(values[0], "type", None) == "EPP_START":
            params = (
                values[1] if len(values) > 1 and (values[1] is None or isinstance(values[1], list)) else None
            )
            gs = t.gotos[stack[2]].get("stmts") if len(stack) > 3 else None
            stmts = values[2] if gs is not None and stack[3] == gs and isinstance(values[2], list) else []
            return ("epp", (values[0], params, stmts))
        return None

    def _completes(self, stack: list[int]) -> bool:
        """Would `$END` be accepted here? (simulated on states only, no actions run)"""
        actions, gotos, rules = self.t.actions, self.t.gotos, self.t.rules
        stack = list(stack)
        for _ in range(100000):
            act = actions[stack[-1]].get("$END")
            if act is None or act >= 0:
                return False
            _name, size, origin = rules[-act - 1]
            if size:
                del stack[-size:]
            stack.append(gotos[stack[-1]][origin])
            if stack[-1] == self.t.end:
                return True
        return False


class _TooDeep(Exception):
    def __init__(self, index: int) -> None:
        self.index = index


def _start_pos(t: Any) -> int:
    return int(t.start_pos)


def block_context(t: Tables, stack: list[int], values: list[Any]) -> int | None:
    """Index in the LR stack of the innermost body still open (a state that expects a statement list:
    just after a body's `{`, with no `}` after it yet), or None when only the top level is open."""
    gotos = t.gotos
    for j in range(len(stack) - 1, 0, -1):
        g = gotos[stack[j]]
        if "stmts" in g:
            if j + 1 < len(stack) and (
                stack[j + 1] == g.get("statements") or getattr(values[j], "type", None) == "RBRACE"
            ):
                continue  # that body is complete: `{ … }`
            return j
    return None


def open_class_names(t: Tables, stack: list[int], values: list[Any]) -> list[str]:
    """The class/plan name stack for an LR stack: the names of the open `class`/`plan` definitions."""
    names = []
    gotos = t.gotos
    for p in range(len(values) - 1):
        v = values[p]
        if (
            getattr(v, "type", None) in ("CLASS", "PLAN")
            and p + 2 < len(stack)
            and stack[p + 2] == gotos[stack[p + 1]].get("stacked_classname")
        ):
            names.append(values[p + 1].value)
    return names


def parse_tokens(
    tokens: list[Any],
    builder: Builder,
    eof_pos: int,
    data: bytes,
    epp: bool = False,
    watch: Any = None,
    cut: bool = False,
    release: bool = False,
) -> Any:
    """Parse a token list into a Program, recovering from syntax errors at statement boundaries.
    ``watch``: see Driver.run (given to the first run only, the one that starts at the first token);
    ``cut``: the tokens end at a hard lexer error (CutToken); ``release``: see Driver.release (the list
    is emptied of what was read; NeedTokens where a syntax error or too deep a nesting is met)."""
    driver = Driver(builder, cut=cut)
    driver.release = release
    n = len(tokens)
    try:
        value, err = driver.run(tokens, 0, n, eof_pos, watch=watch)
    except _TooDeep as e:
        builder.diagnostics.append(
            Diagnostic.make(
                "PARSE_TOO_DEEP",
                tokens[e.index].start_pos,
                tokens[e.index].end_pos - tokens[e.index].start_pos,
                {"limit": MAX_STACK},
                file=builder.file,
            )
        )
        return None
    if err is None:
        if builder.had_errors:  # recovered inside bodies: only the definitions that were kept
            kept = set(id(x) for x in ast.walk(value))
            value.definitions = [d for d in builder.definitions if id(d) in kept]
        return value
    return recover_top(driver, tokens, builder, eof_pos, data, value, err, epp)


def recover_top(
    driver: Driver,
    tokens: list[Any],
    builder: Builder,
    eof_pos: int,
    data: bytes,
    value: Any,
    err: int | None,
    epp: bool = False,
    scan: tuple[int, int] = (0, 0),
    definitions: bool = True,
    chunks: Any = None,
    watch: Any = None,
) -> Any:
    """Error recovery at the top level, after a run from the first token met a syntax error there
    (``value``: that run's salvage, ``err``: the error's token index): report it, resume at the next
    statement start (next_resume), parse on, and so on to the end; returns the Program (None for a
    broken template).  ``scan``: a token index at or before ``err`` and the bracket depth before it,
    where next_resume starts scanning (the incremental parser resumes that run mid-file).
    ``definitions=False``: the Program's definitions list is left empty (the caller fills it).
    ``chunks(k, depth, raw)``, if given, is called before each run that resumes at token k: a list it
    returns is the top-level statements of that run and of all the later ones (made before, from the
    same tokens: the incremental parser), and recovery ends there.  ``watch`` is given to those runs
    (Driver.run's)."""
    n = len(tokens)
    raw: list[Any] = []
    report = True
    chunk_start = 0
    scan_from, scan_depth = scan  # the last resume point and the bracket depth before it
    while err is not None:
        kind, got = value or (None, None)
        got = cast(Any, got)
        tok = tokens[err] if err < n else EndToken(eof_pos)
        if report:
            builder.diagnostics.append(
                Diagnostic.make(
                    "SYNTAX_ERROR",
                    tok.start_pos,
                    tok.end_pos - tok.start_pos,
                    {"where": _where(tok)},
                    file=builder.file,
                )
            )
        if kind == "epp":
            tok0, params, stmts = got
            stmts = builder.statements(stmts)
            return builder.epp_program([tok0, params] + ([stmts] if stmts else []))
        if kind == "program":  # a complete template
            return got
        if kind == "stmts":
            raw.extend(builder.statements(got))
        elif kind == "statements":
            raw.extend(got)
        if epp or err >= n:
            break
        k, d = next_resume(tokens, data, scan_from, scan_depth, err, chunk_start, driver.memo)
        if k is None:
            break
        scan_from, scan_depth = k, d or 0
        chunk_start = k
        builder.namestack.clear()
        if chunks is not None:
            rest = chunks(k, scan_depth, raw)
            if rest is not None:
                raw.extend(rest)
                break
        try:
            value, err2 = driver.run(tokens, k, n, eof_pos, watch=watch)
        except _TooDeep:
            break
        # an error right at the resume point is a consequence of the first one: don't report it
        report = err2 is not None and err2 > k
        err = err2
        if err is None:
            raw.extend(_top_statements(value, builder))
    if epp:
        return None
    if not raw:
        return ast.Program(builder.locator, ast.Nop(builder.locator, eof_pos, 0), [])
    body = Builder.block_or_expression(raw, loc=builder.locator)
    prog = ast.Program(builder.locator, body, [])
    if definitions:
        kept = set(id(x) for x in ast.walk(prog))
        prog.definitions = [d for d in builder.definitions if id(d) in kept]
    return prog


def _top_statements(prog: Any, builder: Builder) -> list[Any]:
    """The top-level statements of a (partial) program (none for an empty one)."""
    body = prog.body
    if id(body) in builder.top_blocks:
        return list(body.statements)
    if type(body) is ast.TYPES["Nop"]:
        return []
    return [body]


def fix_positions(root: Any, skip: Any = frozenset(), limit: int = MAX_DEPTH) -> Any:
    """Nodes built without a position take their container's offset, with length 0 (Puppet's rule).
    Nodes whose id() is in skip are not entered (already done).

    Returns the first node nested deeper than limit (below root), or None.  The C accelerator's walk
    (grammar/_accel.c, the same order) does it when it is in use (with ``skip`` when it is a set and the
    build takes one)."""
    if _accel is not None and ACCELERATOR != "Python":
        if not skip:
            return _accel.fix_positions(root, ast.Node, limit)
        if _FIX_SKIP and isinstance(skip, (set, frozenset)):
            return _accel.fix_positions(root, ast.Node, limit, skip)
    stack: list[tuple[Any, int]] = [(root, 0)]
    pop = stack.pop
    push = stack.append
    Node: Any = ast.Node  # (positions are attributes of the concrete node classes)
    too_deep = None
    while stack:
        node, depth = pop()
        if depth > limit and too_deep is None:
            too_deep = node
        if skip and id(node) in skip:
            continue
        o = node.offset if hasattr(node, "offset") else None
        depth += 1
        for f in node._child_fields:
            v = getattr(node, f)
            if v is None:
                continue
            if isinstance(v, list):
                for x in v:
                    if isinstance(x, Node):
                        if x.offset is None:
                            x.offset = o
                            x.length = 0
                        push((x, depth))
            elif isinstance(v, Node):
                if v.offset is None:
                    v.offset = o
                    v.length = 0
                push((v, depth))
    return too_deep


def parse(
    text: str, file: str = "", *, epp: bool | None = None, tasks: bool = False, keep_tokens: bool = True
) -> ParseResult:
    """Parse Puppet source text. Never raises for bad input: problems are diagnostics.

    ``keep_tokens=False``: the result's ``tokens`` is empty, and the tokens are dropped while they are
    parsed (Driver.release), so that they and the tree never all coexist; a text with a syntax error
    (whose recovery reads tokens again) is then lexed and parsed a second time, keeping them."""
    from .gcpause import paused
    from .lexer import Lexer

    if epp is None:
        epp = file.endswith(".epp")
    with paused():
        locator = ast.make_locator(text, file)
        lx = Lexer(text, epp=epp, tasks=tasks)
        if not keep_tokens and lx.tokens() and lx.error is None:
            try:
                result = parse_lexed(locator, lx.tokens(), lx.diagnostics, None, epp=epp, release=True)
            except NeedTokens:
                lx = Lexer(text, epp=epp, tasks=tasks)
            else:
                result.tokens = []
                return result
        result = parse_lexed(locator, lx.tokens(), lx.diagnostics, lx.error, epp=epp)
        if not keep_tokens:
            result.tokens = []
        return result


def failed_unit_start(tokens: list[Any]) -> int:
    """Where the lexing unit that a hard lexer error cut begins.  Puppet stops at the lexer error, so a
    syntax error at or after it is an echo: Puppet scans a heredoc's text with its tag and a
    double-quoted string with all of its interpolations before the parser sees any of their tokens."""
    if not tokens:
        return 0
    depth = 0
    start = None
    for t in tokens:
        if t.type == "DQPRE":
            if depth == 0:
                start = t.start_pos
            depth += 1
        elif t.type == "DQPOST" and depth:
            depth -= 1
    if depth and start is not None:  # (a heredoc in an interpolation fails with its string)
        return int(start)
    if tokens[-1].type == "HEREDOC":
        return int(tokens[-1].start_pos)
    return int(tokens[-1].end_pos) + 1


def parse_lexed(
    locator: Any,
    tokens: list[Any],
    lex_diagnostics: list[Any],
    lex_error: Any = None,
    *,
    epp: bool = False,
    watch: Any = None,
    release: bool = False,
) -> ParseResult:
    """Parse already lexed text (the tokens of ``locator.string``; the lexer's diagnostics and hard
    error).  The tokens are not modified but with ``release`` (:func:`parse`'s ``keep_tokens=False``:
    the list is emptied of what was read, or NeedTokens raised).  ``watch``: see Driver.run (the
    incremental parser records its statement lists with it)."""
    file = locator.file
    diagnostics = list(lex_diagnostics)
    for d in diagnostics:
        d.file = file
    data = locator.source_bytes()
    builder = Builder(locator, file)
    if lex_error is not None and not tokens:
        return ParseResult(None, diagnostics, locator, tokens)
    parsed = tokens
    if lex_error is not None:  # Puppet's parser never reads a token of the lexing unit that failed
        limit = min(lex_error.offset, failed_unit_start(tokens))
        parsed = tokens[: bisect.bisect_left(tokens, limit, key=_start_pos)]
    program = parse_tokens(
        parsed, builder, len(data), data, epp=epp, watch=watch, cut=lex_error is not None, release=release
    )
    builder.transform_dropped()
    diags = builder.diagnostics
    if lex_error is not None:
        diags = [d for d in diags if d.code != "SYNTAX_ERROR" or d.offset < limit]
    diagnostics.extend(diags)
    diagnostics.sort(key=builder.diagnostic_order)
    if program is not None:
        deep = fix_positions(program)
        if deep is not None:
            diagnostics.append(
                Diagnostic.make("PARSE_TOO_DEEP", deep.offset, deep.length, {"limit": MAX_DEPTH}, file=file)
            )
            program = None
    return ParseResult(program, diagnostics, locator, tokens, builder.had_errors)

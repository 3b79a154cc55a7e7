"""The Puppet parser: lexer tokens → lark LALR(1) tables → our own LR driver → the Puppet::AST model.

lark builds the LALR(1) tables from grammar/puppet.lark once per process; the driver below runs them
with the reduce actions of grammar/build.py.  Owning the driver loop gives us:

* speed: no parse tree, one callback per reduction;
* error recovery: a syntax error is reported (Puppet's SYNTAX_ERROR, message and position for the first
  one), then parsing resumes at the next top-level statement boundary, so every independent error is
  reported and the statements that parse are kept in the Program;
* a region API for the language server: `parse_region` parses a run of top-level statements on its own.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field

from lark import Lark
from lark.lexer import Lexer as _LarkLexer
from lark.parsers.lalr_analysis import Shift

from . import ast as A
from .build import Builder
from .issues import Diagnostic

GRAMMAR_FILE = os.path.join(os.path.dirname(__file__), "puppet.lark")
MAX_STACK = 6000  # LR stack depth; deeper nesting gets PARSE_TOO_DEEP instead of exhausting later passes
MAX_DEPTH = 2000  # AST nesting depth (e.g. a chain of 10,000 `+`); every consumer of the AST must cope with it
OPENERS = frozenset(("LBRACE", "SELBRACE", "LBRACK", "LISTSTART", "LPAREN", "WSLPAREN"))
# Tokens a statement plausibly starts with: where recovery may resume parsing.
STARTERS = frozenset((
    "NAME", "VARIABLE", "CLASSREF", "CLASS", "DEFINE", "NODE", "FUNCTION", "TYPE", "PLAN", "APPLY", "IF",
    "UNLESS", "CASE", "AT", "ATAT", "STRING", "DQPRE", "WORD", "LISTSTART", "LBRACE", "WSLPAREN", "NOT",
    "HEREDOC", "NUMBER", "BOOLEAN", "UNDEF", "DEFAULT", "MINUS", "REGEX"))
CLOSERS = frozenset(("RBRACE", "RBRACK", "RPAREN"))


class _NoLexer(_LarkLexer):
    def __init__(self, conf):
        pass

    def lex(self, data):  # pragma: no cover - lark never lexes for us
        return iter(data)


class _End:
    """The end-of-input token."""
    __slots__ = ("start_pos", "end_pos", "value")
    type = "$END"

    def __init__(self, pos):
        self.start_pos = self.end_pos = pos
        self.value = ""


class Tables:
    """LALR(1) tables, compiled once into plain ints for a fast driver.

    ``actions[state][token_type]`` is ``n >= 0`` (shift, go to state n) or ``n < 0`` (reduce rule -n-1);
    ``gotos[state][nonterminal]`` is the state after a reduction; ``rules[i]`` is
    ``(action name, number of symbols, nonterminal)``.
    """

    def __init__(self):
        lk = Lark.open(GRAMMAR_FILE, parser="lalr", lexer=_NoLexer, cache=_cache_path())
        table = lk.parser.parser.parser.parse_table
        rule_index: dict = {}
        rules: list = []
        nstates = max(table.states) + 1
        self.actions = [dict() for _ in range(nstates)]
        self.gotos = [dict() for _ in range(nstates)]
        for st, row in table.states.items():
            acts, gotos = self.actions[st], self.gotos[st]
            for sym, (action, arg) in row.items():
                if action is Shift:
                    if sym.isupper() or sym == "$END":
                        acts[sym] = arg
                    else:
                        gotos[sym] = arg
                else:
                    k = rule_index.get(arg)
                    if k is None:
                        k = rule_index[arg] = len(rules)
                        rules.append(((arg.alias or arg.origin.name), len(arg.expansion), arg.origin.name))
                    acts[sym] = -k - 1
        self.rules = rules
        # racc (Puppet's parser generator) reduces by a state's default rule (its most frequent reduce)
        # on any lookahead it has no entry for, and only then reports the error. Reductions have side
        # effects (Puppet raises some errors from rule actions), so we emulate them on errors.
        self.default_reduce = []
        for acts in self.actions:
            counts: dict = {}
            for v in acts.values():
                if v < 0 and rules[-v - 1][2] != "start":
                    counts[v] = counts.get(v, 0) + 1
            self.default_reduce.append(max(counts, key=lambda k: (counts[k], k)) if counts else None)
        self.start = table.start_states["start"]
        self.end = table.end_states["start"]
        self.goto_stmts = self.gotos[self.start].get("stmts")
        self.goto_statements = self.gotos[self.start].get("statements")


def _cache_path():
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    d = os.path.join(base, "puppet-xpp")
    try:
        os.makedirs(d, exist_ok=True)
        with open(GRAMMAR_FILE, "rb") as f:
            import hashlib
            h = hashlib.sha256(f.read()).hexdigest()[:16]
        return os.path.join(d, f"lark-{h}.cache")
    except OSError:
        return False


_TABLES: Tables | None = None


def tables() -> Tables:
    global _TABLES
    if _TABLES is None:
        _TABLES = Tables()
    return _TABLES


@dataclass
class ParseResult:
    program: object | None  # grammar.ast Program
    diagnostics: list = field(default_factory=list)
    locator: object = None
    tokens: list = field(default_factory=list)

    @property
    def errors(self):
        return [d for d in self.diagnostics if d.severity == "error"]


class _SyntaxError(Exception):
    def __init__(self, index):
        self.index = index


def _where(tok) -> str:
    if tok.type == "$END":
        return "end of input"
    v = tok.value
    return f"'{v}'"


class Driver:
    """Runs the LR tables over a token list with a Builder's actions."""

    def __init__(self, builder: Builder):
        t = tables()
        self.t = t
        self.b = builder
        self.callbacks = [(getattr(builder, name), size, origin) for name, size, origin in t.rules]

    def run(self, tokens, i, n, eof_pos):
        """Parse tokens[i:n] as a program. Returns (value, None) or (salvaged, error_index)."""
        actions = self.t.actions
        gotos = self.t.gotos
        callbacks = self.callbacks
        default_reduce = self.t.default_reduce
        goto_stmts = self.t.goto_stmts
        defaults = 0
        stack = [self.t.start]
        values = []
        end_tok = _End(eof_pos)
        end_state = self.t.end
        while True:
            tok = tokens[i] if i < n else end_tok
            act = actions[stack[-1]].get(tok.type)
            if act is None:
                # racc's default reduction, except between top-level statements, where it would only
                # finish the program before the same error
                act = default_reduce[stack[-1]] if stack[-1] != goto_stmts or len(stack) != 2 else None
                defaults += 1
                if act is None or defaults > 1000:
                    return self.salvage(stack, values), i
            else:
                defaults = 0
            if act >= 0:
                stack.append(act)
                values.append(tok)
                i += 1
                if len(stack) > MAX_STACK:
                    raise _TooDeep(i - 1)
                continue
            fn, size, origin = callbacks[-act - 1]
            if size:
                s = values[-size:]
                del values[-size:]
                del stack[-size:]
            else:
                s = []
            v = fn(s)
            stack.append(gotos[stack[-1]][origin])
            values.append(v)
            if tok is end_tok and stack[-1] == end_state:
                return v, None

    def reduce(self, stack, values, k):
        """Reduce by rule k: pop its symbols, run its action, push the goto state; returns the value.
        (Driver.run inlines this in its loop, the hot path.)"""
        fn, size, origin = self.callbacks[k]
        if size:
            s = values[-size:]
            del values[-size:]
            del stack[-size:]
        else:
            s = []
        v = fn(s)
        stack.append(self.t.gotos[stack[-1]][origin])
        values.append(v)
        return v

    def salvage(self, stack, values):
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
            params = values[1] if len(values) > 1 and (values[1] is None or isinstance(values[1], list)) else None
            gs = t.gotos[stack[2]].get("stmts") if len(stack) > 3 else None
            stmts = values[2] if gs is not None and stack[3] == gs and isinstance(values[2], list) else []
            return ("epp", (values[0], params, stmts))
        return None

    def _completes(self, stack) -> bool:
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
    def __init__(self, index):
        self.index = index


def next_resume(tokens, data, scan_from, depth, err, chunk_start):
    """Where recovery resumes after a syntax error at token `err`: (token index, bracket depth before
    it), or (None, None).  The candidates are tokens that start a statement, stand first on their line
    and lie either outside all brackets or in the first column (top-level code is rarely indented); the
    error token itself qualifies unless the parse started there.  Scanning starts at `scan_from`, a
    token with `depth` open brackets before it (the language server resumes from a boundary too)."""
    n = len(tokens)
    d = depth
    for k in range(scan_from, n):
        t = tokens[k]
        ty = t.type
        if ty in CLOSERS:
            d = max(0, d - 1)
        if (k > err or (k == err and err > chunk_start)) and ty in STARTERS:
            s = t.start_pos
            if (k == 0 or b"\n" in data[tokens[k - 1].end_pos:s]) and (d == 0 or s == 0 or data[s - 1:s] == b"\n"):
                return k, d
        if ty in OPENERS:
            d += 1
    return None, None


def parse_tokens(tokens, builder: Builder, eof_pos: int, data: bytes, epp: bool = False):
    """Parse a token list into a Program, recovering from syntax errors at statement boundaries."""
    driver = Driver(builder)
    n = len(tokens)
    try:
        value, err = driver.run(tokens, 0, n, eof_pos)
    except _TooDeep as e:
        builder.diagnostics.append(Diagnostic.make("PARSE_TOO_DEEP", tokens[e.index].start_pos,
                                                   tokens[e.index].end_pos - tokens[e.index].start_pos,
                                                   {"limit": MAX_STACK}, file=builder.file))
        return None
    if err is None:
        return value
    # --- error recovery ---------------------------------------------------------------------------
    raw: list = []
    report = True
    chunk_start = 0
    scan_from, scan_depth = 0, 0  # the last resume point and the bracket depth before it
    while err is not None:
        kind, got = value or (None, None)
        tok = tokens[err] if err < n else _End(eof_pos)
        if report:
            builder.diagnostics.append(Diagnostic.make(
                "SYNTAX_ERROR", tok.start_pos, tok.end_pos - tok.start_pos, {"where": _where(tok)},
                file=builder.file))
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
        k, d = next_resume(tokens, data, scan_from, scan_depth, err, chunk_start)
        if k is None:
            break
        scan_from, scan_depth = k, d
        chunk_start = k
        builder.namestack.clear()
        try:
            value, err2 = driver.run(tokens, k, n, eof_pos)
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
        return A.TYPES["Program"](builder.locator, A.TYPES["Nop"](builder.locator, eof_pos, 0), [])
    body = Builder.block_or_expression(raw, loc=builder.locator)
    prog = A.TYPES["Program"](builder.locator, body, [])
    kept = set(id(x) for x in A.walk(prog))
    prog.definitions = [d for d in builder.definitions if id(d) in kept]
    return prog


def _top_statements(prog, builder) -> list:
    """The top-level statements of a (partial) program (none for an empty one)."""
    body = prog.body
    if id(body) in builder.top_blocks:
        return body.statements
    if type(body) is A.TYPES["Nop"]:
        return []
    return [body]


def fix_positions(root):
    """Nodes built without a position take their container's offset, with length 0 (Puppet's rule).

    Returns the first node nested deeper than MAX_DEPTH, or None."""
    stack = [(root, 0)]
    pop = stack.pop
    push = stack.append
    Node = A.Node
    too_deep = None
    while stack:
        node, depth = pop()
        if depth > MAX_DEPTH and too_deep is None:
            too_deep = node
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


def parse(text: str, file: str = "", *, epp: bool | None = None, tasks: bool = False) -> ParseResult:
    """Parse Puppet source text. Never raises for bad input: problems are diagnostics."""
    from .lexer import Lexer
    if epp is None:
        epp = file.endswith(".epp")
    locator = A.make_locator(text, file)
    lx = Lexer(text, epp=epp, tasks=tasks)
    tokens = lx.tokens()
    diagnostics = list(lx.diagnostics)
    for d in diagnostics:
        d.file = file
    data = locator._bytes()
    builder = Builder(locator, file)
    if lx.error is not None and not tokens:
        return ParseResult(None, diagnostics, locator, tokens)
    program = parse_tokens(tokens, builder, len(data), data, epp=epp)
    diags = builder.diagnostics
    if lx.error is not None:
        # Puppet stops at the lexer error; a syntax error at the end of the cut token list is its echo.
        diags = [d for d in diags if not (d.code == "SYNTAX_ERROR" and d.offset >= lx.error.offset)]
        diags = [d for d in diags if d.code != "SYNTAX_ERROR" or d.offset < lx.error.offset]
    diagnostics.extend(diags)
    diagnostics.sort(key=lambda d: (d.severity != "error", d.offset if d.offset is not None else -1))
    if program is not None:
        deep = fix_positions(program)
        if deep is not None:
            diagnostics.append(Diagnostic.make("PARSE_TOO_DEEP", deep.offset, deep.length, {"limit": MAX_DEPTH},
                                               file=file))
            program = None
    return ParseResult(program, diagnostics, locator, tokens)

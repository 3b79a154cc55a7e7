"""Tree building: the reduce actions of grammar/puppet.lark.

Each method is called by the LR driver (grammar/parser.py) with the children of one reduced rule and
returns the model value for it.  The actions reproduce Puppet's parser actions and factory rewrites:
positions (byte offset + length, Puppet's `loc` rules and quirks), the paren-less call transform,
resource shapes, unfolded-hash merging, block wrapping, the class name stack and the definitions list.
The flat operand/operator sequences of the grammar are resolved by precedence in grammar/build_operators.py.

A node built without a position gets its container's offset and length 0, as Puppet's factory does;
grammar/parser.py applies that rule once the tree is complete (`offset is None` marks such nodes).
"""

from __future__ import annotations

from typing import Any

from puppet_xpp.grammar import ast
from puppet_xpp.grammar.build_operators import resolve_precedence
from puppet_xpp.grammar.issues import Diagnostic
from puppet_xpp.grammar.lexer import Token, concat_end, name_start
from puppet_xpp.grammar.numbers import to_number
from puppet_xpp.grammar.ruby import regexp_inspect

STATEMENT_CALLS = frozenset(
    (
        "require",
        "realize",
        "include",
        "contain",
        "tag",
        "debug",
        "info",
        "notice",
        "warning",
        "err",
        "fail",
        "import",
        "break",
        "next",
        "return",
    )
)

UNARY = {"NOT": ast.NotExpression, "MINUS": ast.UnaryMinusExpression, "TIMES": ast.UnfoldExpression}


class CommaList(list[Any]):
    """A statement of the form `a, b, c` (only meaningful as the arguments of a paren-less call)."""

    __slots__ = ("commas",)
    commas: list[Any]  # the COMMA tokens


def start(x: Any) -> Any:
    """Start offset of a token or a node (None for a node built without a position)."""
    o = getattr(x, "offset", None)
    return x.start_pos if o is None and hasattr(x, "start_pos") else o


def end(x: Any) -> int:
    """End offset of a token or a node."""
    if hasattr(x, "start_pos"):
        e: int = x.end_pos
    else:
        e = x.offset + x.length
    return e


def _end_or(x: Any, default: int) -> int:
    """end(x), or default for None and a node built without a position."""
    if x is None or (not hasattr(x, "start_pos") and getattr(x, "offset", None) is None):
        return default
    return end(x)


class Builder:
    """Reduce actions. One instance per parse (it carries the name stack and definitions)."""

    def __init__(self, locator: ast.Locator, file: str = ""):
        self.locator = locator
        self.file = file
        self.namestack: list[str] = []
        self.definitions: list[ast.Definition] = []
        self.diagnostics: list[Diagnostic] = []
        # Nodes remembered by id(): each dict holds the node itself as the value, so it stays alive for the
        # whole parse and its id cannot be reused by another object (error recovery frees many nodes).
        self.unfolded: dict[int, ast.LiteralHash] = {}  # LiteralHash nodes made of bare `k => v` arguments
        self.top_blocks: dict[int, ast.BlockExpression] = {}  # blocks made of a program's statement list
        self.had_errors = False  # a syntax error was recovered from inside a body
        # Puppet raises at its first error, so its first error is the first one raised in parse order,
        # not the first by position: the errors raised here sort by where Puppet raises them (the end of
        # the reduced construct), and one raised by a reduction that error recovery makes after a syntax
        # error (Puppet never gets there) after that syntax error.  See diagnostic_order.
        self.stopped_at: int | None = None  # offset of the last syntax error met
        self.order: dict[int, tuple[int, int]] = {}  # id(diagnostic) -> its sort position (see above)
        self._raise_at = -1  # the end of the construct whose transform is running
        self._last_raise = -1  # the sort position of the last error raised (they come in parse order)
        # statement lists whose call transform racc's default reduction runs before it reports a syntax
        # error (the error came right after a complete statement): id(list) -> (list, error offset)
        self.transform_first: dict[int, tuple[list[Any], int]] = {}
        self._raised_before = -1  # in such a transform: errors before this offset are not late

    # --- helpers --------------------------------------------------------------------------------
    def loc(self, node: Any, s: Any, e: Any = None) -> Any:
        node.offset = o = start(s)
        node.length = (end(e) - o) if e is not None else (end(s) - o)
        return node

    def mk(self, cls: Any, s: Any, e: Any, *args: Any) -> Any:
        """A node of class ``cls`` from the start of ``s`` to the end of ``e`` (or of ``s``).  The hot
        path of every reduction: a plain token's offsets are read without start()/end()."""
        o = s.start_pos if type(s) is Token else start(s)
        if e is None:
            e = s
        return cls(self.locator, o, (e.end_pos if type(e) is Token else end(e)) - o, *args)

    def bare(self, cls: Any, *args: Any) -> Any:
        """A node without a position of its own (it inherits its container's, length 0)."""
        return cls(self.locator, None, 0, *args)

    def error(self, code: str, at: Any, args: dict[str, Any] | None = None, raised: Any = None) -> None:
        """Puppet raises here; we record the error and keep building.  raised: the last child of the
        reduced construct (Puppet raises once it is read), when it ends after `at`."""
        o = start(at)
        ln = end(at) - o
        d = Diagnostic.make(code, o, ln, args, file=self.file)
        self.diagnostics.append(d)
        stop = self.stopped_at
        if stop is not None and self._raised_before <= o < stop:
            self.order[id(d)] = (stop, 2)
        elif o < self._raised_before:  # raised by racc's default reduction at that syntax error
            self.order[id(d)] = (self._raise_at, 0)
        else:  # (a node's end may lie before its last token: never before an error raised earlier)
            at = max(o + ln, self._raise_at, _end_or(raised, -1), self._last_raise)
            self._last_raise = at
            self.order[id(d)] = (at, 0)

    def syntax_error_met(self, offset: int, open_list: list[Any] | None) -> None:
        """The driver met a syntax error at offset; what is reduced from now on is error recovery.
        open_list: the statement list just before the error when it ends in a complete statement --
        racc reduces it by default (running the call transform, which may raise) before it reports
        the error, so that transform's errors before the syntax error still come first."""
        self.stopped_at = offset
        if open_list is not None:
            self.transform_first.setdefault(id(open_list), (open_list, offset))

    def transform_dropped(self) -> None:
        """The errors of the call transforms racc ran before a syntax error, for the lists that error
        recovery then dropped (a body left open at the end of the input) instead of reducing them."""
        while self.transform_first:
            raw, _at = next(iter(self.transform_first.values()))
            self.statements(raw)

    def diagnostic_order(self, d: Diagnostic) -> tuple[bool, int, int]:
        """Sort key of the parse diagnostics: errors first, then in the order Puppet would raise them --
        the lexer's and syntax errors by position, the errors raised here by the end of the construct
        whose reduction raises them (before a syntax error at the token after it; in reduction order
        at the same end), an error raised during error recovery right after the syntax error that
        Puppet stops at."""
        key = self.order.get(id(d))
        if key is None:
            return (d.severity != "error", d.offset if d.offset is not None else -1, 1)
        return (d.severity != "error", key[0], key[1])

    def qualify(self, name: str) -> str:
        ns = "::".join(self.namestack)
        full = ns + "::" + name
        return full[2:] if full.startswith("::") else full

    def add_definition(self, d: Any) -> Any:
        self.definitions.append(d)
        return d

    @staticmethod
    def block_or_expression(stmts: list[Any], lbrace: Any = None, rbrace: Any = None, loc: Any = None) -> Any:
        if len(stmts) > 1:
            if lbrace is not None and rbrace is not None:
                o = start(lbrace)
                return ast.BlockExpression(loc, o, end(rbrace) - o, stmts)
            o = start(stmts[0])
            return ast.BlockExpression(loc, o, end(stmts[-1]) - o, stmts)
        return stmts[0]

    def body(self, stmts: list[Any] | None) -> Any:
        """f_build_body: a statement list becomes an unpositioned BlockExpression; none gives None."""
        if stmts is None:
            return None
        return self.bare(ast.BlockExpression, stmts)

    def statements(self, raw: list[Any]) -> list[Any]:
        """Puppet's transform_calls over a raw statement list (the action of `statements`)."""
        first = self.transform_first.pop(id(raw), None)
        self._raised_before = first[1] if first is not None else -1
        last = raw[-1] if raw else None
        self._raise_at = _end_or(last[-1] if isinstance(last, CommaList) else last, -1)
        if first is not None:  # raised then, although recovery let the list grow on after the error
            self._raise_at = min(self._raise_at, first[1])
        try:
            return self._transform_calls(raw)
        finally:
            self._raised_before = self._raise_at = -1

    def _transform_calls(self, raw: list[Any]) -> list[Any]:
        memo: list[Any] = []
        for expr in raw:
            name = memo[-1] if memo else None
            if type(name) is ast.QualifiedName and name.value in STATEMENT_CALLS:
                args = list(expr) if isinstance(expr, CommaList) else [expr]
                o = name.offset
                call = ast.CallNamedFunctionExpression(self.locator, o, end(args[-1]) - o, name, False, args)
                memo[-1] = call
            elif isinstance(expr, CommaList):
                if type(name) is ast.QualifiedName:
                    self.error("PARSE_NOT_CALLABLE_WITHOUT_PARENS", expr.commas[0], {"name": name.value})
                else:
                    self.error("PARSE_ILLEGAL_COMMA", expr.commas[0])
                for e in expr:
                    memo.append(e)
            else:
                memo.append(expr)
                if type(expr) is ast.CallNamedFunctionExpression:
                    expr.rval_required = False
        return memo

    def arguments(self, args: list[Any], arg: Any) -> list[Any]:
        """Factory.ARGUMENTS: adjacent unfolded hashes merge into the first."""
        unfolded = self.unfolded
        if args and id(arg) in unfolded and id(args[-1]) in unfolded:
            args[-1].entries.extend(arg.entries)
        else:
            args.append(arg)
        return args

    # --- program ----------------------------------------------------------------------------------
    def program(self, c: list[Any]) -> Any:
        stmts = c[0]
        body = self.block_or_expression(stmts, loc=self.locator)
        if len(stmts) > 1:
            self.top_blocks[id(body)] = body
        return ast.Program(self.locator, body, self.definitions)

    def empty_program(self, c: list[Any]) -> Any:
        size = len(self.locator.source_bytes())
        return ast.Program(self.locator, ast.Nop(self.locator, size, 0), [])

    def epp_program(self, c: list[Any]) -> Any:
        params = c[1]
        stmts = c[2] if len(c) > 2 else None
        lam = self.mk(ast.LambdaExpression, c[0], None, params if params is not None else [])
        lam.body = self.bare(ast.EppExpression, params is not None, self.body(stmts))
        return ast.Program(self.locator, lam, self.definitions)

    def no_params(self, c: list[Any]) -> Any:
        return None

    def empty_params(self, c: list[Any]) -> Any:
        return []

    def params(self, c: list[Any]) -> Any:
        return c[1]

    # --- statements -------------------------------------------------------------------------------
    def statements_rule(self, c: list[Any]) -> Any:
        return self.statements(c[0])

    def stmts_first(self, c: list[Any]) -> Any:
        return [c[0]]

    def stmts_semi(self, c: list[Any]) -> Any:
        c[0].append(c[2])
        return c[0]

    def stmts_next(self, c: list[Any]) -> Any:
        c[0].append(c[1])
        return c[0]

    def stmt_single(self, c: list[Any]) -> Any:
        return c[0]

    def stmt_comma(self, c: list[Any]) -> Any:
        first = c[0]
        if isinstance(first, CommaList):
            first.append(c[2])
            first.commas.append(c[1])
            return first
        cl = CommaList((first, c[2]))
        cl.commas = [c[1]]
        return cl

    def pass1(self, c: list[Any]) -> Any:
        return c[0]

    def pass2(self, c: list[Any]) -> Any:
        return c[1]

    def none(self, c: list[Any]) -> Any:
        return None

    def assign(self, c: list[Any]) -> Any:
        op = c[1]
        return self.mk(ast.AssignmentExpression, op, None, c[0], c[2], op.value)

    def relation(self, c: list[Any]) -> Any:
        op = c[1]
        return self.mk(ast.RelationshipExpression, op, None, c[0], c[2], op.value)

    # --- resources --------------------------------------------------------------------------------
    def _form(self, c: list[Any], form: str, code: str) -> Any:
        r = c[1]
        if not isinstance(r, ast.AbstractResource):
            self.error(code, c[0], raised=r)
            return r
        r.form = form
        return self.loc(r, c[0], r)

    def virtual(self, c: list[Any]) -> Any:
        return self._form(c, "virtual", "PARSE_VIRTUAL_NOT_RESOURCE")

    def exported(self, c: list[Any]) -> Any:
        return self._form(c, "exported", "PARSE_EXPORTED_NOT_RESOURCE")

    def resource_titled(self, c: list[Any]) -> Any:
        first = self.bare(ast.ResourceBody, c[2], c[4])
        return self.mk(ast.ResourceExpression, c[0], c[6], c[0], "regular", [first] + c[5])

    def class_resource(self, c: list[Any]) -> Any:
        return self.mk(
            ast.ResourceExpression, c[0], c[4], self.bare(ast.QualifiedName, "class"), "regular", c[2]
        )

    def resource_untitled(self, c: list[Any]) -> Any:
        left, lbrace, ops, rbrace = c[0], c[1], c[2], c[4]
        t = type(left)
        if t is ast.QualifiedName:
            entries = []
            for op in ops:
                if type(op) is ast.AttributeOperation:
                    if op.operator == "+>":
                        self.error("PARSE_RESOURCE_WITHOUT_TITLE_PLUS", lbrace, raised=rbrace)
                        return left
                    key = self.bare(ast.LiteralString, op.attribute_name)
                    entries.append(self.bare(ast.KeyedEntry, key, op.value_expr))
                else:
                    entries.append(self.bare(ast.KeyedEntry, self.bare(ast.Nop), op.expr))
            h = self.mk(ast.LiteralHash, lbrace, rbrace, entries)
            result = self.block_or_expression(self.statements([left, h]), loc=self.locator)
        elif t is ast.QualifiedReference:
            result = ast.ResourceDefaultsExpression(self.locator, 0, 0, "regular", left, ops)
        elif t is ast.AccessExpression:
            result = ast.ResourceOverrideExpression(self.locator, 0, 0, left, "regular", ops)
        else:
            self.error("PARSE_NOT_A_RESOURCE", left, raised=rbrace)
            return left
        return self.loc(result, left, rbrace)

    def resource_body(self, c: list[Any]) -> Any:
        return self.bare(ast.ResourceBody, c[0], c[2])

    def no_bodies(self, c: list[Any]) -> Any:
        return []

    def more_bodies(self, c: list[Any]) -> Any:
        return c[2]

    def list_empty(self, c: list[Any]) -> Any:
        return []

    def list_first(self, c: list[Any]) -> Any:
        return [c[0]]

    def list_sep(self, c: list[Any]) -> Any:
        c[0].append(c[2])
        return c[0]

    def list_next(self, c: list[Any]) -> Any:
        c[0].append(c[1])
        return c[0]

    def attr_op(self, c: list[Any]) -> Any:
        return self.mk(ast.AttributeOperation, c[0], c[2], c[0].value, c[1].value, c[2])

    def attrs_op(self, c: list[Any]) -> Any:
        return self.mk(ast.AttributesOperation, c[0], c[2], c[2])

    def attribute_name(self, c: list[Any]) -> Any:
        return c[0]

    def endcomma(self, c: list[Any]) -> Any:
        return None

    endsemi = endcomma

    # --- expressions ------------------------------------------------------------------------------
    def binop(self, c: list[Any]) -> Any:
        return c[0]

    def method_name(self, c: list[Any]) -> Any:
        return c[0]

    def tail_bin(self, c: list[Any]) -> Any:
        return c  # [op_token, operand]

    def tail_sel(self, c: list[Any]) -> Any:
        return ("sel", c[2], c[5] if len(c) > 5 else ())  # entries, postfixes

    def opseq(self, c: list[Any]) -> Any:
        return resolve_precedence(self.locator, [c[0]] + c[1], None, self.apply_postfix)

    def opseq_sel(self, c: list[Any]) -> Any:
        return resolve_precedence(
            self.locator, [c[0]] + (c[1] if len(c) == 4 else []), c[-1], self.apply_postfix
        )

    def selector_entry(self, c: list[Any]) -> Any:
        return self.mk(ast.SelectorEntry, c[1], None, c[0], c[2])

    def unary_op(self, c: list[Any]) -> Any:
        return self.mk(UNARY[c[0].type], c[0], None, c[1])

    def postfix_chain(self, c: list[Any]) -> Any:
        node = c[0]
        for pf in c[1]:
            node = self.apply_postfix(node, pf)
        return node

    def apply_postfix(self, left: Any, pf: Any) -> Any:
        kind = pf[0]
        loc = self.locator
        o = left.offset
        if kind == "access":
            return ast.AccessExpression(loc, o, end(pf[2]) - o, left, pf[1])
        if kind == "call":
            last = pf[3] if pf[3] is not None else pf[2]
            return ast.CallNamedFunctionExpression(loc, o, end(last) - o, left, True, pf[1], pf[3])
        if kind == "dot":
            _, dot, name, paren, args, lam = pf
            na = self.mk(ast.NamedAccessExpression, dot, name, left, self.bare(ast.QualifiedName, name.value))
            if paren is None:
                call = ast.CallMethodExpression(loc, na.offset, na.length, na, True, [], lam)
            else:
                lp, rp = paren
                call = self.mk(ast.CallMethodExpression, lp, rp, na, True, args, lam)
            return call
        # collect
        _, qcls, lq, query, rq, ops, rbrace = pf
        q = self.mk(qcls, lq, rq, query)
        return CollectExpression(loc, o, end(rbrace if rbrace is not None else rq) - o, left, q, ops)

    def p_access(self, c: list[Any]) -> Any:
        return ("access", c[1], c[3])

    def p_call(self, c: list[Any]) -> Any:
        return ("call", c[1], c[3], None)

    def p_call0(self, c: list[Any]) -> Any:
        return ("call", [], c[1], None)

    def p_call_l(self, c: list[Any]) -> Any:
        return ("call", c[1], c[3], c[4])

    def p_call0_l(self, c: list[Any]) -> Any:
        return ("call", [], c[1], c[2])

    def p_dot(self, c: list[Any]) -> Any:
        return ("dot", c[0], c[1], None, [], None)

    def p_dot_l(self, c: list[Any]) -> Any:
        return ("dot", c[0], c[1], None, [], c[2])

    def p_method(self, c: list[Any]) -> Any:
        return ("dot", c[0], c[1], (c[2], c[4]), c[3], None)

    def p_method_l(self, c: list[Any]) -> Any:
        return ("dot", c[0], c[1], (c[2], c[4]), c[3], c[5])

    def p_method0(self, c: list[Any]) -> Any:
        # Puppet's action names a 4th value that does not exist: the call covers only the `(`.
        return ("dot", c[0], c[1], (c[2], c[2]), [], None)

    def p_method0_l(self, c: list[Any]) -> Any:
        return ("dot", c[0], c[1], (c[2], c[2]), [], c[4])

    def _collect(self, c: list[Any], ops: list[Any], rbrace: Any) -> Any:
        lq = c[0]
        if len(c) >= 3 and not hasattr(c[1], "start_pos"):
            query, rq = c[1], c[2]
        else:
            query, rq = None, c[1]
        qcls = ast.VirtualQuery if lq.type == "LCOLLECT" else ast.ExportedQuery
        return ("collect", qcls, lq, query, rq, ops, rbrace)

    def p_collect(self, c: list[Any]) -> Any:
        return self._collect(c, [], None)

    def p_collect_ops(self, c: list[Any]) -> Any:
        return self._collect(c[:-4], c[-3], c[-1])

    def args_first(self, c: list[Any]) -> Any:
        return [c[0]]

    def args_next(self, c: list[Any]) -> Any:
        return self.arguments(c[0], c[2])

    def unfolded_hash(self, c: list[Any]) -> Any:
        e = c[0]
        h = ast.LiteralHash(self.locator, e.offset, e.length, [e])
        self.unfolded[id(h)] = h
        return h

    def lambda_expr(self, c: list[Any]) -> Any:
        pipe, rbrace = c[0], c[-1]
        if not isinstance(c[1], list):  # ||
            params, rtype, rest = [], c[2], c[3:]
        else:
            params, rtype, rest = c[1], c[4], c[5:]
        stmts = rest[1] if len(rest) == 3 else None
        return self.mk(ast.LambdaExpression, pipe, rbrace, params, self.body(stmts), rtype)

    # --- primaries --------------------------------------------------------------------------------
    def primary(self, c: list[Any]) -> Any:
        return c[0]

    def variable(self, c: list[Any]) -> Any:
        t = c[0]
        o = t.start_pos
        ln = t.end_pos - o
        qn = ast.QualifiedName(self.locator, name_start(t), ln - 1, t.value)
        return ast.VariableExpression(self.locator, o, ln, qn)

    def number(self, c: list[Any]) -> Any:
        t = c[0]
        value, radix = to_number(t.value)
        o = t.start_pos
        if isinstance(value, float):
            return ast.LiteralFloat(self.locator, o, t.end_pos - o, value)
        return ast.LiteralInteger(self.locator, o, t.end_pos - o, value, radix)

    def boolean(self, c: list[Any]) -> Any:
        return self.mk(ast.LiteralBoolean, c[0], None, c[0].value == "true")

    def default(self, c: list[Any]) -> Any:
        return self.mk(ast.LiteralDefault, c[0], None)

    def undef(self, c: list[Any]) -> Any:
        return self.mk(ast.LiteralUndef, c[0], None)

    def qname(self, c: list[Any]) -> Any:
        return self.mk(ast.QualifiedName, c[0], None, c[0].value)

    def string(self, c: list[Any]) -> Any:
        return self.mk(ast.LiteralString, c[0], None, c[0].value)

    keyword_string = string

    def qref(self, c: list[Any]) -> Any:
        return self.mk(ast.QualifiedReference, c[0], None, c[0].value)

    def regex(self, c: list[Any]) -> Any:
        t = c[0]
        return self.mk(ast.LiteralRegularExpression, t, None, ast.Regexp(t.value), regexp_inspect(t.value))

    def reserved(self, c: list[Any]) -> Any:
        return self.mk(ast.ReservedWord, c[0], None, c[0].value, False)

    def array(self, c: list[Any]) -> Any:
        return self.mk(ast.LiteralList, c[0], c[-1], c[1])

    def array_empty(self, c: list[Any]) -> Any:
        return self.mk(ast.LiteralList, c[0], c[1], [])

    def hash(self, c: list[Any]) -> Any:
        return self.mk(ast.LiteralHash, c[0], c[-1], c[1])

    def hash_empty(self, c: list[Any]) -> Any:
        return self.mk(ast.LiteralHash, c[0], c[1], [])

    def keyed_entry(self, c: list[Any]) -> Any:
        return self.mk(ast.KeyedEntry, c[1], None, c[0], c[2])

    def paren(self, c: list[Any]) -> Any:
        return self.mk(ast.ParenthesizedExpression, c[0], None, c[1])

    def _type_call(self, tok: Any, args: list[Any], last: Any, lam: Any) -> Any:
        fn = self.mk(ast.QualifiedName, tok, None, tok.value)
        return self.mk(ast.CallNamedFunctionExpression, tok, last, fn, True, args, lam)

    def type_call(self, c: list[Any]) -> Any:
        return self._type_call(c[0], c[2], c[4], None)

    def type_call0(self, c: list[Any]) -> Any:
        return self._type_call(c[0], [], c[2], None)

    def type_call_l(self, c: list[Any]) -> Any:
        return self._type_call(c[0], c[2], c[5], c[5])

    def type_call0_l(self, c: list[Any]) -> Any:
        return self._type_call(c[0], [], c[3], c[3])

    def dq_string(self, c: list[Any]) -> Any:
        pre = c[0]
        segs = [self.mk(ast.LiteralString, pre, None, pre.value)] if pre.value else []
        rest = c[1]  # segments (None: an empty one, dropped as Puppet drops it), then the string's end
        segs.extend(x for x in rest[:-1] if x is not None)
        o = pre.start_pos
        return ast.ConcatenatedString(self.locator, o, rest[-1] - o, segs)

    def _text(self, expr: Any) -> Any:
        return self.bare(ast.TextExpression, interpolate(self, expr))

    def _segment(self, tok: Any) -> Any:
        return self.mk(ast.LiteralString, tok, None, tok.value) if tok.value else None

    def dq_last(self, c: list[Any]) -> Any:
        # the list ends with where the string ends (for heredocs with a margin: Puppet's mapped end)
        return [self._text(c[0]), self._segment(c[1]), concat_end(c[1])]

    def dq_more(self, c: list[Any]) -> Any:
        return [self._text(c[0]), self._segment(c[1])] + c[2]

    def heredoc(self, c: list[Any]) -> Any:
        text = c[1]
        if hasattr(text, "start_pos"):  # STRING token
            text = self.mk(ast.LiteralString, text, None, text.value)
        return self.mk(ast.HeredocExpression, c[0], None, text, c[0].value)

    def render_string(self, c: list[Any]) -> Any:
        return self.mk(ast.RenderStringExpression, c[0], None, c[0].value)

    def render_expr(self, c: list[Any]) -> Any:
        return self.mk(ast.RenderExpression, c[0], c[2], c[1])

    def render_block(self, c: list[Any]) -> Any:
        stmts = c[2]
        return self.mk(
            ast.RenderExpression, c[0], c[4], self.block_or_expression(stmts, c[1], c[3], self.locator)
        )

    def epp_end(self, c: list[Any]) -> Any:
        return c[0]

    # --- conditionals ---------------------------------------------------------------------------
    def if_expr(self, c: list[Any]) -> Any:
        return self.loc(c[1], c[0], c[1])

    def if_part(self, c: list[Any]) -> Any:
        test, lb, stmts, rb, els = c
        then = self.block_or_expression(stmts, lb, rb, self.locator)
        return self.mk(ast.IfExpression, test, els if els is not None else rb, test, then, els)

    def if_part_empty(self, c: list[Any]) -> Any:
        test, lb, rb, els = c
        return self.mk(ast.IfExpression, test, els if els is not None else rb, test, None, els)

    def no_else(self, c: list[Any]) -> Any:
        return None

    def no_else_tok(self, c: list[Any]) -> Any:
        return None

    def elsif(self, c: list[Any]) -> Any:
        return self.loc(c[1], c[0], c[1])

    def else_block(self, c: list[Any]) -> Any:
        return self.block_or_expression(c[2], c[1], c[3], self.locator)

    def unless_expr(self, c: list[Any]) -> Any:
        kw, test, lb, stmts, rb, els = c
        then = self.block_or_expression(stmts, lb, rb, self.locator)
        return self.mk(ast.UnlessExpression, kw, rb, test, then, els)

    def unless_empty(self, c: list[Any]) -> Any:
        kw, test, lb, rb, els = c
        # Puppet's action ends this one at its 5th value, the else part (or the keyword when there is none)
        return self.mk(ast.UnlessExpression, kw, els, test, None, els)

    def case_expr(self, c: list[Any]) -> Any:
        return self.mk(ast.CaseExpression, c[0], c[4], c[1], c[3])

    def case_option(self, c: list[Any]) -> Any:
        stmts = c[3] if len(c) == 5 else None
        return self.mk(ast.CaseOption, c[1], c[-1], c[0], self.body(stmts))

    # --- definitions ------------------------------------------------------------------------------
    def _body_of(self, c: list[Any], lbrace_index: int) -> Any:
        """Statements between `{` at lbrace_index and the final `}` (None when empty)."""
        return c[lbrace_index + 1] if len(c) - lbrace_index == 3 else None

    def classname(self, c: list[Any]) -> Any:
        t = c[0]
        if t.type == "CLASS":
            self.error("PARSE_CLASS_KEYWORD", t)
        elif t.type == "STRING":
            self.error("PARSE_QUOTED_NAME", t)
        return t

    def stacked_classname(self, c: list[Any]) -> Any:
        self.namestack.append(c[0].value)
        return c[0]

    def define(self, c: list[Any]) -> Any:
        name = self.qualify(c[1].value)
        d = self.mk(ast.ResourceTypeDefinition, c[0], c[-1], name, c[2], self.body(self._body_of(c, 3)))
        return self.add_definition(d)

    def hostclass(self, c: list[Any]) -> Any:
        self.namestack.pop()
        name = self.qualify(c[1].value)
        parent = c[3].value if c[3] is not None else None
        d = self.mk(ast.HostClassDefinition, c[0], c[-1], name, c[2], self.body(self._body_of(c, 4)), parent)
        return self.add_definition(d)

    def plan(self, c: list[Any]) -> Any:
        self.namestack.pop()
        name = self.qualify(c[1].value)
        d = self.mk(ast.PlanDefinition, c[0], c[-1], name, c[2], self.body(self._body_of(c, 3)))
        return self.add_definition(d)

    def apply(self, c: list[Any]) -> Any:
        stmts = c[6] if len(c) == 8 else []
        blk = self.bare(ast.ApplyBlockExpression, stmts)
        return self.mk(ast.ApplyExpression, c[0], c[-1], c[2], blk)

    def function(self, c: list[Any]) -> Any:
        d = self.mk(
            ast.FunctionDefinition, c[0], c[-1], c[1].value, c[2], self.body(self._body_of(c, 4)), c[3]
        )
        return self.add_definition(d)

    def node(self, c: list[Any]) -> Any:
        d = self.mk(ast.NodeDefinition, c[0], c[-1], c[1], c[3], self.body(self._body_of(c, 4)))
        return self.add_definition(d)

    def dotted_first(self, c: list[Any]) -> Any:
        return self.mk(ast.LiteralString, c[0], None, c[0].value)

    def dotted_next(self, c: list[Any]) -> Any:
        return self.mk(ast.LiteralString, c[0], c[2], c[0].value + "." + c[2].value)

    def name_or_number(self, c: list[Any]) -> Any:
        return c[0]

    def return_type(self, c: list[Any]) -> Any:
        return self.qref(c[1:])

    def return_type_access(self, c: list[Any]) -> Any:
        t = self.qref(c[1:])
        return ast.AccessExpression(self.locator, t.offset, end(c[4]) - t.offset, t, c[3])

    def typed_parameter(self, c: list[Any]) -> Any:
        c[1].type_expr = c[0]
        return c[1]

    def param_default(self, c: list[Any]) -> Any:
        return self.mk(ast.Parameter, c[0], None, c[0].value, c[2])

    def param(self, c: list[Any]) -> Any:
        return self.mk(ast.Parameter, c[0], None, c[0].value)

    def param_rest_default(self, c: list[Any]) -> Any:
        return self.mk(ast.Parameter, c[1], None, c[1].value, c[3], None, True)

    def param_rest(self, c: list[Any]) -> Any:
        return self.mk(ast.Parameter, c[1], None, c[1].value, None, None, True)

    def param_type_access(self, c: list[Any]) -> Any:
        t = self.qref(c)
        return ast.AccessExpression(self.locator, t.offset, end(c[3]) - t.offset, t, c[2])

    def _type_assignment(self, lhs: Any, rhs: Any, s: Any, e: Any) -> Any:
        d: ast.Definition
        if type(lhs) is ast.AccessExpression:
            d = ast.TypeMapping(self.locator, 0, 0, lhs, rhs)
        else:
            d = ast.TypeAlias(self.locator, 0, 0, lhs.cased_value, type_alias_rhs(self, rhs))
        self.loc(d, s, e)
        return self.add_definition(d)

    def type_alias_hash(self, c: list[Any]) -> Any:
        ref = self.qref(c[3:])
        entry = self.bare(ast.KeyedEntry, ref, c[4])
        return self._type_assignment(c[1], entry, c[1], c[4])

    def type_alias_access(self, c: list[Any]) -> Any:
        ref = self.qref(c[3:])
        acc = self.bare(ast.AccessExpression, ref, c[5])
        return self._type_assignment(c[1], acc, c[1], None)

    def type_alias_ref(self, c: list[Any]) -> Any:
        ref = self.qref(c[3:])
        return self._type_assignment(c[1], ref, c[1], ref)

    def type_alias_plain_hash(self, c: list[Any]) -> Any:
        return self._type_assignment(c[1], c[3], c[1], c[3])

    def type_alias_array(self, c: list[Any]) -> Any:
        return self._type_assignment(c[1], c[3], c[1], None)

    def type_definition(self, c: list[Any]) -> Any:
        d = self.mk(ast.TypeDefinition, c[0], c[-1], c[1].value, None, self.body(self._body_of(c, 2)))
        return self.add_definition(d)

    def type_definition_inherits(self, c: list[Any]) -> Any:
        d = self.mk(ast.TypeDefinition, c[0], c[-1], c[1].value, c[3].value, self.body(self._body_of(c, 4)))
        return self.add_definition(d)


CollectExpression = ast.CollectExpression


def interpolate(b: Builder, expr: Any) -> Any:
    """Factory#interpolate: a bare name (or decimal integer) left-most in an interpolation is a variable."""
    t = type(expr)
    if t is ast.QualifiedName or (t is ast.LiteralInteger and expr.radix == 10):
        return b.bare(ast.VariableExpression, expr)
    if t is ast.AccessExpression or t is ast.NamedAccessExpression:
        if _rewriteable(expr.left_expr):
            expr.left_expr = interpolate(b, expr.left_expr)
    elif t is ast.CallMethodExpression:
        if _rewriteable(expr.functor_expr):
            expr.functor_expr = interpolate(b, expr.functor_expr)
    return expr


def _rewriteable(o: Any) -> bool:
    t = type(o)
    if t in (ast.AccessExpression, ast.QualifiedName, ast.NamedAccessExpression, ast.CallMethodExpression):
        return True
    return t is ast.LiteralInteger and o.radix == 10


def type_alias_rhs(b: Builder, rhs: Any) -> Any:
    """Factory#build_TypeAlias: `T {…}` and `{…}` become `Object[{…}]` (with parent => T)."""
    t = type(rhs)
    if t is ast.KeyedEntry:
        parent, h = rhs.key, rhs.value
        if parent.cased_value not in ("Object", "TypeSet"):
            h.entries.append(b.bare(ast.KeyedEntry, b.bare(ast.QualifiedName, "parent"), parent))
            parent = b.bare(ast.QualifiedReference, "Object")
        return b.bare(ast.AccessExpression, parent, [h])
    if t is ast.LiteralHash:
        return b.bare(ast.AccessExpression, b.bare(ast.QualifiedReference, "Object"), [rhs])
    return rhs

"""PN (Puppet Extended S-Expression Notation) of the AST, as `puppet parser dump --format pn|json` prints it.

The transform is a table from AST type name to a function; PN values are small tuples:
``("lit", v)``, ``("list", [..])``, ``("map", [(key, v), ..])``, ``("call", name, [..])``.
`to_data` gives the JSON data form, `to_text` the PN text (optionally indented like `--pretty`).

Deliberate difference: Puppet 7.23 crashes dumping a captures-rest parameter (`*$x`); we print the
intended `{:splat true}` entry.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from typing import Any

from puppet_xpp.grammar import ast
from puppet_xpp.grammar.numbers import decimal_text
from puppet_xpp.grammar.ruby import float_to_s

#: a PN value: ("lit", v) | ("list", [PN]) | ("map", [(key, PN)]) | ("call", name, [PN])
PN = tuple[Any, ...]
Transform = Callable[[Any], PN]


def lit(v: Any) -> PN:
    return ("lit", v)


def call(name: str, *elems: PN) -> PN:
    return ("call", name, list(elems))


def lst(elems: Iterable[PN]) -> PN:
    return ("list", list(elems))


def mp(entries: list[tuple[str, PN]]) -> PN:
    return ("map", entries)


def _t(e: Any) -> PN:
    if e is None:
        return call("nop")
    if isinstance(e, list):
        return lst(_t(x) for x in e)
    return _TRANSFORM[type(e)](e)


def _as_call(name: str, pn: PN) -> PN:
    """PN#as_call: a list's elements (or a single value) become the call's arguments."""
    if pn[0] == "list":
        return ("call", name, pn[1])
    if pn[0] == "call":
        return ("call", name, pn[2])
    return ("call", name, [pn])


def _binary(op: str) -> Transform:
    return lambda e: call(op, _t(e.left_expr), _t(e.right_expr))


def _opbin(e: Any) -> PN:
    return call(e.operator, _t(e.left_expr), _t(e.right_expr))


def _block_entry(name: str, e: Any) -> tuple[str, PN]:
    if type(e) is ast.BlockExpression or type(e) is ast.ApplyBlockExpression:
        return (name, _t(e.statements))
    return (name, lst([_t(e)]))


def _nop(e: Any) -> bool:
    return e is None or type(e) is ast.Nop


def _call_pn(r: str, nr: str) -> Transform:
    def f(e: Any) -> PN:
        entries: list[tuple[str, PN]] = [("functor", _t(e.functor_expr)), ("args", _t(e.arguments))]
        if e.lambda_ is not None:
            entries.append(("block", _t(e.lambda_)))
        return _as_call(r if e.rval_required else nr, mp(entries))

    return f


def _params(parameters: list[ast.Parameter]) -> tuple[str, PN]:
    out: list[tuple[str, PN]] = []
    for p in parameters:
        entries: list[tuple[str, PN]] = []
        if p.type_expr is not None:
            entries.append(("type", _t(p.type_expr)))
        if p.captures_rest:
            entries.append(("splat", lit(True)))
        if p.value is not None:
            entries.append(("value", _t(p.value)))
        out.append((p.name, mp(entries)))
    return ("params", mp(out))


def _definition(kind: str, parent_attr: str | None = None, returns: bool = False) -> Transform:
    def f(e: Any) -> PN:
        entries: list[tuple[str, PN]] = [("name", lit(e.name))]
        parent = getattr(e, parent_attr) if parent_attr else None
        if parent is not None:
            entries.append(("parent", lit(parent)))
        if e.parameters:
            entries.append(_params(e.parameters))
        if e.body is not None:
            entries.append(_block_entry("body", e.body))
        if returns and e.return_type is not None:
            entries.append(("returns", _t(e.return_type)))
        return _as_call(kind, mp(entries))

    return f


def _if(name: str) -> Transform:
    def f(e: Any) -> PN:
        entries: list[tuple[str, PN]] = [("test", _t(e.test))]
        if not _nop(e.then_expr):
            entries.append(_block_entry("then", e.then_expr))
        if not _nop(e.else_expr):
            entries.append(_block_entry("else", e.else_expr))
        return _as_call(name, mp(entries))

    return f


def _form(entries: list[tuple[str, PN]], e: Any) -> list[tuple[str, PN]]:
    if e.form != "regular":
        entries.append(("form", lit(e.form)))
    return entries


def _unary_minus(e: Any) -> PN:
    x = e.expr
    if type(x) in (ast.LiteralInteger, ast.LiteralFloat):
        return lit(-x.value)
    return call("-", _t(x))


def _integer(e: Any) -> PN:
    if e.radix == 10:
        return lit(e.value)
    return _as_call("int", mp([("radix", lit(e.radix)), ("value", lit(e.value))]))


def _lambda(e: Any) -> PN:
    entries: list[tuple[str, PN]] = []
    if e.parameters:
        entries.append(_params(e.parameters))
    if e.return_type is not None:
        entries.append(("returns", _t(e.return_type)))
    if e.body is not None:
        entries.append(_block_entry("body", e.body))
    return _as_call("lambda", mp(entries))


def _node(e: Any) -> PN:
    entries: list[tuple[str, PN]] = [("matches", _t(e.host_matches))]
    if e.parent is not None:
        entries.append(("parent", _t(e.parent)))
    if e.body is not None:
        entries.append(_block_entry("body", e.body))
    return _as_call("node", mp(entries))


def _heredoc(e: Any) -> PN:
    entries: list[tuple[str, PN]] = []
    if e.syntax != "":
        entries.append(("syntax", lit(e.syntax)))
    entries.append(("text", _t(e.text_expr)))
    return _as_call("heredoc", mp(entries))


def _collect(e: Any) -> PN:
    entries: list[tuple[str, PN]] = [("type", _t(e.type_expr)), ("query", _t(e.query))]
    if e.operations:
        entries.append(("ops", _t(e.operations)))
    return _as_call("collect", mp(entries))


def _query(name: str) -> Transform:
    return lambda e: call(name) if _nop(e.expr) else call(name, _t(e.expr))


def _resource(e: Any) -> PN:
    bodies = [mp([("title", _t(b.title)), ("ops", _t(b.operations))]) for b in e.bodies]
    return _as_call("resource", mp(_form([("type", _t(e.type_name)), ("bodies", lst(bodies))], e)))


def _var(e: Any) -> PN:
    x = e.expr
    return call("var", lit(x.value) if type(x) is ast.QualifiedName else _t(x))


_TRANSFORM: dict[type[ast.Node], Transform] = {
    ast.AccessExpression: lambda e: ("call", "access", [_t(e.left_expr)] + [_t(k) for k in e.keys]),
    ast.AndExpression: _binary("and"),
    ast.ArithmeticExpression: _opbin,
    ast.AssignmentExpression: _opbin,
    ast.AttributeOperation: lambda e: call(e.operator, lit(e.attribute_name), _t(e.value_expr)),
    ast.AttributesOperation: lambda e: call("splat-hash", _t(e.expr)),
    ast.BlockExpression: lambda e: _as_call("block", _t(e.statements)),
    ast.ApplyBlockExpression: lambda e: _as_call("block", _t(e.statements)),
    ast.CallFunctionExpression: _call_pn("call-lambda", "invoke-lambda"),
    ast.CallMethodExpression: _call_pn("call-method", "invoke-method"),
    ast.CallNamedFunctionExpression: _call_pn("call", "invoke"),
    ast.CaseExpression: lambda e: call("case", _t(e.test), _t(e.options)),
    ast.CaseOption: lambda e: mp([("when", _t(e.values)), _block_entry("then", e.then_expr)]),
    ast.CollectExpression: _collect,
    ast.ComparisonExpression: _opbin,
    ast.ConcatenatedString: lambda e: _as_call("concat", _t(e.segments)),
    ast.EppExpression: lambda e: call("epp") if e.body is None else _as_call("epp", _t(e.body)),
    ast.ExportedQuery: _query("exported-query"),
    ast.FunctionDefinition: _definition("function", returns=True),
    ast.HeredocExpression: _heredoc,
    ast.HostClassDefinition: _definition("class", "parent_class"),
    ast.IfExpression: _if("if"),
    ast.InExpression: _binary("in"),
    ast.KeyedEntry: lambda e: call("=>", _t(e.key), _t(e.value)),
    ast.LambdaExpression: _lambda,
    ast.LiteralBoolean: lambda e: lit(e.value),
    ast.LiteralDefault: lambda e: call("default"),
    ast.LiteralFloat: lambda e: lit(e.value),
    ast.LiteralHash: lambda e: _as_call("hash", _t(e.entries)),
    ast.LiteralInteger: _integer,
    ast.LiteralList: lambda e: _as_call("array", _t(e.values)),
    ast.LiteralRegularExpression: lambda e: _as_call("regexp", lit(e.value.source)),
    ast.LiteralString: lambda e: lit(e.value),
    ast.LiteralUndef: lambda e: lit(None),
    ast.MatchExpression: _opbin,
    ast.NamedAccessExpression: _binary("."),
    ast.NodeDefinition: _node,
    ast.Nop: lambda e: call("nop"),
    ast.NotExpression: lambda e: call("!", _t(e.expr)),
    ast.OrExpression: _binary("or"),
    ast.ParenthesizedExpression: lambda e: call("paren", _t(e.expr)),
    ast.PlanDefinition: _definition("plan", returns=True),
    ast.Program: lambda e: _t(e.body),
    ast.QualifiedName: lambda e: call("qn", lit(e.value)),
    ast.QualifiedReference: lambda e: call("qr", lit(e.cased_value)),
    ast.RelationshipExpression: _opbin,
    ast.RenderExpression: lambda e: call("render", _t(e.expr)),
    ast.RenderStringExpression: lambda e: _as_call("render-s", lit(e.value)),
    ast.ReservedWord: lambda e: _as_call("reserved", lit(e.word)),
    ast.ResourceDefaultsExpression: lambda e: _as_call(
        "resource-defaults", mp(_form([("type", _t(e.type_ref)), ("ops", _t(e.operations))], e))
    ),
    ast.ResourceExpression: _resource,
    ast.ResourceOverrideExpression: lambda e: _as_call(
        "resource-override", mp(_form([("resources", _t(e.resources)), ("ops", _t(e.operations))], e))
    ),
    ast.ResourceTypeDefinition: _definition("define"),
    ast.SelectorEntry: lambda e: call("=>", _t(e.matching_expr), _t(e.value_expr)),
    ast.SelectorExpression: lambda e: call("?", _t(e.left_expr), _t(e.selectors)),
    ast.TextExpression: lambda e: call("str", _t(e.expr)),
    ast.TypeAlias: lambda e: call("type-alias", lit(e.name), _t(e.type_expr)),
    ast.TypeDefinition: lambda e: call("type-definition", lit(e.name), lit(e.parent), _t(e.body)),
    ast.TypeMapping: lambda e: call("type-mapping", _t(e.type_expr), _t(e.mapping_expr)),
    ast.UnaryMinusExpression: _unary_minus,
    ast.UnfoldExpression: lambda e: call("unfold", _t(e.expr)),
    ast.UnlessExpression: _if("unless"),
    ast.VariableExpression: _var,
    ast.VirtualQuery: _query("virtual-query"),
    ast.Parameter: lambda e: _params([e])[1][1][0][1],
    ast.ResourceBody: lambda e: _as_call(
        "resource_body", mp([("title", _t(e.title)), ("ops", _t(e.operations))])
    ),
    ast.ApplyExpression: lambda e: _as_call(
        "apply", mp([("args", _t(e.arguments)), _block_entry("body", e.body)])
    ),
}
_missing = set(ast.CONCRETE.values()) - set(_TRANSFORM) - {ast.Locator}
assert not _missing, _missing


def transform(node: ast.Node) -> PN:
    """PN of an AST node (a Program gives the PN of its body)."""
    return _t(node)


def to_data(pn: PN) -> Any:
    kind = pn[0]
    if kind == "lit":
        return pn[1]
    if kind == "list":
        return [to_data(x) for x in pn[1]]
    if kind == "map":
        out = []
        for k, v in pn[1]:
            out.append(k)
            out.append(to_data(v))
        return {"#": out}
    return {"^": [pn[1]] + [to_data(x) for x in pn[2]]}


def _quote(s: str) -> str:
    out = ['"']
    for ch in s:
        c = ord(ch)
        if ch == "\t":
            out.append("\\t")
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\r":
            out.append("\\r")
        elif ch == '"':
            out.append('\\"')
        elif ch == "\\":
            out.append("\\\\")
        elif c < 0x20:
            out.append(f"\\o{c:03o}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def _lit_text(v: Any) -> str:
    if v is None:
        return "nil"
    if v is True:
        return "true"
    if v is False:
        return "false"
    if isinstance(v, str):
        return _quote(v)
    if isinstance(v, float):
        return float_to_s(v)
    if isinstance(v, int):
        return decimal_text(v)  # any length: str() stops at CPython's digit limit
    return str(v)


def to_text(pn: PN, pretty: bool = False) -> str:
    out: list[str] = []
    _fmt(pn, "" if pretty else None, out)
    return "".join(out)


def _fmt(pn: PN, indent: str | None, b: list[str]) -> None:
    kind = pn[0]
    if kind == "lit":
        b.append(_lit_text(pn[1]))
    elif kind == "list":
        b.append("[")
        _elements(pn[1], None if indent is None else indent + "  ", b)
        b.append("]")
    elif kind == "map":
        local = None if indent is None else indent + "  "
        b.append("{")
        for i, (k, v) in enumerate(pn[1]):
            if local is not None:
                b.append("\n" + local)
            elif i:
                b.append(" ")
            b.append(":" + k + " ")
            _fmt(v, local, b)
        b.append("}")
    else:
        b.append("(" + pn[1])
        if pn[2]:
            if indent is None:
                b.append(" ")
            _elements(pn[2], None if indent is None else indent + "  ", b)
        b.append(")")


def _elements(elems: list[PN], indent: str | None, b: list[str]) -> None:
    for i, e in enumerate(elems):
        if indent is not None:
            b.append("\n" + indent)
        elif i:
            b.append(" ")
        _fmt(e, indent, b)


def to_json(data: Any, pretty: bool = False) -> str:
    """JSON as Ruby's JSON.dump writes it (floats in Ruby's notation, integers of any length), or with
    ``pretty`` as JSON.pretty_generate lays it out (two-space indent, ``"key": value``), which is what
    ``puppet parser dump --format json --pretty`` prints; Python's json module would write floats in
    Python's notation (``1e+20`` where Ruby writes ``1.0e+20``) and refuse integers over 4,300 digits."""
    parts: list[str] = []
    _json(data, "\n" if pretty else None, parts)
    return "".join(parts)


def _json(data: Any, newline: str | None, b: list[str]) -> None:
    if isinstance(data, (dict, list)) and data:
        inner = None if newline is None else newline + "  "
        is_map = isinstance(data, dict)
        b.append("{" if is_map else "[")
        items = data.items() if isinstance(data, dict) else enumerate(data)
        for i, (key, value) in enumerate(items):
            if i:
                b.append(",")
            if inner is not None:
                b.append(inner)
            if is_map:
                b.append(json.dumps(key, ensure_ascii=False) + (": " if inner is not None else ":"))
            _json(value, inner, b)
        if newline is not None:
            b.append(newline)
        b.append("}" if is_map else "]")
    elif isinstance(data, dict):
        b.append("{}")
    elif isinstance(data, list):
        b.append("[]")
    elif isinstance(data, float):
        b.append(float_to_s(data))
    elif isinstance(data, int) and not isinstance(data, bool):
        b.append(decimal_text(data))  # any length, as Ruby writes it
    else:
        b.append(json.dumps(data, ensure_ascii=False))

"""Checks on definitions, resources, relationships, conditionals and nodes (puppet-lint's check_classes,
check_resources, check_conditionals, check_nodes groups), with their fixes."""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right

from puppet_xpp.lint.core import NoFix, Problem, check, delete, fixer, index_of, insert, problem
from puppet_xpp.lint.data import Definition, Manifest, next_of, prev_of
from puppet_xpp.lint.tokens import FORMATTING, Tok


def _defs(m: Manifest) -> list[Definition]:
    return m.classes + m.defines


def _params_of(m: Manifest, d: Definition, *types: str) -> list[Tok]:
    """The tokens of these types in a definition's parameter list (the others are all that a walk over
    the list would skip: on a large manifest in columns, not made into objects)."""
    params = d.param_tokens
    if not params:
        return []
    return m.in_range(params[0].idx, params[-1].idx, *types)


def _kind_word(d: Definition) -> str:
    return "class" if d.kind == "CLASS" else "defined type"


@check("arrow_on_right_operand_line")
def arrow_on_right_operand_line(m: Manifest) -> list[Problem]:
    out = []
    for t in m.of_type("IN_EDGE", "IN_EDGE_SUB"):
        if t.next_code is not None and t.next_code.line != t.line:
            out.append(
                problem(
                    "arrow_on_right_operand_line", "warning", "arrow should be on the right operand's line", t
                )
            )
    return out


@fixer("arrow_on_right_operand_line")
def _fix_arrow_on_right_operand_line(m: Manifest, p: Problem) -> None:
    arrow: Tok = p.data["token"]
    left, right = arrow.prev_code, arrow.next_code
    toks = m.editable()
    delete(toks, arrow)
    ri = index_of(toks, right)
    if ri is None or left is None:
        raise NoFix
    insert(toks, ri, arrow)
    insert(toks, ri + 1, Tok("WHITESPACE", " "))
    ws = left.next
    if (
        ws is not None
        and ws.type == "WHITESPACE"
        and ws.next is not None
        and ws.next.type in ("NEWLINE", "WHITESPACE")
    ):
        delete(toks, ws)


def _split_name(value: str) -> list[str]:
    parts = value.split("::")
    while parts and parts[-1] == "":
        parts.pop()
    return parts


@check("autoloader_layout")
def autoloader_layout(m: Manifest) -> list[Problem]:
    if not m.fullpath:
        return []
    out = []
    for d in _defs(m):
        name = d.name_token
        if name is None:
            continue
        parts = _split_name(name.value)
        if len(parts) > 1:
            expected = f"/{parts[0]}/manifests/{'/'.join(parts[1:])}.pp"
        else:
            expected = f"/{name.value}/manifests/init.pp"
        if m.relative:
            expected = "/".join(re.sub(r"^/", "", expected).split("/")[1:])
        if m.fullpath.endswith(expected):
            continue
        out.append(problem("autoloader_layout", "error", f"{name.value} not in autoload module layout", name))
    return out


@check("class_inherits_from_params_class", enabled=False)
def class_inherits_from_params_class(m: Manifest) -> list[Problem]:
    return [
        problem(
            "class_inherits_from_params_class",
            "warning",
            "class inheriting from params class",
            d.inherited_token,
        )
        for d in m.classes
        if d.inherited_token is not None and d.inherited_token.value.endswith("::params")
    ]


@check("code_on_top_scope", enabled=False)
def code_on_top_scope(m: Manifest) -> list[Problem]:
    inside: set[int] = set()  # positions (a token in columns is a new object at each read)
    for d in _defs(m):
        inside.update(range(d.start, d.end + 1))
    return [
        problem("code_on_top_scope", "warning", f"code outside of class or define block - {t.value}", t)
        for t in m.tokens
        if t.idx not in inside and t.type not in FORMATTING
    ]


@check("inherits_across_namespaces")
def inherits_across_namespaces(m: Manifest) -> list[Problem]:
    out = []
    for d in m.classes:
        inh = d.inherited_token
        if inh is None or d.name_token is None:
            continue
        a = [s for s in inh.value.split("::") if s]
        b = [s for s in d.name_token.value.split("::") if s]
        if (b[0] if b else None) != (a[0] if a else None):
            out.append(
                problem(
                    "inherits_across_namespaces", "warning", "class inherits across module namespaces", inh
                )
            )
    return out


@check("names_containing_dash")
def names_containing_dash(m: Manifest) -> list[Problem]:
    return [
        problem("names_containing_dash", "error", f"{_kind_word(d)} name containing a dash", d.name_token)
        for d in _defs(m)
        if d.name_token is not None and "-" in d.name_token.value
    ]


@check("names_containing_uppercase")
def names_containing_uppercase(m: Manifest) -> list[Problem]:
    return [
        problem(
            "names_containing_uppercase",
            "error",
            f"{_kind_word(d)} '{d.name_token.value}' contains illegal uppercase",
            d.name_token,
        )
        for d in _defs(m)
        if d.name_token is not None and re.search("[A-Z]", d.name_token.value)
    ]


@fixer("names_containing_uppercase")
def _fix_names_containing_uppercase(m: Manifest, p: Problem) -> None:
    tok: Tok = p.data["token"]
    tok.value = tok.value.lower()


@check("nested_classes_or_defines")
def nested_classes_or_defines(m: Manifest) -> list[Problem]:
    out = []
    for d in m.classes:
        for t in m.in_range(d.start + 1, d.end, "CLASS", "DEFINE"):
            if t.next_code is None or t.next_code.type == "LBRACE":
                continue
            word = "class" if t.type == "CLASS" else "defined type"
            out.append(problem("nested_classes_or_defines", "warning", f"{word} defined inside a class", t))
    return out


def _is_parameter(t: Tok) -> bool:
    return (
        t.type == "VARIABLE"
        and t.prev_code is not None
        and t.prev_code.type in ("LPAREN", "COMMA", "TYPE", "RBRACK")
    )


def _is_required(t: Tok) -> bool:
    # the cheap tests first; the backward walk for the data type only when they would say "required"
    if t.next_code is not None and t.next_code.type not in ("COMMA", "RPAREN"):
        return False
    if t.prev_code is not None and t.prev_code.type == "EQUALS":
        return False
    data_type = prev_of(t, ("TYPE",))
    return data_type is None or data_type.value != "Optional"


@check("parameter_order")
def parameter_order(m: Manifest) -> list[Problem]:
    out = []
    for d in _defs(m):
        params = d.param_tokens
        if params is None:
            continue
        parens = 0
        nest = 0
        seen_equals = False
        for t in params:
            ty = t.type
            if ty == "LPAREN":
                parens += 1
            elif ty == "RPAREN":
                parens = max(parens - 1, 0)
            elif ty in ("LBRACE", "LBRACK"):
                nest += 1
            elif ty in ("RBRACE", "RBRACK"):
                nest = max(nest - 1, 0)
            if ty == "EQUALS":
                seen_equals = True
            if ty != "VARIABLE" or nest or parens or not seen_equals:
                continue
            if not _is_parameter(t) or not _is_required(t):
                continue
            out.append(
                problem(
                    "parameter_order", "warning", "optional parameter listed before required parameter", t
                )
            )
    return out


@check("right_to_left_relationship")
def right_to_left_relationship(m: Manifest) -> list[Problem]:
    return [
        problem("right_to_left_relationship", "warning", "right-to-left (<-) relationship", t)
        for t in m.of_type("OUT_EDGE")
    ]


_SCOPE_VARS = frozenset(
    "name title module_name environment clientcert clientversion servername serverip serverversion "
    "caller_module_name alias audit before loglevel noop notify require schedule stage subscribe tag "
    "facts trusted server_facts".split()
)
_INDEX_SUFFIX = re.compile(r"\[.+\]\Z")
_FACTS_INDEX = re.compile(r"(facts|trusted)\[.+\]")


@check("variable_scope")
def variable_scope(m: Manifest) -> list[Problem]:
    out = []
    in_scope = set(_SCOPE_VARS)  # grows across definitions, as in puppet-lint
    for d in _defs(m):
        referenced: list[Tok] = []
        for t in _params_of(m, d, "VARIABLE"):
            if t.next_code is not None and t.next_code.type in ("COMMA", "EQUALS", "RPAREN"):
                in_scope.add(t.value)
        block_scopes: dict[int, list[str]] = {}
        in_pipe = False
        block_params: list[list[str]] = []
        for t in m.in_range(d.start, d.end, "EQUALS", "VARIABLE", "PIPE"):
            ty = t.type
            if ty == "EQUALS":
                pc = t.prev_code
                if pc is None:
                    continue
                if pc.type == "VARIABLE":
                    in_scope.add(pc.value)
                elif pc.type == "RBRACK":
                    depth = 0
                    it: Tok | None = t.prev_code
                    while it is not None:
                        if it.type == "VARIABLE":
                            in_scope.add(it.value)
                        elif it.type == "RBRACK":
                            depth += 1
                        elif it.type == "LBRACK":
                            depth -= 1
                            if depth == 0:
                                break
                        elif it.type != "COMMA":
                            break
                        it = it.prev_code
            elif ty == "VARIABLE":
                if in_pipe:
                    block_params[-1].append(t.value)
                else:
                    referenced.append(t)
            elif ty == "PIPE":
                in_pipe = not in_pipe
                if in_pipe:
                    block_params.append([])
                    continue
                end_line = _block_end_line(m, t)
                names = block_params.pop()
                for line in range(t.line, end_line + 1):
                    block_scopes.setdefault(line, []).extend(names)
        for t in referenced:
            v = t.value
            bare = _INDEX_SUFFIX.sub("", v) if "[" in v else v
            if bare in in_scope:  # the most frequent reason to skip (each test below only skips)
                continue
            if block_scopes and bare in block_scopes.get(t.line, ()):
                continue
            if "::" in v or (v[:1] in "ft" and _FACTS_INDEX.match(v)):
                continue
            if bare in in_scope or v.isdecimal():  # \d+: Unicode decimal digits, as isdecimal
                continue
            out.append(
                problem(
                    "variable_scope",
                    "warning",
                    "top-scope variable being used without an explicit namespace",
                    t,
                )
            )
    return out


def _block_end_line(m: Manifest, pipe: Tok) -> int:
    """The line of the ``}`` closing the block after a lambda's parameters (the braces' positions only:
    a walk over the rest of the tokens for each lambda made a file of many lambdas quadratic)."""
    depth = 0
    toks = m.tokens
    braces = m.positions_of("LBRACE", "RBRACE")
    for p in range(bisect_left(braces, m.pos(pipe)), len(braces)):
        t = toks[braces[p]]
        if t.type == "LBRACE":
            depth += 1
        else:
            depth -= 1
            if depth == 0:
                return t.line
    return pipe.line


@check("case_without_default")
def case_without_default(m: Manifest) -> list[Problem]:
    toks = m.tokens
    type_at = m.type_at
    cases: list[tuple[int, int]] = []
    braces = m.positions_of("LBRACE", "RBRACE")
    for i in m.positions("CASE"):
        depth = 0
        for p in range(bisect_right(braces, i), len(braces)):  # (no copy of the list per case)
            k = braces[p]
            ty = type_at(k)
            if ty == "LBRACE":
                depth += 1
            elif ty == "RBRACE":
                depth -= 1
                if depth == 0:
                    cases.append((i, k))
                    break
    out = []
    marks = m.positions_of("LBRACE", "RBRACE", "DEFAULT")
    starts = [s for s, _e in cases]  # (in order: the CASE tokens' positions)
    for n, (s, e) in enumerate(cases):
        # the case's tokens minus those of the cases after it (nested ones), as puppet-lint cuts them:
        # those starting inside it (a later case starts after s, and ends after it starts)
        later = cases[n + 1 : bisect_right(starts, e, n + 1)]
        depth = 0
        found = False
        for k in marks[bisect_left(marks, s) : bisect_right(marks, e)]:
            if later and any(s2 <= k <= e2 for s2, e2 in later):
                continue
            ty = type_at(k)
            if ty == "LBRACE":
                depth += 1
            elif ty == "RBRACE":
                depth -= 1
            elif depth == 1:
                found = True
                break
        if not found:
            out.append(
                problem("case_without_default", "warning", "case statement without a default case", toks[s])
            )
    return out


@check("selector_inside_resource")
def selector_inside_resource(m: Manifest) -> list[Problem]:
    out = []
    for r in m.resources:
        for t in m.in_range(r.start - 1, r.end, "FARROW"):
            v = t.next_code
            if v is None or v.type != "VARIABLE":
                continue
            if v.next_code is not None and v.next_code.type == "QMARK":
                out.append(
                    problem("selector_inside_resource", "warning", "selector inside resource block", t)
                )
    return out


@check("unquoted_node_name")
def unquoted_node_name(m: Manifest) -> list[Problem]:
    out = []
    toks = m.tokens
    for node in m.of_type("NODE"):
        i = m.pos(node)
        brace = next((k for k in range(i, len(toks)) if toks[k].type == "LBRACE"), None)
        if brace is None:
            out.append(
                problem("syntax", "error", "Syntax error (try running `puppet parser validate <file>`)", node)
            )
            continue
        for t in toks[i : brace + 1]:
            if t.type == "NAME" and t.value != "default":
                out.append(problem("unquoted_node_name", "warning", "unquoted node name found", t))
    return out


@fixer("unquoted_node_name")
def _fix_unquoted_node_name(m: Manifest, p: Problem) -> None:
    """Quote the name. A dotted name (``web01.example.com``: NAME DOT NAME ... tokens) becomes one
    string; puppet-lint quotes each label (``'web01'.'example'.'com'``), which Puppet rejects."""
    tok: Tok = p.data["token"]
    toks = m.editable()
    if index_of(toks, tok) is None:
        return  # already part of a quoted dotted name
    run = [tok]
    while run[0].prev is not None and _host_part(run[0].prev) and _host_part(run[0].prev, dot=True):
        run.insert(0, run[0].prev)
    while run[-1].next is not None and _host_part(run[-1].next, dot=True):
        run.append(run[-1].next)
    while run and run[-1].type == "DOT":
        run.pop()
    while run and run[0].type == "DOT":
        run.pop(0)
    if len(run) == 1:
        tok.type = "SSTRING"
        return
    first = run[0]
    first.value = "".join(t.render() for t in run)
    first.type = "SSTRING"
    for t in run[1:]:
        delete(toks, t)


def _host_part(t: Tok, *, dot: bool = False) -> bool:
    return t.type in ("NAME", "NUMBER") or (dot and t.type == "DOT")


@check("duplicate_params")
def duplicate_params(m: Manifest) -> list[Problem]:
    out = []
    for r in m.resources:
        seen: dict[int, set[str]] = {}
        level = 0
        for t in m.in_range(r.start - 1, r.end, "LBRACE", "RBRACE", "FARROW"):
            if t.type == "LBRACE":
                level += 1
            elif t.type == "RBRACE":
                seen.pop(level, None)
                level -= 1
            elif t.type == "FARROW":
                name = t.prev_code
                if name is None or name.type != "NAME":
                    continue
                names = seen.setdefault(level, set())
                if name.value in names:
                    out.append(
                        problem("duplicate_params", "error", "duplicate parameter found in resource", name)
                    )
                else:
                    names.add(name.value)
    return out


@check("ensure_first_param")
def ensure_first_param(m: Manifest) -> list[Problem]:
    out = []
    for r in m.resources:
        if r.type.type == "CLASS":
            continue
        k = next((n for n, p in enumerate(r.param_tokens) if p.value == "ensure"), None)
        if not k:
            continue
        out.append(
            problem(
                "ensure_first_param",
                "warning",
                "ensure found on line but it's not the first attribute",
                r.param_tokens[k],
                resource=r,
            )
        )
    return out


@fixer("ensure_first_param")
def _fix_ensure_first_param(m: Manifest, p: Problem) -> None:
    toks = m.editable()
    first: Tok = p.data["resource"].param_tokens[0]
    first_comma = next_of(first, ("COMMA",))
    if first_comma is None:
        raise NoFix
    ens = next_of(first_comma, ("NAME",), "ensure")
    if ens is None:
        raise NoFix
    ens_comma = next_of(ens, ("COMMA", "SEMIC"))
    if ens_comma is None:
        raise NoFix
    a, b = index_of(toks, first), index_of(toks, first_comma)
    c, d = index_of(toks, ens), index_of(toks, ens_comma)
    assert a is not None and b is not None and c is not None and d is not None
    # swap the two "name => value" runs (each up to, not including, its comma)
    moved = toks[:a] + toks[c:d] + toks[b:c] + toks[a:b] + toks[d:]
    toks[:] = moved
    from puppet_xpp.lint.tokens import link

    link(toks)


@check("ensure_not_symlink_target")
def ensure_not_symlink_target(m: Manifest) -> list[Problem]:
    out = []
    for r in m.resources:
        if r.type.value != "file":
            continue
        for ens in (p for p in r.param_tokens if p.value == "ensure"):
            value = ens.next_code.next_code if ens.next_code is not None else None
            if value is None or not value.value.startswith("/"):
                continue
            out.append(
                problem(
                    "ensure_not_symlink_target",
                    "warning",
                    "symlink target specified in ensure attr",
                    value,
                    param_token=ens,
                )
            )
    return out


@fixer("ensure_not_symlink_target")
def _fix_ensure_not_symlink_target(m: Manifest, p: Problem) -> None:
    toks = m.editable()
    i = index_of(toks, p.data["token"])
    param: Tok = p.data["param_token"]
    if i is None or param.prev is None:
        raise NoFix
    new = [
        Tok("NAME", "symlink"),
        Tok("COMMA", ","),
        Tok("NEWLINE", "\n"),
        Tok("INDENT", param.prev.value),
        Tok("NAME", "target"),
        Tok("WHITESPACE", " "),
        Tok("FARROW", "=>"),
        Tok("WHITESPACE", " "),
    ]
    toks[i:i] = new  # plain list insertion, links untouched, as puppet-lint does


_MODE_RE = re.compile(r"([0-7]{4}|([ugoa]*[-=+][-=+rstwxXugo]*)(,[ugoa]*[-=+][-=+rstwxXugo]*)*)\Z")


def _mode_params(m: Manifest) -> list[list[Tok]]:
    return [
        [p for p in r.param_tokens if p.value == "mode"]
        for r in m.resources
        if r.type.value in ("file", "concat")
    ]


def _value_of(param: Tok) -> Tok | None:
    return param.next_code.next_code if param.next_code is not None else None


@check("file_mode")
def file_mode(m: Manifest) -> list[Problem]:
    out = []
    for params in _mode_params(m):
        for param in params:
            v = _value_of(param)
            if v is None or v.type in ("VARIABLE", "UNDEF", "FUNCTION_NAME") or _MODE_RE.match(v.value):
                break
            out.append(
                problem(
                    "file_mode",
                    "warning",
                    "mode should be represented as a 4 digit octal value or symbolic mode",
                    v,
                )
            )
    return out


@fixer("file_mode")
def _fix_file_mode(m: Manifest, p: Problem) -> None:
    tok: Tok = p.data["token"]
    if not re.fullmatch(r"[0-7]{3}", tok.value):
        raise NoFix
    tok.type = "SSTRING"
    tok.value = "0" + tok.value


@check("unquoted_file_mode")
def unquoted_file_mode(m: Manifest) -> list[Problem]:
    out = []
    for params in _mode_params(m):
        for param in params:
            v = _value_of(param)
            if v is not None and v.type in ("NAME", "NUMBER"):
                out.append(problem("unquoted_file_mode", "warning", "unquoted file mode", v))
    return out


@fixer("unquoted_file_mode")
def _fix_unquoted_file_mode(m: Manifest, p: Problem) -> None:
    p.data["token"].type = "SSTRING"


@check("unquoted_resource_title")
def unquoted_resource_title(m: Manifest) -> list[Problem]:
    return [
        problem("unquoted_resource_title", "warning", "unquoted resource title", t)
        for t in m.title_tokens
        if t.type == "NAME"
    ]


@fixer("unquoted_resource_title")
def _fix_unquoted_resource_title(m: Manifest, p: Problem) -> None:
    p.data["token"].type = "SSTRING"

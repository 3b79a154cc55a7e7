"""Unknown variables where the scope is statically known: what ``strict_variables`` stops, reported as
a warning (``Unknown variable: 'x'.`` at the variable, Puppet's words and position).

Checked: unqualified variables in the body of a class or defined type.  Known there:
the definition's parameters, ``$title``/``$name``/``$module_name``/``$caller_module_name``, every variable
the body assigns anywhere (a use before the assignment is not proven here), a lambda's parameters
inside it, the match variables ``$0``..``$n``, Puppet's own top-scope variables (``$facts``,
``$trusted``, ``$server_facts``, ``$environment``, ``$servername``...), every core fact's name and every
custom fact of the modules (``Facter.add``), and the variables the environment's main manifest assigns
at top and node scope.  Not checked (no finding): a class that inherits another (the parent's scope is
not read), qualified names (``$x::y``: whether that class is evaluated first is not static; ``$::x``: a fact
the node may have), functions,
plans, node definitions and templates; variables a node classifier (ENC) sets are not knowable: with
an ENC the warning may be wrong, which is why it is a warning."""

from __future__ import annotations

from collections.abc import Iterable

from puppet_xpp.grammar import ast
from puppet_xpp.server.analysis.deep.context import Place
from puppet_xpp.server.analysis.deep.finding import Finding, make
from puppet_xpp.server.analysis.deep.world import Answers

__all__ = ["assigned_names", "check_definition"]

# the variables Puppet sets at top scope (besides the facts) and in every class/define scope
PUPPET_VARIABLES = frozenset(
    {
        "facts", "trusted", "server_facts", "settings", "environment", "servername", "serverip",
        "serverversion", "clientcert", "clientversion", "clientnoop", "agent_specified_environment",
        "title", "name", "module_name", "caller_module_name",
    }
)  # fmt: skip

_NESTED = (ast.HostClassDefinition, ast.ResourceTypeDefinition, ast.FunctionDefinition, ast.NodeDefinition)


def _target_names(left: object) -> Iterable[str]:
    if type(left) is ast.VariableExpression:
        name = getattr(left.expr, "value", None)
        if isinstance(name, str):
            yield name
    elif type(left) is ast.LiteralList:
        for v in left.values:
            yield from _target_names(v)


def assigned_names(root: ast.Node | None, into_definitions: bool = False) -> set[str]:
    """Every variable name assigned under ``root`` (lambdas' bodies too; nested definitions only
    with ``into_definitions``)."""
    out: set[str] = set()
    if root is None:
        return out
    stack: list[ast.Node] = [root]
    while stack:
        n = stack.pop()
        if type(n) is ast.AssignmentExpression:
            out.update(_target_names(n.left_expr))
        if n is not root and not into_definitions and type(n) in _NESTED:
            continue
        stack.extend(n.children())
    return out


def check_definition(node: ast.Node, place: Place, answers: Answers) -> list[Finding]:
    """Unknown variables in a class's or defined type's body."""
    if not isinstance(node, (ast.HostClassDefinition, ast.ResourceTypeDefinition)) or node.body is None:
        return []
    if type(node) is ast.HostClassDefinition and node.parent_class:
        return []
    known = {p.name for p in node.parameters} | assigned_names(node.body) | PUPPET_VARIABLES
    out: list[Finding] = []
    stack: list[tuple[ast.Node, frozenset[str]]] = [(node.body, frozenset())]
    while stack:
        n, inner = stack.pop()
        t = type(n)
        if t in _NESTED:
            continue  # (checked as a definition of its own, or not at all)
        if t is ast.LambdaExpression:
            inner = inner | {p.name for p in n.parameters}  # type: ignore[attr-defined]
        elif t is ast.VariableExpression:
            finding = _unknown(n, known, inner, place, answers)  # type: ignore[arg-type]
            if finding is not None:
                out.append(finding)
            continue
        for child in n.children():
            stack.append((child, inner))
    return out


def _unknown(
    var: ast.VariableExpression, known: set[str], inner: frozenset[str], place: Place, answers: Answers
) -> Finding | None:
    name = getattr(var.expr, "value", None)
    if not isinstance(name, str) or not name or name.isdigit():
        return None
    if "::" in name or name in known or name in inner or answers.fact_known(name):
        return None  # ($::x names the top scope: a fact the node may have, never provable)
    if answers.top_variable(name) is not False:
        return None
    return make("DEEP_UNKNOWN_VARIABLE", place.path, var.offset, var.length, {"variable": name}, name=name)

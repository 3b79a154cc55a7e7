"""Unknown variables where the scope is statically known: what ``strict_variables`` stops, reported as
a warning (``Unknown variable: 'x'.`` at the variable, Puppet's words and position).

Checked: unqualified variables in the body of a class or defined type.  Known there:
the definition's parameters, ``$title``/``$name``/``$module_name``/``$caller_module_name``, every variable
the body assigns anywhere (a use before the assignment is not proven here), a lambda's parameters
inside it, the match variables ``$0``..``$n``, Puppet's own top-scope variables (``$facts``,
``$trusted``, ``$server_facts``, ``$environment``, ``$servername``...), every core fact's name and every
custom fact of the modules (``Facter.add``), and the variables the environment's main manifest assigns
at top and node scope.  A class that inherits another also sees the parent's parameters and assignments (and its
parent's: read from their files; a parent that cannot be read: no finding).  Not checked (no finding):
qualified names (``$x::y``: whether that class is evaluated first is not static; ``$::x``: a fact
the node may have), functions,
plans, node definitions and templates; variables a node classifier (ENC) sets are not knowable: with
an ENC the warning may be wrong, which is why it is a warning."""

from __future__ import annotations

from collections.abc import Iterable

from puppet_xpp.grammar import ast
from puppet_xpp.server.analysis.deep.context import Place
from puppet_xpp.server.analysis.deep.finding import Finding, make
from puppet_xpp.server.analysis.deep.world import Answers

__all__ = ["PUPPET_VARIABLES", "Scope", "assigned_names"]

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


class Scope:
    """A class's or defined type's scope as the engine's walk meets it: what is known there (its
    parameters, Puppet's variables, every assignment met) and the variables used, each with the
    lambda parameters around it; :meth:`findings` judges them once the body is walked."""

    __slots__ = ("node", "place", "known", "uses")

    def __init__(self, node: ast.HostClassDefinition | ast.ResourceTypeDefinition, place: Place) -> None:
        self.node = node
        self.place = place
        self.known: set[str] = {p.name for p in node.parameters} | PUPPET_VARIABLES
        self.uses: list[tuple[ast.VariableExpression, frozenset[str]]] = []

    def assign(self, left: object) -> None:
        self.known.update(_target_names(left))

    def use(self, var: ast.VariableExpression, inner: frozenset[str]) -> None:
        self.uses.append((var, inner))

    def findings(self, answers: Answers) -> list[Finding]:
        known = self.known
        node = self.node
        if type(node) is ast.HostClassDefinition and node.parent_class:
            inherited = answers.class_variables(node.parent_class)
            if inherited is None:
                return []
            known = known | inherited
        out = []
        for var, inner in self.uses:
            found = _unknown(var, known, inner, self.place, answers)
            if found is not None:
                out.append(found)
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

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

__all__ = ["PUPPET_VARIABLES", "Scope", "Use", "assigned_names", "judge"]

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

    def __init__(
        self, node: ast.HostClassDefinition | ast.ResourceTypeDefinition | None, place: Place
    ) -> None:
        # (node None: a collector of one body statement's assignments and uses, judged with the
        # others' by the engine's body pass)
        self.node = node
        self.place = place
        self.known: set[str] = set()
        if node is not None:
            self.known = {p.name for p in node.parameters} | PUPPET_VARIABLES
        self.uses: list[tuple[ast.VariableExpression, frozenset[str]]] = []

    def assign(self, left: object) -> None:
        self.known.update(_target_names(left))

    def use(self, var: ast.VariableExpression, inner: frozenset[str]) -> None:
        self.uses.append((var, inner))

    def findings(self, answers: Answers) -> list[Finding]:
        assert self.node is not None
        return judge(self.node, self.known, self.candidates(), self.place, answers)

    def candidates(self) -> list[Use]:
        """The uses that may be unknown: an unqualified name that is not a lambda's parameter there
        (what every other use is does not depend on the rest of the body)."""
        out = []
        for var, inner in self.uses:
            name = getattr(var.expr, "value", None)
            if not isinstance(name, str) or not name or name.isdigit():
                continue
            if "::" in name or name in inner:
                continue  # ($::x names the top scope: a fact the node may have, never provable)
            out.append((name, var.offset, var.length))
        return out


# (name, offset, length): a use of a variable that may be unknown
Use = tuple[str, int, int]


def judge(
    node: ast.HostClassDefinition | ast.ResourceTypeDefinition,
    known: set[str],
    uses: Iterable[Use],
    place: Place,
    answers: Answers,
    before: dict[Use, Finding] | None = None,
    made: dict[Use, Finding] | None = None,
) -> list[Finding]:
    """The unknown-variable findings of a class/define scope: ``known``, what its parameters, Puppet
    and its body's assignments set; ``uses``, its candidate uses (:meth:`Scope.candidates`); each
    finding taken from ``before`` when it holds one of that name and place (a long body's last
    check's: one document's, so of the same path), noted in ``made``."""
    if type(node) is ast.HostClassDefinition and node.parent_class:
        inherited = answers.class_variables(node.parent_class)
        if inherited is None:
            return []
        known = known | inherited
    out = []
    unknown: dict[str, bool] = {}  # (each name asked once)
    for name, offset, length in uses:
        if name in known:
            continue
        judged = unknown.get(name)
        if judged is None:
            judged = unknown[name] = not answers.fact_known(name) and answers.top_variable(name) is False
        if not judged:
            continue
        key = (name, offset, length)
        found = before.get(key) if before is not None else None
        if found is None:
            found = make("DEEP_UNKNOWN_VARIABLE", place.path, offset, length, {"variable": name}, name=name)
        if made is not None:
            made[key] = found
        out.append(found)
    return out

"""Unknown variables where the scope is statically known (what ``strict_variables`` stops: a
warning).  Filled in by the variables check; until then it reports nothing."""

from __future__ import annotations

from puppet_xpp.grammar import ast
from puppet_xpp.server.analysis.deep.context import Place
from puppet_xpp.server.analysis.deep.finding import Finding
from puppet_xpp.server.analysis.deep.world import Answers

__all__ = ["check_definition"]


def check_definition(node: ast.Node, place: Place, answers: Answers) -> list[Finding]:
    """Unknown variables in a class's or defined type's body."""
    return []

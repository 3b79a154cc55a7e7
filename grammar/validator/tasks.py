"""Puppet's TasksChecker (``tasks=True``): catalog expressions are only allowed inside ``apply`` blocks."""

from __future__ import annotations

from typing import Any

from puppet_xpp.grammar.validator.checks import Checker
from puppet_xpp.grammar.validator.labels import a_an_uc
from puppet_xpp.grammar.validator.model import (
    ApplyBlockExpression,
    VirtualQuery,
)


def _apply_only(name: str) -> Any:  # (a method once set in the class body)
    """A TasksChecker check: Checker's ``name`` inside an ``apply`` block, else the expression is illegal."""
    base = getattr(Checker, name)

    def check(self: TasksChecker, o: Any) -> None:
        if self.in_apply():
            base(self, o)
        else:
            self.illegal_tasks_expression(o)

    check.__name__ = name
    return check


class TasksChecker(Checker):
    """Puppet's TasksChecker: catalog expressions are only allowed inside ``apply`` blocks."""

    tasks = True

    def in_apply(self) -> bool:
        path = self.path
        for o in path[:0:-1]:  # ancestors below the program root, innermost first
            if isinstance(o, ApplyBlockExpression):
                return True
        return False

    def illegal_tasks_expression(self, o: Any) -> None:
        self.accept("EXPRESSION_NOT_SUPPORTED_WHEN_SCRIPTING", o, expr=a_an_uc(o))

    def check_CollectExpression(self, o: Any) -> None:
        if self.in_apply():
            if isinstance(o.query, VirtualQuery):
                Checker.check_CollectExpression(self, o)
            else:
                self.accept("EXPRESSION_NOT_SUPPORTED_WHEN_COMPILING", o, expr=a_an_uc(o))
        else:
            self.illegal_tasks_expression(o)

    def check_HostClassDefinition(self, o: Any) -> None:
        self.illegal_tasks_expression(o)

    check_ResourceTypeDefinition = check_HostClassDefinition

    check_NodeDefinition = _apply_only("check_NodeDefinition")
    check_RelationshipExpression = _apply_only("check_RelationshipExpression")
    check_ResourceDefaultsExpression = _apply_only("check_ResourceDefaultsExpression")
    check_ResourceExpression = _apply_only("check_ResourceExpression")
    check_ResourceOverrideExpression = _apply_only("check_ResourceOverrideExpression")

    def check_ApplyExpression(self, o: Any) -> None:
        if self.in_apply():
            self.accept("EXPRESSION_NOT_SUPPORTED_WHEN_COMPILING", o, expr=a_an_uc(o))

    def resource_without_title(self, o: Any) -> bool:
        return False

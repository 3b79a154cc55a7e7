"""The Pcore writer refuses what the readers refuse: an object reached twice (issue 26 item 3).

Puppet's model shares objects in two places only, the one Locator (every node's ``locator``) and
``Program.definitions`` (nodes of the body, each once); both readers refuse any other back-reference
(tests/test_pcore_references.py).  ``pcore.dumps`` (checked, the default) raises XppWriteError for a node,
list, hash, regexp, type or object given twice or in a cycle, instead of writing a document no reader takes;
``check=False`` still writes it as a back-reference (how the reader tests make such documents).
"""

from __future__ import annotations

import pytest

from puppet_xpp.grammar import ast
from puppet_xpp.xpp import pcore
from puppet_xpp.xpp.pcore import XppFormatError, XppWriteError
from tests.pcore_helpers import FILE, FORMATS, build_class, build_regexp, build_two, make_assign, make_program
from tests.test_pcore_references import CYCLES, DAGS


def _two_statements(first, second):
    src = "$a = 1\n$b = 2"
    loc = first.locator
    return make_program(src, ast.BlockExpression(loc, 3, 8, [first, second]))


def _shared_statement():
    """The same assignment node as both statements of a block."""
    _, program = build_two()
    s1 = program.body.statements[0]
    program.body.statements[1] = s1
    return program


def _shared_literal():
    """One LiteralInteger as the right side of two assignments."""
    _, program = build_two()
    s1, s2 = program.body.statements
    s2.right_expr = s1.right_expr
    return program


def _shared_list():
    """One Python list as the values of two literal lists."""
    src = "$a = [1]\n$b = [1]"
    loc = ast.make_locator(src, FILE)
    values = [ast.LiteralInteger(loc, 6, 1, 1)]
    a = make_assign(loc, 0, "a", ast.LiteralList(loc, 5, 3, values))
    b = make_assign(loc, 9, "b", ast.LiteralList(loc, 14, 3, values))
    return _two_statements(a, b)


def _shared_regexp():
    _, program = build_regexp()
    rx = program.body.right_expr
    program.body = ast.BlockExpression(
        rx.locator,
        0,
        15,
        [program.body, ast.LiteralRegularExpression(rx.locator, 6, 9, rx.value, rx.pattern)],
    )
    return program


def _definition_twice():
    _, program = build_class()
    program.definitions = [program.body, program.body]
    return program


def _definition_from_before_the_program():
    """A definitions entry written before its Program started (only a node of the Program's own body is
    one of its definitions)."""
    _, program = build_class()
    cls = program.body
    return [cls, ast.Program(program.locator, ast.Nop(program.locator, 0, 0), [cls])]


SHARED = {
    "statement": _shared_statement,
    "literal": _shared_literal,
    "values list": _shared_list,
    "regexp": _shared_regexp,
    "definition listed twice": _definition_twice,
    "definition of another program": _definition_from_before_the_program,
    **{f"dag {k}": v for k, v in DAGS.items()},
    **{f"cycle {k}": v for k, v in CYCLES.items()},
}


@pytest.mark.timeout(60)
@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("kind", sorted(SHARED))
def test_an_object_reached_twice_is_refused(kind, fmt):
    """The writer's verdict is the reader's: refused when written checked, and the unchecked bytes (one
    back-reference) are refused by the reader."""
    value = SHARED[kind]()
    with pytest.raises(XppWriteError, match="reached twice"):
        pcore.dumps(value, fmt)
    with pytest.raises(XppFormatError):
        pcore.loads(pcore.dumps(value, fmt, check=False), fmt)


@pytest.mark.parametrize("fmt", FORMATS)
def test_the_sharing_of_puppets_model_is_written(fmt):
    """The one Locator and the definitions (nodes of the body) are written as back-references, and read
    back as the same objects."""
    _, program = build_class()
    data = pcore.dumps(program, fmt)
    assert data == pcore.dumps(program, fmt, check=False)
    back = pcore.loads(data, fmt)
    assert back == program
    assert back.definitions[0] is back.body
    assert back.body.body.locator is back.locator


def test_a_definition_not_in_the_body_is_written_in_place():
    """Puppet's model lists nodes of the body; one that is not is written where it is listed (the
    readers accept that: it is a tree)."""
    _, program = build_class()
    cls = program.body
    program.body = ast.Nop(program.locator, 0, 0)
    program.definitions = [cls]
    back = pcore.loads(pcore.dumps(program))
    assert back == program

"""Heredoc positions not derivable from a token's own span (a ConcatenatedString's end from its DQPOST,
``concat_end``; the QualifiedName of a leading ``$x``, ``name_start``) against the positions of Puppet's
model (oracle op ``positions``).

Apart because it compares with Puppet's parsed model, not with its token stream.
"""

from __future__ import annotations

import pytest

from puppet_xpp.grammar.lexer import Lexer, concat_end, name_start

# --------------------------------------------------------------------------------------------------
# heredoc DQPOST / ConcatenatedString ends against Puppet's model positions


HEREDOC_MODEL = [
    '$a = @("END")\n  ab${x}cd\n  ef $y gh\n  | END\n',
    '$a = @("END")\n    a${x}\n  b$y\n   c ${z}\n  |- END\n',
    '$a = @("END")\n  ${x}\n  | END\n',
    '$a = @("END")\n  $x\n  | END\n',
    '$a = @("END")\n  $x::y is $z\n    | END\n',
    '$a = @("END")\n  a\n  ${x}\n  | END\n',
    '$a = @("END")\n  x ${"y${z}"} z\n  | END\n',
    '$a = @("END")\n  \u00e9 ${x}\n  | END\n',
    '$a = @("END")\n  a${x}\n  |- END\n',
    'notice(@("A"), @("B"))\n  a${x}\n  | A\n    b${y}c\n    |-B\n',
    '$a = @("END")\n\tx${y}\n\t| END\n',
    '$a = @("END")\n  x${y}\n  y\n   | END\n',
    '$a = @("END")\n  x${y}\r\n  z\r\n  |- END\r\n',
    '$a = @("END")\n  x${y}\n z\n  | END\n',
    '$a = @("END")\nx${y}\nEND\n',
]


@pytest.mark.parametrize("src", HEREDOC_MODEL)
def test_heredoc_derived_positions_match_puppet_model(oracle, src):
    """The two positions not derivable from a heredoc token's own span: a ConcatenatedString's end
    (concat_end of its DQPOST) and the QualifiedName in a leading $x (name_start), against the
    positions of Puppet's model."""
    pos = oracle.call("positions", source=src)
    toks = Lexer(src).tokens()
    checked = 0
    for i, t in enumerate(toks):
        if t.type != "HEREDOC" or toks[i + 1].type != "DQPRE":
            continue
        nest = 0
        for j in range(i + 1, len(toks)):
            nest += {"DQPRE": 1, "DQPOST": -1}.get(toks[j].type, 0)
            if nest == 0:
                break
        pre, post = toks[i + 1], toks[j]
        assert ["ConcatenatedString", pre.start_pos, concat_end(post) - pre.start_pos] in pos
        checked += 1
        if toks[i + 2].type == "VARIABLE" and toks[i + 2].start_pos == pre.start_pos:
            v = toks[i + 2]
            k = pos.index(["VariableExpression", v.start_pos, v.end_pos - v.start_pos])
            assert pos[k + 1] == ["QualifiedName", name_start(v), v.end_pos - v.start_pos - 1]
    assert checked

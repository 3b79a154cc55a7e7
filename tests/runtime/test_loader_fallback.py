"""What the loader refuses (issue 26 items 3-5: a shared node, a string in place of a node, a position
outside the source) never reaches Puppet: a real catalog compile of the example environment with ``--xpp``
parses that one manifest instead, warns about it, and gives Puppet's own catalog (7.23 and OpenVox 8)."""

from __future__ import annotations

import os
import shutil

import pytest

from puppet_xpp.xpp import compile as xcompile
from puppet_xpp.xpp import envelope
from tests.conformance.puppets import missing_reason
from tests.runtime import xpp_mutations as mutations
from tests.runtime.test_puppet_runtime import REPO, compile_tree, run

PUPPETS = [
    pytest.param(p, marks=pytest.mark.skipif(missing_reason(p) is not None, reason=str(missing_reason(p))))
    for p in ("7.23", "8")
]


def _damaged(payload: bytes, how: str) -> bytes:
    vals = mutations.scan(payload)
    strings = [v for v in vals if v.name == "Puppet::AST::LiteralString" and v.stab is not None]
    a, b = strings[0], strings[-1]
    if how == "shared node":  # the last string literal is a back-reference to the first: a DAG
        return (
            payload[: b.start]
            + mutations.ext(mutations.TABULATION, mutations.mp_int(a.stab))
            + payload[b.end :]
        )
    if how == "string in place of a node":
        return payload[: b.start] + mutations.mp_str("a") + payload[b.end :]
    length = b.kids[2]  # a position outside the source
    return payload[: length.start] + mutations.mp_int(len(payload) + 100) + payload[length.end :]


@pytest.mark.parametrize("puppet", PUPPETS)
def test_refused_xpp_falls_back_with_a_warning(puppet, tmp_path):
    root = tmp_path / "envs"
    root.mkdir()
    production = str(root / "production")
    shutil.copytree(
        os.path.join(REPO, "examples", "production"), production, ignore=shutil.ignore_patterns(".xpp")
    )
    compile_tree(production, puppet)
    site = next(
        j for j in xcompile.plan(xcompile.detect_environment(production))[0] if j.src.endswith("site.pp")
    )
    with open(site.out, "rb") as f:
        good = f.read()
    plain = run(puppet, production, tmp_path, False)
    assert "error" not in plain, plain
    for how in ("shared node", "string in place of a node", "position outside the source"):
        payload = _damaged(envelope.unwrap(good)[2], how)
        with open(site.out, "wb") as f:
            f.write(envelope.wrap(payload, "msgpack", checksum=True))
        fast = run(puppet, production, tmp_path, True)
        assert fast["catalog"] == plain["catalog"], how
        assert fast["parsed"] == 1 and fast["served"] == plain["loaded"] - 1, (how, fast["parsed"])
        warned = [
            lg["message"]
            for lg in fast["logs"]
            if lg["level"] == "warning" and lg["message"].startswith("xpp:")
        ]
        assert len(warned) == 1 and site.out in warned[0], (how, warned)

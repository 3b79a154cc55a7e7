"""An ``.xpp`` whose result depends on no setting records none (grammar/levels.py ``depends_on``), and
every Puppet then uses it under every ``strict``: the Debian module corpus compiled at level 8 with
``strict=error`` (what ``--compile`` writes where no puppet is on PATH), read by Puppet 7.23 with its
defaults and by OpenVox 8 running ``strict = warning`` and ``strict = off``.  The catalogs (or Puppet's
errors) are the ones each Puppet compiles without ``.xpp``: Puppet itself is the judge that the
unrecorded settings did not matter.  Only files that record a setting differing from the running one are
parsed instead."""

from __future__ import annotations

import os

import pytest

from puppet_xpp.xpp import compile as xcompile
from puppet_xpp.xpp.result import read_document
from tests.conformance.puppets import missing_reason
from tests.runtime.test_puppet_runtime import CORPUS, corpus_classes, corpus_env, run

CASES = [
    pytest.param(p, s, marks=pytest.mark.skipif(missing_reason(p) is not None, reason=str(missing_reason(p))))
    for p, s in (("7.23", None), ("8", "warning"), ("8", "off"))
]
RUNNING = {
    ("7.23", None): ("7.23", "warning"),
    ("8", "warning"): ("8", "warning"),
    ("8", "off"): ("8", "off"),
}


@pytest.mark.parametrize("puppet,strict", CASES)
def test_a_level_8_tree_serves_every_puppet_and_strict(puppet, strict, tmp_path):
    if not os.path.isdir(CORPUS):
        pytest.skip("no module corpus (bash .ci/install)")
    env = corpus_env("8")
    level, running_strict = RUNNING[(puppet, strict)]
    jobs, _ = xcompile.plan(xcompile.detect_environment(env))
    unusable = 0  # files recording a setting other than the running one's
    for job in jobs:
        with open(job.out, "rb") as f:
            settings = read_document(f.read()).settings
        if (
            settings.get("puppet_version", level) != level
            or settings.get("strict", running_strict) != running_strict
        ):
            unusable += 1
    assert unusable < len(jobs) // 20, (unusable, len(jobs))  # almost every file records no setting
    classes = corpus_classes()
    extra = {"strict": strict} if strict else {}
    plain = run(puppet, env, tmp_path, False, classes=classes, **extra)
    fast = run(puppet, env, tmp_path, True, classes=classes, **extra)
    assert len(fast["catalogs"]) == len(plain["catalogs"]) == len(classes)
    for c, a, b in zip(classes, plain["catalogs"], fast["catalogs"]):
        assert b == a, c
    assert plain["loaded"] >= 100 and fast["served"] + fast["parsed"] == plain["loaded"]
    # a file loaded by several catalogs counts once per catalog: bound the share, and every fallback is
    # one of the files recording a setting that differs from the running one
    assert fast["served"] >= plain["loaded"] * 19 // 20, (fast["served"], plain["loaded"])
    fallbacks = [lg["message"] for lg in fast["logs"] if lg["message"].startswith("xpp: not using")]
    assert len(fallbacks) <= len(classes) and all(
        "validated at language level" in m or "validated with strict" in m for m in fallbacks
    ), fallbacks

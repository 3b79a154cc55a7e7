"""``--compile``'s plan lists each module directory once (xpp/compile/planning.py, ``walk.Probe.listing``):
which source directories it has and what the walks look up there (``.git``, ``metadata.json``, the pattern
files) come from that listing, not from a ``stat`` each -- on a network file system, where r10k's
environments often live, every look-up is a round trip.

Checked: the number of ``stat`` calls a plan makes (1,284 for the corpus twice before, 410 after), and
that what the listing answers is what the look-ups answered: a module's own ``.gitignore`` and
``.pdkignore`` still skip what they name, a module whose ``.git`` is a file (a worktree) or a dangling
link is still a root (or not) as ``os.path.exists`` says, and a source directory that is a link to a
directory is still walked.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from puppet_xpp.xpp.compile import detect_environment, plan


def make_env(root: Path, modules: int) -> Path:
    env = root / "env"
    (env / "manifests").mkdir(parents=True)
    (env / "manifests" / "site.pp").write_text("node default {}\n")
    mods = root / "mods"
    for k in range(modules):
        m = mods / f"m{k}"
        (m / "manifests").mkdir(parents=True)
        (m / "manifests" / "init.pp").write_text(f"class m{k} {{}}\n")
        (m / "metadata.json").write_text(f'{{"name": "x-m{k}", "version": "1.0.0"}}\n')
    (env / "environment.conf").write_text(f"modulepath = {mods}\n")
    return env


def count_stats(monkeypatch: pytest.MonkeyPatch, env: Path) -> tuple[int, list[str]]:
    calls = [0]
    real = os.stat

    def counting(*args, **kwargs):  # type: ignore[no-untyped-def]
        calls[0] += 1
        return real(*args, **kwargs)

    environment = detect_environment(str(env))
    monkeypatch.setattr(os, "stat", counting)
    jobs, _skipped = plan(environment)
    monkeypatch.setattr(os, "stat", real)
    return calls[0], sorted(j.rel for j in jobs)


def test_a_module_costs_a_few_lookups(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    env = make_env(tmp_path, 40)
    calls, rels = count_stats(monkeypatch, env)
    assert len(rels) == 41
    # per module: its manifests/ directory walked (one stat) and its listing; the look-ups above the
    # modulepath directory are made once for the whole plan.  (Each module cost ~10 before.)
    assert calls <= 3 * 40 + 40, calls


def test_what_the_listing_answers_is_what_the_lookups_answered(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = make_env(tmp_path, 4)
    mods = tmp_path / "mods"
    # a module's own pattern files, read because the listing says they are there
    (mods / "m0" / ".gitignore").write_text("skipped.pp\n")
    (mods / "m0" / "manifests" / "skipped.pp").write_text("class m0::skipped {}\n")
    (mods / "m1" / ".pdkignore").write_text("/manifests/gone/\n")
    (mods / "m1" / "manifests" / "gone").mkdir()
    (mods / "m1" / "manifests" / "gone" / "x.pp").write_text("class m1::gone::x {}\n")
    # without metadata.json, a module whose .git is a file (a worktree) is still a repository root: PDK's
    # defaults are anchored there (their /tmp/ is m2/tmp, not m2/manifests/tmp) ...
    (mods / "m2" / "metadata.json").unlink()
    (mods / "m2" / ".git").write_text("gitdir: /elsewhere\n")
    (mods / "m2" / "manifests" / "tmp").mkdir()
    (mods / "m2" / "manifests" / "tmp" / "t.pp").write_text("class m2::tmp::t {}\n")
    # ... and one whose .git is a dangling link is not: they are anchored at the walk's own directory,
    # whose tmp/ is then skipped; a source directory may be a link to a directory
    (mods / "m3" / "metadata.json").unlink()
    os.symlink(tmp_path / "nowhere", mods / "m3" / ".git")
    (mods / "m3" / "manifests" / "tmp").mkdir()
    (mods / "m3" / "manifests" / "tmp" / "t.pp").write_text("class m3::tmp::t {}\n")
    (tmp_path / "real_functions").mkdir()
    (tmp_path / "real_functions" / "f.pp").write_text("function m3::f() { 1 }\n")
    os.symlink(tmp_path / "real_functions", mods / "m3" / "functions")
    _calls, rels = count_stats(monkeypatch, env)
    assert rels == [
        "environment/manifests/site.xpp",
        "m0/manifests/init.xpp",
        "m1/manifests/init.xpp",
        "m2/manifests/init.xpp",
        "m2/manifests/tmp/t.xpp",
        "m3/functions/f.xpp",
        "m3/manifests/init.xpp",
    ]

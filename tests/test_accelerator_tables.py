"""The parser's converted LALR(1) tables, cached in the user's cache directory (grammar/parser.py
_load_tables): what a process reads back is what lark makes, a damaged or foreign cache is ignored and
written again, a cache directory that is a link is neither read nor written through, and no process
that only parses imports lark."""

from __future__ import annotations

import marshal
import os
import subprocess
import sys
from typing import Any

import pytest

from puppet_xpp.grammar import parser


def canonical(data: dict[str, Any]) -> list[Any]:
    """The automaton with its states numbered in breadth-first order from the start state (by symbol)
    and its rules named by (action, size, nonterminal): lark numbers both differently from one build to
    the next (set order), so two builds are compared as automata."""
    actions, gotos, rules = data["actions"], data["gotos"], data["rules"]
    order = {data["start"]: 0}
    queue = [data["start"]]
    for state in queue:
        targets = [v for _k, v in sorted(actions[state].items()) if v >= 0]
        targets += [v for _k, v in sorted(gotos[state].items())]
        for t in targets:
            if t not in order:
                order[t] = len(order)
                queue.append(t)
    out: list[Any] = [len(actions), order[data["end"]]]
    for state in queue:
        acts = sorted(
            (k, ("s", order[v]) if v >= 0 else ("r", tuple(rules[-v - 1]))) for k, v in actions[state].items()
        )
        out.append((acts, sorted((k, order[v]) for k, v in gotos[state].items())))
    return out


@pytest.fixture(scope="module")
def lark_tables() -> list[Any]:
    return canonical(parser._lark_tables())  # noqa: SLF001 (the module's own maker)


def _cache_file(home: str) -> str:
    folder = os.path.join(home, "puppet-xpp")
    names = [n for n in os.listdir(folder) if n.startswith("tables-") and n.endswith(".marshal")]
    assert len(names) == 1, names
    return os.path.join(folder, names[0])


def _no_lark(monkeypatch: pytest.MonkeyPatch) -> None:
    def fail() -> Any:
        raise AssertionError("the tables were made again")

    monkeypatch.setattr(parser, "_lark_tables", fail)


def test_written_then_read_back(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch, lark_tables: list[Any]
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert canonical(parser._load_tables()) == lark_tables  # noqa: SLF001
    path = _cache_file(str(tmp_path))
    assert os.stat(path).st_mode & 0o077 == 0
    assert not [n for n in os.listdir(os.path.dirname(path)) if n.endswith(".tmp")]
    with monkeypatch.context() as m:
        _no_lark(m)
        assert canonical(parser._load_tables()) == lark_tables  # noqa: SLF001


@pytest.mark.parametrize(
    "damage",
    [
        b"",
        b"\x00garbage",
        marshal.dumps({"format": 1}),
        marshal.dumps([1, 2, 3]),
        "shift past the states",
        "reduce by no rule",
        "an older format",
    ],
)
def test_damaged_cache_rebuilt(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch, lark_tables: list[Any], damage: bytes | str
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    parser._load_tables()  # noqa: SLF001
    path = _cache_file(str(tmp_path))
    if isinstance(damage, str):
        data = marshal.loads(open(path, "rb").read())
        if damage == "shift past the states":
            data["actions"][0] = dict(data["actions"][0], LBRACE=len(data["actions"]))
        elif damage == "reduce by no rule":
            data["actions"][0] = dict(data["actions"][0], LBRACE=-len(data["rules"]) - 1)
        else:
            data["format"] = parser.TABLES_FORMAT - 1
        damage = marshal.dumps(data)
    with open(path, "wb") as f:
        f.write(damage)
    made = []
    real = parser._lark_tables  # noqa: SLF001
    monkeypatch.setattr(parser, "_lark_tables", lambda: made.append(1) or real())
    assert canonical(parser._load_tables()) == lark_tables  # noqa: SLF001
    assert made == [1]
    with monkeypatch.context() as m:  # written again: the next process reads it
        _no_lark(m)
        assert canonical(parser._load_tables()) == lark_tables  # noqa: SLF001


def test_cache_directory_link_not_used(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch, lark_tables: list[Any]
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    home = tmp_path / "home"
    home.mkdir()
    os.symlink(elsewhere, home / "puppet-xpp")
    monkeypatch.setenv("XDG_CACHE_HOME", str(home))
    assert canonical(parser._load_tables()) == lark_tables  # noqa: SLF001
    assert os.listdir(elsewhere) == []


def test_parsing_imports_no_lark(tmp_path: Any) -> None:
    """A process that parses (its cache written by an earlier one) never imports lark."""
    code = (
        "import sys; from puppet_xpp.grammar.parser import parse; "
        "assert parse('class a { }').program is not None; print('lark' in sys.modules)"
    )
    env = dict(os.environ, XDG_CACHE_HOME=str(tmp_path))
    run = [sys.executable, "-c", code]
    first = subprocess.run(run, env=env, capture_output=True, text=True, check=True).stdout.strip()
    second = subprocess.run(run, env=env, capture_output=True, text=True, check=True).stdout.strip()
    assert (first, second) == ("True", "False")

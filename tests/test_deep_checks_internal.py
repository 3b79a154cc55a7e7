"""A bug inside the deep checks (server/analysis/deep/internal.py) is reported, never swallowed, and
costs no other finding: a failing type model (a test double: the subject is the reporting, not the type
model) gives ``--validate --deep`` one ``INTERNAL_ERROR`` at the statement whose check failed, naming the
exception (its traceback with ``--debug``), and the file's other findings as they are without the
failure.  The language server's side (a log message, no diagnostic) is in tests/lsp/test_deep_lsp.py."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from puppet_xpp.server.analysis.deep import calls, types
from puppet_xpp.server.cli import validate

FILES = {
    "environment.conf": "modulepath = modules\n",
    "modules/app/manifests/typed.pp": "class app::typed (Integer $port) {\n}\n",
    # line 2: an unknown class; line 3: a typed parameter (the type model is asked); line 6: a call
    # of a function with a known signature given a literal (the type model is asked again)
    "modules/app/manifests/init.pp": (
        "class app {\n"
        "  include app::nosuch\n"
        "  class { 'app::typed':\n"
        "    port => 'x',\n"
        "  }\n"
        "  $x = join(5)\n"
        "  include app::other_nosuch\n"
        "}\n"
    ),
}


def write_env(root: Path) -> Path:
    for rel, text in FILES.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    return root / "modules/app/manifests/init.pp"


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = validate.main(list(argv), out, err)
    return status, out.getvalue(), err.getvalue()


def items(path: Path, *extra: str) -> tuple[int, list[dict[str, Any]]]:
    status, out, err = run("--deep", "--format", "json", *extra, str(path))
    assert out, err
    return status, json.loads(out)["diagnostics"]


def failing(*args: Any, **kwargs: Any) -> Any:
    raise ZeroDivisionError("injected failure of the type model")


@pytest.fixture()
def manifest(tmp_path: Path) -> Path:
    return write_env(tmp_path / "production")


def test_a_failing_type_model_is_one_internal_error_at_its_statement(
    manifest: Path, monkeypatch: Any
) -> None:
    status, clean = items(manifest)
    assert status == 1 and not [d for d in clean if d["code"] == "INTERNAL_ERROR"]
    typed = [d for d in clean if d["line"] in (3, 6)]
    assert [d["code"] for d in typed] == ["DEEP_WRONG_TYPE", "DEEP_WRONG_TYPE"], clean
    monkeypatch.setattr(types, "literal_mismatches", failing)
    monkeypatch.setattr(types, "matches", failing)
    status, broken = items(manifest)
    assert status == 2  # (an internal error: the file was not handled completely, as for any other)
    internal = [d for d in broken if d["code"] == "INTERNAL_ERROR"]
    # one per statement whose check asked the type model (``include`` is a function with a signature
    # too), at that statement, naming the exception and the check
    assert [(d["line"], d["column"]) for d in internal] == [(2, 3), (3, 3), (6, 8), (7, 3)], broken
    assert internal[1]["message"] == (
        "Internal error (ZeroDivisionError): in the deep check of this resource: "
        "injected failure of the type model"
    )
    assert "in the deep check of this function call: injected" in internal[2]["message"]
    # the file's other findings are all there, as without the failure (the unknown classes of the
    # statements whose check failed too)
    assert [d for d in broken if d["code"] != "INTERNAL_ERROR"] == [d for d in clean if d not in typed]


def test_the_traceback_with_debug_and_the_text_line(manifest: Path, monkeypatch: Any) -> None:
    monkeypatch.setattr(types, "literal_mismatches", failing)
    status, out, err = run("--deep", "--debug", str(manifest))
    assert status == 2
    assert (
        "Error: Internal error (ZeroDivisionError): in the deep check of this resource: injected failure "
        f"of the type model (file: {manifest}, line: 3, column: 3)"
    ) in out.splitlines()
    assert "Traceback (most recent call last)" in err and "ZeroDivisionError: injected failure" in err
    assert "Could not find class ::app::nosuch" in out and "Could not find class ::app::other_nosuch" in out


def test_a_check_that_raises_itself_costs_only_its_own_node(manifest: Path, monkeypatch: Any) -> None:
    """A bug outside the type model's catch-alls (here: in the class lookup of an ``include``)."""
    status, clean = items(manifest)
    real = calls.unknown_name

    def unknown_name(kind: str, name: str, *args: Any) -> Any:
        if name == "app::nosuch":
            raise KeyError(name)
        return real(kind, name, *args)

    monkeypatch.setattr(calls, "unknown_name", unknown_name)
    status, broken = items(manifest)
    internal = [d for d in broken if d["code"] == "INTERNAL_ERROR"]
    assert [(d["line"], d["message"]) for d in internal] == [
        (2, "Internal error (KeyError): in the deep check of this function call: 'app::nosuch'")
    ]
    assert [d for d in broken if d["code"] != "INTERNAL_ERROR"] == [d for d in clean if d["line"] != 2]


def test_a_bug_outside_the_per_node_checks_costs_only_its_statement(tmp_path: Path, monkeypatch: Any) -> None:
    """A bug in a check that judges a whole scope (its variables): the statement it was checking gets
    one INTERNAL_ERROR at its start, the file's other statements their findings."""
    from puppet_xpp.server.analysis.deep import variables

    write_env(tmp_path / "production")
    path = tmp_path / "production/manifests/site.pp"  # (the main manifest: any class may be defined there)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        "class app::one {\n  include app::nosuch_one\n}\nclass app::two {\n  include app::nosuch_two\n}\n"
    )
    status, clean = items(path)
    assert [(d["code"], d["line"]) for d in clean] == [("DEEP_UNKNOWN_CLASS", 2), ("DEEP_UNKNOWN_CLASS", 5)]
    real = variables.Scope.findings

    def findings(scope: Any, answers: Any) -> Any:
        if scope.node is not None and scope.node.name == "app::one":
            raise AttributeError("injected failure of the scope's check")
        return real(scope, answers)

    monkeypatch.setattr(variables.Scope, "findings", findings)
    status, broken = items(path)
    assert status == 2
    assert [(d["code"], d["line"], d["column"], d["message"]) for d in broken] == [
        (
            "INTERNAL_ERROR",
            1,
            1,
            "Internal error (AttributeError): in the deep check of this statement: "
            "injected failure of the scope's check",
        ),
        ("DEEP_UNKNOWN_CLASS", 5, 3, "Could not find class ::app::nosuch_two"),
    ]

"""What the language server's start imports and makes: what its first answers need, not the deep checks'
analysis, the tables of the built-ins' data, PyYAML nor the Pcore reader and writer.

The deep checks (server/analysis/deep, ~20 ms of imports) are first needed by the first publish of a
document or the first code action (server/lsp/publish.py, server/lsp/server.py ``code_action``), the
tables of the built-ins' generated data by a completion or a hover of a built-in
(server/analysis/tables.py); the server's start -- the handlers imported, the server made -- imports or
makes none of them, and a second start on an indexed workspace is ready that much sooner (issue 31
item 2).  That the deep checks still run and their quick fixes are still offered is
tests/lsp/test_deep_lsp.py's.
"""

from __future__ import annotations

import json
import subprocess
import sys

PROBE = r"""
import json, sys
from puppet_xpp.server.lsp import server
server.create_server()
from puppet_xpp.server.analysis import tables
made = [name for name in ("RESOURCE_TYPES", "FUNCTIONS", "META_PARAMETERS") if name in vars(tables)]
print(json.dumps([sorted(m for m in sys.modules if m.startswith(("puppet_xpp.", "yaml"))), made]))
"""


def imported_at_start() -> tuple[list[str], list[str]]:
    """The modules of ours (and PyYAML's) the server's start imports, and the generated data's tables it
    made."""
    out = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, check=True, timeout=120
    )
    modules, made = json.loads(out.stdout)
    return modules, made


def test_the_servers_start_imports_no_deep_check() -> None:
    modules, _made = imported_at_start()
    assert "puppet_xpp.server.lsp.language" in modules  # (the handlers are imported)
    deep = [
        m for m in modules if m.startswith(("puppet_xpp.server.analysis.deep", "puppet_xpp.server.lsp.deep"))
    ]
    assert deep == []


def test_the_servers_start_makes_no_table_of_the_builtins_data() -> None:
    """server/analysis/tables.py's tables of the core types and functions (the generated data read and
    converted, ~5 ms) are made by their first use (a completion, a hover of a built-in), not at start."""
    from puppet_xpp.server.analysis import builtins, tables

    _modules, made = imported_at_start()
    assert made == []
    # what the first use makes: the generated data's
    assert set(tables.FUNCTIONS) == set(builtins.functions())
    assert set(builtins.types()) <= set(tables.RESOURCE_TYPES)


def test_the_servers_start_imports_neither_yaml_nor_pcore() -> None:
    """PyYAML (~10 ms of imports and pattern compiles) is first needed by a YAML facts file or Hiera data,
    the Pcore reader and writer (~4 ms) by a save's .xpp: server/analysis/facts.py makes its YAML loader
    at the first read, xpp/__init__.py gives pcore's exception names when first asked for."""
    modules, _made = imported_at_start()
    assert "puppet_xpp.xpp.environment" in modules  # (the package is imported)
    assert [m for m in modules if m == "yaml" or m.startswith(("yaml.", "puppet_xpp.xpp.pcore"))] == []

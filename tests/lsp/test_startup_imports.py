"""What the language server's start imports: what its first answers need, not the deep checks' analysis.

The deep checks (server/analysis/deep, ~20 ms of imports) are first needed by the first publish of a
document or the first code action (server/lsp/publish.py, server/lsp/server.py ``code_action``); the
server's start -- the handlers imported, the server made -- imports none of them, and a second start on
an indexed workspace is ready that much sooner (issue 31 item 2).  That the deep checks still run and
their quick fixes are still offered is tests/lsp/test_deep_lsp.py's.
"""

from __future__ import annotations

import json
import subprocess
import sys

PROBE = r"""
import json, sys
from puppet_xpp.server.lsp import server
server.create_server()
print(json.dumps(sorted(m for m in sys.modules if m.startswith("puppet_xpp."))))
"""


def imported_at_start() -> list[str]:
    out = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, check=True, timeout=120
    )
    modules: list[str] = json.loads(out.stdout)
    return modules


def test_the_servers_start_imports_no_deep_check() -> None:
    modules = imported_at_start()
    assert "puppet_xpp.server.lsp.language" in modules  # (the handlers are imported)
    deep = [
        m for m in modules if m.startswith(("puppet_xpp.server.analysis.deep", "puppet_xpp.server.lsp.deep"))
    ]
    assert deep == []

"""The publishDiagnostics notification the server writes (server/lsp/publish.py ``publish``, which reuses the
lsprotocol form of diagnostics published before) is byte for byte what lsprotocol's converter makes of
the same diagnostics built afresh: ranges, severities, codes, sources, the Deprecated tag, and the
"and N more" diagnostic after the first server.lsp.text.MAX_DIAGNOSTICS."""

from __future__ import annotations

import json
from typing import Any

from lsprotocol import types
from lsprotocol.converters import get_converter

from puppet_xpp.grammar.check import CheckConfig
from puppet_xpp.server.analysis.document import Document, LspDiagnostic
from puppet_xpp.server.analysis.lint import SOURCE
from puppet_xpp.server.lsp import publish, server, text
from puppet_xpp.server.lsp.session import LINT, PARSE, DocState

URI = "file:///tmp/publish/init.pp"


class _Writer:
    def __init__(self) -> None:
        self.bodies: list[str] = []

    def write(self, data: bytes) -> None:
        self.bodies.append(data.split(b"\r\n\r\n", 1)[1].decode())

    def close(self) -> None:
        pass


def _expected(version: int, diags: list[Any]) -> str:
    """The notification as lsprotocol's converter writes it (pygls: json.dumps of the unstructured
    notification), the diagnostics built here from their fields; each source capped on its own, its
    errors first (issue 24)."""
    out = []
    sources = list(dict.fromkeys(getattr(d, "source", "puppet-xpp") for d in diags))
    for source in sources:
        group = [d for d in diags if getattr(d, "source", "puppet-xpp") == source]
        kept = sorted(sorted(group, key=lambda d: d.severity)[: text.MAX_DIAGNOSTICS], key=group.index)
        for d in kept:
            out.append(
                types.Diagnostic(
                    range=types.Range(
                        start=types.Position(line=d.start[0], character=d.start[1]),
                        end=types.Position(line=d.end[0], character=d.end[1]),
                    ),
                    severity=types.DiagnosticSeverity(d.severity),
                    code=d.code,
                    source=getattr(d, "source", "puppet-xpp"),
                    message=d.message,
                    tags=[types.DiagnosticTag.Deprecated] if d.deprecated else None,
                )
            )
        if len(group) > text.MAX_DIAGNOSTICS:
            d = next(d for d in group if all(d is not k for k in kept))
            out.append(
                types.Diagnostic(
                    range=types.Range(
                        start=types.Position(line=d.start[0], character=d.start[1]),
                        end=types.Position(line=d.end[0], character=d.end[1]),
                    ),
                    severity=types.DiagnosticSeverity.Information,
                    code="TOO_MANY_DIAGNOSTICS",
                    source="puppet-xpp",
                    message=f"and {len(group) - text.MAX_DIAGNOSTICS} more",
                )
            )
    params = types.PublishDiagnosticsParams(uri=URI, version=version, diagnostics=out)
    return json.dumps(get_converter().unstructure(types.PublishDiagnosticsNotification(params=params)))


def test_published_json_is_lsprotocols() -> None:
    ls = server.create_server()
    writer = _Writer()
    ls.protocol.set_writer(writer)
    st = DocState(URI, Document(URI, "", 1, CheckConfig(file="/tmp/publish/init.pp")))
    parse: list[Any] = [
        LspDiagnostic((0, 0), (0, 5), 1, "SYNTAX_ERROR", "Syntax error at 'x'"),
        LspDiagnostic((2, 4), (3, 1), 2, "DEPRECATED_IMPORT", "import is deprecated", deprecated=True),
    ]
    lint = [
        LspDiagnostic(
            (k, 2), (k, 9 + k % 3), 2 if k % 7 else 1, "double_quoted_strings", f"string {k}", SOURCE
        )
        for k in range(10, 240)
    ]
    st.diagnostics.set(3, PARSE, parse)
    st.diagnostics.set(3, LINT, lint)
    publish.publish(ls, st)
    assert writer.bodies == [_expected(3, [*parse, *lint])]

    # the next version: some lint diagnostics dropped, the rest moved or kept (the same objects or
    # equal new ones), a parse diagnostic changed, fewer than the cap
    lint2 = [
        *lint[:40],
        *(
            LspDiagnostic(
                (d.start[0] + 1, 2), (d.end[0] + 1, d.end[1]), d.severity, d.code, d.message, SOURCE
            )
            for d in lint[60:]
        ),
    ]
    lint2 = lint2[:150] + [
        LspDiagnostic(d.start, d.end, d.severity, d.code, d.message, SOURCE) for d in lint2[150:170]
    ]
    parse2 = [parse[0], LspDiagnostic((2, 4), (3, 1), 2, "DEPRECATED_IMPORT", "import is deprecated")]
    st.diagnostics.set(4, PARSE, parse2)
    st.diagnostics.set(4, LINT, lint2)
    publish.publish(ls, st)
    assert writer.bodies[1] == _expected(4, [*parse2, *lint2])
    assert '"tags": [2]' in writer.bodies[0] and '"tags"' not in writer.bodies[1]
    assert '"source": "puppet-lint"' in writer.bodies[1] and "and 30 more" in writer.bodies[0]

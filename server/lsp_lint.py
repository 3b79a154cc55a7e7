"""pygls handlers for lint (the logic is server/analysis_lint.py): Format Document / Selection, formatting
while typing (after ``=>`` and after a line break), and code actions (quick fixes, "ignore this check on
this line", fix all). ``register(ls)`` adds them to the server; ``configure(settings)`` takes the
client's settings (section ``puppet``, key ``lint``); ``diagnostics(st)`` gives the lint diagnostics the
server publishes with its own.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from lsprotocol import types as L

from . import analysis_lint as AL
from .analysis import path_of_uri

log = logging.getLogger("puppet-xpp.lsp")

# lint diagnostics and quick fixes are opt-in (``puppet.lint.enabled``): the server's diagnostics stay
# the parser's and validator's unless the user asks for puppet-lint's; formatting is always available
_settings = AL.LintSettings(enabled=False)


def configure(d: Any) -> bool:
    """Take the lint settings from a client settings object (unknown keys ignored); True if they
    changed (open documents then need new diagnostics)."""
    global _settings
    old = _settings
    _settings = AL.LintSettings.from_dict(d, _settings)
    return _settings != old


def settings() -> AL.LintSettings:
    return _settings


def diagnostics(doc: Any, uri: str) -> list[AL.LintDiag]:
    """Worker thread: lint diagnostics of a (synced) document; none for EPP or when lint is off."""
    if not _settings.enabled:
        return []
    path = path_of_uri(uri)
    try:
        return AL.diagnostics(doc.text, path, _settings, doc.encoding)
    except Exception:  # lint must never cost the parser's diagnostics
        log.exception("lint failed for %s", uri)
        return []


def _edits(edits: list[AL.Edit]) -> list[L.TextEdit]:
    return [
        L.TextEdit(
            range=L.Range(
                start=L.Position(line=a[0], character=a[1]), end=L.Position(line=b[0], character=b[1])
            ),
            new_text=t,
        )
        for a, b, t in edits
    ]


async def _on_doc(ls: Any, uri: str, fn: Any, default: Any) -> Any:
    """Run ``fn(text, path, encoding)`` on the worker with the document's current text."""
    from .lsp import _sync_state

    st = ls.docs.get(uri)
    if st is None or uri.endswith(".epp"):
        return default

    def run() -> Any:
        _sync_state(st)
        if st.refused is not None:
            return default
        return fn(st.doc.text, path_of_uri(uri), st.doc.encoding)

    try:
        return await ls.on_worker(run)
    except Exception as e:
        log.exception("lint request failed for %s", uri)
        ls.log(f"puppet-xpp: lint request failed for {uri}: {e!r}", L.MessageType.Error)
        return default


def register(ls: Any) -> None:
    feature: Callable[..., Callable[[Callable[..., Any]], Callable[..., Any]]] = ls.feature

    @feature(L.TEXT_DOCUMENT_FORMATTING)
    async def formatting(ls: Any, params: L.DocumentFormattingParams) -> list[L.TextEdit]:
        def fn(text: str, path: str | None, enc: str) -> list[L.TextEdit]:
            return _edits(AL.formatting(text, path, _settings, enc))

        result: list[L.TextEdit] = await _on_doc(ls, params.text_document.uri, fn, [])
        return result

    @feature(L.TEXT_DOCUMENT_RANGE_FORMATTING)
    async def range_formatting(ls: Any, params: L.DocumentRangeFormattingParams) -> list[L.TextEdit]:
        r = params.range
        rng = ((r.start.line, r.start.character), (r.end.line, r.end.character))

        def fn(text: str, path: str | None, enc: str) -> list[L.TextEdit]:
            return _edits(AL.formatting(text, path, _settings, enc, rng))

        result: list[L.TextEdit] = await _on_doc(ls, params.text_document.uri, fn, [])
        return result

    @feature(
        L.TEXT_DOCUMENT_ON_TYPE_FORMATTING,
        L.DocumentOnTypeFormattingOptions(first_trigger_character=">", more_trigger_character=["\n"]),
    )
    async def on_type_formatting(ls: Any, params: L.DocumentOnTypeFormattingParams) -> list[L.TextEdit]:
        pos = (params.position.line, params.position.character)

        def fn(text: str, path: str | None, enc: str) -> list[L.TextEdit]:
            return _edits(AL.on_type_formatting(text, path, _settings, pos, params.ch, enc))

        result: list[L.TextEdit] = await _on_doc(ls, params.text_document.uri, fn, [])
        return result

    @feature(
        L.TEXT_DOCUMENT_CODE_ACTION,
        L.CodeActionOptions(code_action_kinds=[L.CodeActionKind.QuickFix, L.CodeActionKind.SourceFixAll]),
    )
    async def code_action(ls: Any, params: L.CodeActionParams) -> list[L.CodeAction]:
        uri = params.text_document.uri
        r = params.range
        rng = ((r.start.line, r.start.character), (r.end.line, r.end.character))

        def fn(text: str, path: str | None, enc: str) -> list[L.CodeAction]:
            out = []
            for a in AL.code_actions(text, path, _settings, rng, enc):
                diags = None
                if a.diagnostic is not None:
                    d = a.diagnostic
                    diags = [
                        L.Diagnostic(
                            range=L.Range(
                                start=L.Position(line=d.start[0], character=d.start[1]),
                                end=L.Position(line=d.end[0], character=d.end[1]),
                            ),
                            severity=L.DiagnosticSeverity(d.severity),
                            code=d.code,
                            source=d.source,
                            message=d.message,
                        )
                    ]
                kind = L.CodeActionKind.QuickFix if a.kind == "quickfix" else L.CodeActionKind.SourceFixAll
                out.append(
                    L.CodeAction(
                        title=a.title,
                        kind=kind,
                        diagnostics=diags,
                        edit=L.WorkspaceEdit(changes={uri: _edits(a.edits)}),
                    )
                )
            return out

        result: list[L.CodeAction] = await _on_doc(ls, uri, fn, [])
        return result

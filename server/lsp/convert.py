"""The one place where plain data (server/analysis: positions as (line, column) pairs, spans, paths,
the answers of server/analysis/answers.py, diagnostics) and lsprotocol's types meet, both ways."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from lsprotocol import types

from puppet_xpp.server.analysis import answers
from puppet_xpp.server.analysis.document import LspDiagnostic, Pos, Span, uri_of_path
from puppet_xpp.server.analysis.lint import Edit
from puppet_xpp.server.analysis.symbols import Sym

# ----------------------------------------------------------------------------------------------- from the client


def pos_of(p: types.Position) -> Pos:
    return p.line, p.character


def span_of(r: types.Range) -> Span:
    return (r.start.line, r.start.character), (r.end.line, r.end.character)


# ----------------------------------------------------------------------------------------------- to the client


def position(p: Pos) -> types.Position:
    return types.Position(line=p[0], character=p[1])


def range_(span: Span) -> types.Range:
    return types.Range(start=position(span[0]), end=position(span[1]))


def location(loc: answers.Location, uri: str) -> types.Location:
    """``loc`` (its path None: the document ``uri``)."""
    return types.Location(uri=uri if loc.path is None else uri_of_path(loc.path), range=range_(loc.span))


def path_location(path: str, span: Span) -> types.Location:
    return types.Location(uri=uri_of_path(path), range=range_(span))


def locations(locs: Sequence[answers.Location] | None, uri: str) -> list[types.Location] | None:
    return [location(loc, uri) for loc in locs] if locs else None


def markdown(text: str) -> types.MarkupContent:
    return types.MarkupContent(kind=types.MarkupKind.Markdown, value=text)


def hover(h: answers.Hover | None) -> types.Hover | None:
    return None if h is None else types.Hover(contents=markdown(h.markdown), range=range_(h.span))


def diagnostic(d: LspDiagnostic) -> types.Diagnostic:
    return types.Diagnostic(
        range=types.Range(
            start=types.Position(line=d.start[0], character=d.start[1]),
            end=types.Position(line=d.end[0], character=d.end[1]),
        ),
        severity=types.DiagnosticSeverity(d.severity),
        code=d.code,
        source=d.source,
        message=d.message,
        tags=[types.DiagnosticTag.Deprecated] if d.deprecated else None,
    )


def text_edits(edits: Sequence[Edit]) -> list[types.TextEdit]:
    return [types.TextEdit(range=range_((a, b)), new_text=t) for a, b, t in edits]


SYMBOL_KINDS = {
    "class": types.SymbolKind.Class,
    "define": types.SymbolKind.Struct,
    "function": types.SymbolKind.Function,
    "plan": types.SymbolKind.Method,
    "type": types.SymbolKind.TypeParameter,
    "node": types.SymbolKind.Module,
}


def symbol_kind(kind: str) -> types.SymbolKind:
    """The SymbolKind of an index entry's kind (workspace symbols)."""
    return SYMBOL_KINDS.get(kind, types.SymbolKind.Object)


def workspace_symbol(s: Sym) -> types.WorkspaceSymbol:
    return types.WorkspaceSymbol(
        name=s.name,
        kind=symbol_kind(s.kind),
        container_name=s.kind,
        location=path_location(s.path, s.selection),
    )


def document_symbol(s: answers.DocumentSymbol) -> types.DocumentSymbol:
    return types.DocumentSymbol(
        name=s.name,
        detail=s.detail,
        kind=types.SymbolKind(s.kind),
        range=range_(s.span),
        selection_range=range_(s.selection),
        children=[document_symbol(c) for c in s.children],
    )


FOLDING_KINDS = {"comment": types.FoldingRangeKind.Comment, "region": types.FoldingRangeKind.Region}


def folding_range(first: int, last: int, kind: str | None) -> types.FoldingRange:
    return types.FoldingRange(start_line=first, end_line=last, kind=FOLDING_KINDS.get(kind or ""))


def completion_item(it: answers.CompletionItem) -> types.CompletionItem:
    """``it`` as lsprotocol's CompletionItem (completionItem/resolve answers one item in this form)."""
    return types.CompletionItem(
        label=it.label,
        kind=types.CompletionItemKind[it.kind],
        detail=it.detail,
        documentation=it.documentation,
        insert_text=it.insert_text,
        insert_text_format=types.InsertTextFormat.Snippet if it.snippet else None,
        filter_text=it.filter_text,
        sort_text=it.sort_text,
        text_edit=None if it.edit is None else types.TextEdit(range=range_(it.edit[0]), new_text=it.edit[1]),
        data=it.data,
    )


class Prebuilt:
    """A result already in its JSON form (the object's ``__dict__``), sent as it is.

    pygls serialises a result through cattrs: it builds nothing for an object of a class cattrs does not
    know (it passes it on unchanged) and the JSON encoder then writes the object's ``__dict__``
    (pygls' ``_serialize_message``), so the payload goes straight to the C encoder.  A completion list
    is the one answer with many parts: 1,290 items (``stdlib::`` in a workspace of the corpus's
    modules) cost ~8 ms to build as lsprotocol objects and ~10-15 ms more to unstructure, on the event
    loop that also reads the next keystroke.  The JSON is the same (tests/lsp/test_completion_wire.py
    holds it equal to lsprotocol's own)."""

    def __init__(self, payload: dict[str, Any]) -> None:
        self.__dict__ = payload


@dataclass(frozen=True)
class CompletionWire:
    """What the client said it takes of a completion list: ``itemDefaults.editRange`` (every item's
    edit range given once) and documentation resolved later (``completionItem/resolve``: an item that
    can be resolved is sent without its documentation; the resolve answers it, in markdown)."""

    edit_range_default: bool = False
    resolves_documentation: bool = False


def completion_wire(caps: types.ClientCapabilities | None) -> CompletionWire:
    document = caps.text_document if caps is not None else None
    completion = document.completion if document is not None else None
    if completion is None:
        return CompletionWire()
    listing = completion.completion_list
    defaults = listing.item_defaults if listing is not None else None
    item = completion.completion_item
    resolve = item.resolve_support if item is not None else None
    return CompletionWire(
        edit_range_default="editRange" in (defaults or ()),
        resolves_documentation="documentation" in (resolve.properties if resolve is not None else ()),
    )


# CompletionItemKind's numbers by name
COMPLETION_KINDS = {kind.name: kind.value for kind in types.CompletionItemKind}


def _range_json(span: Span) -> dict[str, dict[str, int]]:
    (a, b), (c, d) = span
    return {"start": {"line": a, "character": b}, "end": {"line": c, "character": d}}


def completion_item_json(
    it: answers.CompletionItem, edit_range: Span | None = None, wire: CompletionWire = CompletionWire()
) -> dict[str, Any]:
    """``it`` as JSON, the same as lsprotocol's CompletionItem unstructured (no member that is None).
    ``edit_range``: the list's default edit range, which ``it``'s edit covers (its text goes in
    ``textEditText``, or nowhere when it is the label)."""
    out: dict[str, Any] = {"label": it.label, "kind": COMPLETION_KINDS[it.kind]}
    if it.detail is not None:
        out["detail"] = it.detail
    if it.documentation is not None and not (wire.resolves_documentation and it.data is not None):
        out["documentation"] = it.documentation
    if it.sort_text is not None:
        out["sortText"] = it.sort_text
    if it.filter_text is not None:
        out["filterText"] = it.filter_text
    if it.insert_text is not None:
        out["insertText"] = it.insert_text
    if it.snippet:
        out["insertTextFormat"] = types.InsertTextFormat.Snippet.value
    if it.edit is not None:
        if edit_range is None:
            out["textEdit"] = {"range": _range_json(it.edit[0]), "newText": it.edit[1]}
        elif it.edit[1] != it.label:
            out["textEditText"] = it.edit[1]
    if it.data is not None:
        out["data"] = it.data
    return out


def completion_list(c: answers.Completions, wire: CompletionWire = CompletionWire()) -> Prebuilt:
    """The completion list in its JSON form (:class:`Prebuilt`).  When every item edits the same range
    (the typed prefix: a Puppet document's completions) and the client takes ``itemDefaults``, the range
    is given once instead of in each item (half the bytes of a long list)."""
    shared: Span | None = None
    if wire.edit_range_default and c.items:
        first = c.items[0].edit
        if first is not None and all(it.edit is not None and it.edit[0] == first[0] for it in c.items):
            shared = first[0]
    payload: dict[str, Any] = {"isIncomplete": False}
    if shared is not None:
        payload["itemDefaults"] = {"editRange": _range_json(shared)}
    payload["items"] = [completion_item_json(it, shared, wire) for it in c.items]
    return Prebuilt(payload)


def signature_help(h: answers.SignatureHelp | None) -> types.SignatureHelp | None:
    if h is None:
        return None
    return types.SignatureHelp(
        signatures=[
            types.SignatureInformation(
                label=s.label,
                documentation=markdown(s.documentation) if s.documentation else None,
                parameters=[types.ParameterInformation(label=(a, b)) for a, b in s.parameters],
            )
            for s in h.signatures
        ],
        active_signature=h.active_signature,
        active_parameter=h.active_parameter,
    )


def workspace_edit(
    edits: dict[str, list[Edit]],
    moves: Sequence[tuple[str, str]],
    versions: dict[str, int | None],
    document_changes: bool,
) -> types.WorkspaceEdit:
    """Text edits by file (each file's sorted) and file moves; ``changes`` by URI when nothing moves and
    the client does not ask for ``documentChanges``, else versioned ``documentChanges``."""
    by_path = {
        path: [types.TextEdit(range=range_((s, e)), new_text=t) for s, e, t in sorted(lst)]
        for path, lst in edits.items()
    }
    if not moves and not document_changes:
        return types.WorkspaceEdit(changes={uri_of_path(p): e for p, e in by_path.items()})
    changes: list[types.TextDocumentEdit | types.CreateFile | types.RenameFile | types.DeleteFile] = [
        types.TextDocumentEdit(
            text_document=types.OptionalVersionedTextDocumentIdentifier(
                uri=uri_of_path(p), version=versions.get(p)
            ),
            edits=list(e),
        )
        for p, e in sorted(by_path.items())
    ]
    for old, new in moves:
        changes.append(types.RenameFile(old_uri=uri_of_path(old), new_uri=uri_of_path(new)))
    return types.WorkspaceEdit(document_changes=changes)


# the SymbolKind of a call hierarchy item, by reference key kind (else Function)
CALL_KINDS = {
    "class": types.SymbolKind.Class,
    "type": types.SymbolKind.Struct,
    "plan": types.SymbolKind.Method,
    "node": types.SymbolKind.Module,
    "file": types.SymbolKind.File,
}


def call_item(
    name: str, kind: str, path: str, span: Span, detail: str, data: list[object]
) -> types.CallHierarchyItem:
    return types.CallHierarchyItem(
        name=name,
        kind=CALL_KINDS.get(kind, types.SymbolKind.Function),
        uri=uri_of_path(path),
        range=range_(span),
        selection_range=range_(span),
        detail=detail,
        data=data,
    )

"""LSP handlers for references, document highlight, rename and call hierarchy (thin: the work is in
server/analysis/references.py and server/analysis/rename.py).  ``register(ls)`` is called by ``lsp.create_server``.

Open documents feed the reference index from their current analysis right before a request is
answered (only the documents whose analysis changed are re-extracted); closed files come from the
workspace indexing, which parses each file once for both the symbol index and the reference index.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from lsprotocol import types as L
from pygls.exceptions import JsonRpcException

from puppet_xpp.server.analysis import references as R
from puppet_xpp.server.analysis import rename as RN
from puppet_xpp.server.analysis.document import path_of_uri, uri_of_path
from puppet_xpp.server.analysis.index import index_file

if TYPE_CHECKING:
    from pygls.lsp.server import LanguageServer

REQUEST_FAILED = -32803


def _pos(p):
    return L.Position(line=p[0], character=p[1])


def _rng(a, b):
    return L.Range(start=_pos(a), end=_pos(b))


def _loc(r):
    return L.Location(uri=uri_of_path(r.path), range=_rng(r.start, r.end))


def refresh_open_documents(ls) -> None:
    """Worker thread: bring the reference index up to date with every open ``.pp`` document."""
    from puppet_xpp.server.lsp.server import _sync_state

    for uri, st in list(ls.docs.items()):
        path = path_of_uri(uri)
        if not path or not path.endswith(".pp"):
            continue
        _sync_state(st)
        ls.refs.set_analysis(path, st.doc.analysis())


def _at(ls, uri, position):
    """Worker thread: the Ref under the cursor (open document), or None."""
    refresh_open_documents(ls)
    R.refresh_hiera(ls.refs, _roots(ls))
    path = path_of_uri(uri)
    if path is None:
        return None
    return R.ref_at(ls.refs.file_refs(path), position.line, position.character)


def _roots(ls) -> list:
    from puppet_xpp.server.lsp import world as lsp_world

    return lsp_world.index_roots(ls)


def _edit_caps(ls):
    ws = getattr(ls.client_caps, "workspace", None)
    return getattr(ws, "workspace_edit", None)


def can_move_files(ls) -> bool:
    """The client applies RenameFile operations (resource operations live in documentChanges, so a
    client announcing them takes documentChanges too: Neovim 0.7 announces only the former)."""
    ops = getattr(_edit_caps(ls), "resource_operations", None) or []
    return any(getattr(o, "value", o) == "rename" for o in ops)


def _modulepath_of(ls):
    from puppet_xpp.server.analysis.workspace import file_context

    return lambda path: file_context(path, ls.settings, ls.roots).modulepath


def workspace_edit(ls, plan: RN.Plan) -> L.WorkspaceEdit:
    versions = {}
    for uri, st in ls.docs.items():
        p = path_of_uri(uri)
        if p:
            versions[p] = st.version
    edits = {
        path: [L.TextEdit(range=_rng(s, e), new_text=t) for s, e, t in sorted(lst)]
        for path, lst in plan.edits.items()
    }
    if not plan.moves and not getattr(_edit_caps(ls), "document_changes", False) and not can_move_files(ls):
        return L.WorkspaceEdit(changes={uri_of_path(p): e for p, e in edits.items()})
    changes: list = [
        L.TextDocumentEdit(
            text_document=L.OptionalVersionedTextDocumentIdentifier(
                uri=uri_of_path(p), version=versions.get(p)
            ),
            edits=e,
        )
        for p, e in sorted(edits.items())
    ]
    for old, new in plan.moves:
        # some clients (Neovim 0.7) rename without creating the target's directory: create it here
        os.makedirs(os.path.dirname(new), exist_ok=True)
        changes.append(L.RenameFile(old_uri=uri_of_path(old), new_uri=uri_of_path(new)))
    return L.WorkspaceEdit(document_changes=changes)


def ruby_definitions(ls, key) -> list:
    """Locations of Ruby-defined functions and resource types of that name (the workspace index reads
    them from the modules' .rb files; they are definitions only: Ruby code is never edited)."""
    kinds = {"function": ("function",), "type": ("resource_type",)}.get(key[0])
    if not kinds:
        return []
    return [
        L.Location(uri=uri_of_path(s.path), range=_rng(*s.selection))
        for s in ls.index.lookup(key[1], kinds)
        if s.path.endswith(".rb")
    ]


def _refuse_ruby(ls, ref) -> None:
    rb = ruby_definitions(ls, ref.key)
    if rb and not ls.refs.defs(ref.key):
        raise RenameRefused(
            f"{ref.text} is defined in Ruby ({path_of_uri(rb[0].uri)}): Ruby files are not renamed"
        )


def _item(ls, key):
    defs = ls.refs.defs(key)
    if not defs:
        return None
    d = defs[0]
    kind = {
        "class": L.SymbolKind.Class,
        "type": L.SymbolKind.Struct,
        "plan": L.SymbolKind.Method,
        "node": L.SymbolKind.Module,
    }.get(key[0], L.SymbolKind.Function)
    return L.CallHierarchyItem(
        name=d.text,
        kind=kind,
        uri=uri_of_path(d.path),
        range=_rng(d.start, d.end),
        selection_range=_rng(d.start, d.end),
        detail=key[0],
        data=list(key),
    )


def _owner_item(ls, owner):
    if owner[0] == "file":
        return L.CallHierarchyItem(
            name=owner[1].rsplit("/", 1)[-1],
            kind=L.SymbolKind.File,
            uri=uri_of_path(owner[1]),
            range=_rng((0, 0), (0, 0)),
            selection_range=_rng((0, 0), (0, 0)),
            detail="top level",
            data=list(owner),
        )
    return _item(ls, owner)


def register(ls) -> None:
    from puppet_xpp.server.analysis import index as AI

    srv: LanguageServer = ls  # typed handle for the decorators (ls also carries PuppetServer's attributes)
    ls.refs = R.RefIndex()
    AI.PARSED_HOOKS.append(R.feed(ls.refs))

    async def on_worker_at(uri, position, fn):
        return await ls.on_worker(lambda: fn(_at(ls, uri, position)))

    @srv.feature(L.TEXT_DOCUMENT_REFERENCES)
    async def references(ls, params: L.ReferenceParams):
        incl = params.context.include_declaration

        def fn(ref):
            if ref is None:
                return None
            out = [_loc(r) for r in ls.refs.refs(ref.key) if incl or r.role != "def"]
            if incl:
                out[:0] = ruby_definitions(ls, ref.key)
            return out

        return await on_worker_at(params.text_document.uri, params.position, fn)

    @srv.feature(L.TEXT_DOCUMENT_DOCUMENT_HIGHLIGHT)
    async def highlight(ls, params: L.DocumentHighlightParams):
        path = path_of_uri(params.text_document.uri)

        def fn(ref):
            if ref is None:
                return None
            out = []
            for r in ls.refs.refs(ref.key):
                if r.path != path:
                    continue
                if ref.key[0] in ("var", "lvar"):
                    k = (
                        L.DocumentHighlightKind.Write
                        if r.role in ("def", "write")
                        else L.DocumentHighlightKind.Read
                    )
                else:
                    k = L.DocumentHighlightKind.Text
                out.append(L.DocumentHighlight(range=_rng(r.start, r.end), kind=k))
            return out

        return await on_worker_at(params.text_document.uri, params.position, fn)

    @srv.feature(L.TEXT_DOCUMENT_PREPARE_RENAME)
    async def prepare_rename(ls, params: L.PrepareRenameParams):
        def fn(ref):
            if ref is None:
                raise RenameRefused("nothing to rename here")
            _refuse_ruby(ls, ref)
            try:
                RN.check_renameable(ls.refs, ref)
            except RN.RenameError as e:
                raise RenameRefused(str(e)) from None
            start, end = RN.target_range(ref)
            return L.PrepareRenamePlaceholder(
                range=_rng(start, end),
                placeholder=ref.text.rpartition("::")[2] if ref.key[0] in ("var", "lvar") else ref.text,
            )

        return await on_worker_at(params.text_document.uri, params.position, fn)

    @srv.feature(L.TEXT_DOCUMENT_RENAME, L.RenameOptions(prepare_provider=True))
    async def rename(ls, params: L.RenameParams):
        def fn(ref):
            if ref is None:
                raise RenameRefused("nothing to rename here")
            _refuse_ruby(ls, ref)
            movable = can_move_files(ls)
            try:
                plan = RN.plan_rename(
                    ls.refs, ref, params.new_name, _modulepath_of(ls), movable, can_leave_module=movable
                )
            except RN.RenameError as e:
                raise RenameRefused(str(e)) from None
            return workspace_edit(ls, plan)

        return await on_worker_at(params.text_document.uri, params.position, fn)

    @srv.feature(L.TEXT_DOCUMENT_PREPARE_CALL_HIERARCHY)
    async def prepare_call_hierarchy(ls, params: L.CallHierarchyPrepareParams):
        def fn(ref):
            if ref is None or ref.key[0] not in RN.CALLABLE:
                return None
            item = _item(ls, ref.key)
            return [item] if item else None

        return await on_worker_at(params.text_document.uri, params.position, fn)

    @srv.feature(L.CALL_HIERARCHY_INCOMING_CALLS)
    async def incoming_calls(ls, params: L.CallHierarchyIncomingCallsParams):
        key = tuple(params.item.data or ())

        def work():
            refresh_open_documents(ls)
            out = []
            for owner, refs in sorted(RN.incoming(ls.refs, key).items(), key=lambda kv: str(kv[0])):
                item = _owner_item(ls, owner)
                if item is not None:
                    out.append(
                        L.CallHierarchyIncomingCall(
                            from_=item, from_ranges=[_rng(r.start, r.end) for r in refs]
                        )
                    )
            return out

        return await ls.on_worker(work)

    @srv.feature(L.CALL_HIERARCHY_OUTGOING_CALLS)
    async def outgoing_calls(ls, params: L.CallHierarchyOutgoingCallsParams):
        key = tuple(params.item.data or ())

        def work():
            refresh_open_documents(ls)
            out = []
            for callee, refs in sorted(RN.outgoing(ls.refs, key).items()):
                item = _item(ls, callee)
                if item is not None:
                    out.append(
                        L.CallHierarchyOutgoingCall(to=item, from_ranges=[_rng(r.start, r.end) for r in refs])
                    )
            return out

        return await ls.on_worker(work)

    @srv.feature(
        L.WORKSPACE_DID_RENAME_FILES,
        L.FileOperationRegistrationOptions(
            filters=[L.FileOperationFilter(pattern=L.FileOperationPattern(glob="**/*.pp"))]
        ),
    )
    async def did_rename_files(ls, params: L.RenameFilesParams):
        for f in params.files:
            old, new = path_of_uri(f.old_uri), path_of_uri(f.new_uri)
            if old:
                ls.refs.remove_file(old)
                ls.index.remove_file(old)
            if new and new.endswith(".pp") and new not in {path_of_uri(u) for u in ls.docs}:
                syms = await ls.on_worker(index_file, new)
                ls.index.set_file(new, syms)


class RenameRefused(JsonRpcException):
    """Sent to the client as a RequestFailed error whose message says why."""

    CODE = REQUEST_FAILED

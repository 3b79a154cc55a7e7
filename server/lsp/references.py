"""The handlers of references, document highlight, rename and call hierarchy (the work is in
server/analysis/references.py and server/analysis/rename.py; the reference index is the session's).

Open documents feed the reference index from their current analysis right before a request is
answered (only the documents whose analysis changed are re-extracted); closed files come from the
workspace indexing, which parses each file once for both the symbol index and the reference index.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any, TypeVar, cast

from lsprotocol import types
from pygls.exceptions import JsonRpcContentModified, JsonRpcException

from puppet_xpp.server.analysis import references, rename
from puppet_xpp.server.analysis.document import Pos, path_of_uri
from puppet_xpp.server.analysis.workspace import file_context
from puppet_xpp.server.lsp import convert, indexing, sync
from puppet_xpp.server.lsp.language_server import PuppetServer
from puppet_xpp.server.lsp.session import Session

REQUEST_FAILED = -32803
T = TypeVar("T")


class RenameRefused(JsonRpcException):
    """Sent to the client as a RequestFailed error whose message says why."""

    CODE = REQUEST_FAILED


def refresh_open_documents(session: Session) -> None:
    """Worker thread: bring the reference index up to date with every open ``.pp`` document."""
    for uri, st in list(session.documents.items()):
        path = path_of_uri(uri)
        if not path or not path.endswith(".pp"):
            continue
        sync.sync_state(st)
        session.refs.set_analysis(path, st.doc.analysis())


def ref_at(session: Session, uri: str, position: Pos) -> Any:
    """Worker thread: the Ref under the cursor (open document), or None."""
    refresh_open_documents(session)
    references.refresh_hiera(session.refs, session.index_roots())
    path = path_of_uri(uri)
    if path is None:
        return None
    found = references.refs_at(session.refs.file_refs(path), position[0], position[1])
    if not found:
        return None
    defined = [r for r in found if session.refs.defs(r.key)]
    return defined[0] if defined else found[0]


async def on_worker_at(ls: PuppetServer, uri: str, position: types.Position, fn: Callable[[Any], T]) -> T:
    session = ls.session
    pos = convert.pos_of(position)
    return await ls.on_worker(lambda: fn(ref_at(session, uri, pos)))


def workspace_edit(session: Session, plan: rename.Plan) -> types.WorkspaceEdit:
    versions: dict[str, int | None] = {}
    for uri, st in session.documents.items():
        p = path_of_uri(uri)
        if p:
            versions[p] = st.version
    for _old, new in plan.moves:
        # some clients (Neovim 0.7) rename without creating the target's directory: create it here
        os.makedirs(os.path.dirname(new), exist_ok=True)
    document_changes = session.takes_document_changes() or session.can_move_files()
    return convert.workspace_edit(plan.edits, plan.moves, versions, document_changes)


def ruby_definitions(session: Session, key: references.RefKey) -> list[types.Location]:
    """Locations of Ruby-defined functions and resource types of that name (the workspace index reads
    them from the modules' .rb files; they are definitions only: Ruby code is never edited)."""
    kinds = {"function": ("function",), "type": ("resource_type",)}.get(key[0])
    if not kinds:
        return []
    return [
        convert.path_location(s.path, s.selection)
        for s in session.index.lookup(key[1], kinds)
        if s.path.endswith(".rb")
    ]


def _refuse_ruby(session: Session, ref: Any) -> None:
    rb = ruby_definitions(session, ref.key)
    if rb and not session.refs.defs(ref.key):
        raise RenameRefused(
            f"{ref.text} is defined in Ruby ({path_of_uri(rb[0].uri)}): Ruby files are not renamed"
        )


def _item(session: Session, key: references.RefKey) -> types.CallHierarchyItem | None:
    defs = session.refs.defs(key)
    if not defs:
        return None
    d = defs[0]
    return convert.call_item(d.text, key[0], d.path, (d.start, d.end), key[0], list(key))


def _owner_item(session: Session, owner: references.Owner) -> types.CallHierarchyItem | None:
    if owner[0] == "file":
        name = owner[1].rsplit("/", 1)[-1]
        return convert.call_item(name, "file", owner[1], ((0, 0), (0, 0)), "top level", list(owner))
    return _item(session, owner)


async def need_complete_index(
    ls: PuppetServer, refusal: type[JsonRpcException] = JsonRpcContentModified
) -> None:
    """Wait (bounded) for the whole workspace index, or raise ``refusal`` saying why: references, rename
    and call hierarchy never answer from a partial index as if it were complete (a rename from it would
    leave uses behind and break the catalog)."""
    why = await indexing.wait_complete(ls)
    if why is not None:
        raise refusal(why)


# ----------------------------------------------------------------------------------------------- handlers


async def find_references(ls: PuppetServer, params: types.ReferenceParams) -> list[types.Location] | None:
    session = ls.session
    incl = params.context.include_declaration

    def fn(ref: Any) -> list[types.Location] | None:
        if ref is None:
            return None
        out = [
            convert.path_location(r.path, (r.start, r.end))
            for r in session.refs.refs(ref.key)
            if incl or r.role != "def"
        ]
        if incl:
            out[:0] = ruby_definitions(session, ref.key)
        return out

    await need_complete_index(ls)
    return await on_worker_at(ls, params.text_document.uri, params.position, fn)


async def highlight(
    ls: PuppetServer, params: types.DocumentHighlightParams
) -> list[types.DocumentHighlight] | None:
    session = ls.session
    path = path_of_uri(params.text_document.uri)

    def fn(ref: Any) -> list[types.DocumentHighlight] | None:
        if ref is None:
            return None
        out = []
        for r in session.refs.refs(ref.key):
            if r.path != path:
                continue
            if ref.key[0] in ("var", "lvar"):
                k = (
                    types.DocumentHighlightKind.Write
                    if r.role in ("def", "write")
                    else types.DocumentHighlightKind.Read
                )
            else:
                k = types.DocumentHighlightKind.Text
            out.append(types.DocumentHighlight(range=convert.range_((r.start, r.end)), kind=k))
        return out

    return await on_worker_at(ls, params.text_document.uri, params.position, fn)


async def prepare_rename(
    ls: PuppetServer, params: types.PrepareRenameParams
) -> types.PrepareRenamePlaceholder:
    session = ls.session

    def fn(ref: Any) -> types.PrepareRenamePlaceholder:
        if ref is None:
            raise RenameRefused("nothing to rename here")
        _refuse_ruby(session, ref)
        try:
            rename.check_renameable(session.refs, ref)
        except rename.RenameError as e:
            raise RenameRefused(str(e)) from None
        start, end = rename.target_range(ref)
        return types.PrepareRenamePlaceholder(
            range=convert.range_((start, end)),
            placeholder=ref.text.rpartition("::")[2] if ref.key[0] in ("var", "lvar") else ref.text,
        )

    await need_complete_index(ls, RenameRefused)
    return await on_worker_at(ls, params.text_document.uri, params.position, fn)


RENAME_OPTIONS = types.RenameOptions(prepare_provider=True)


async def rename_symbol(ls: PuppetServer, params: types.RenameParams) -> types.WorkspaceEdit:
    session = ls.session

    def modulepath_of(path: str) -> tuple[str, ...]:
        return file_context(path, session.settings).modulepath

    def fn(ref: Any) -> tuple[types.WorkspaceEdit, str | None]:
        if ref is None:
            raise RenameRefused("nothing to rename here")
        _refuse_ruby(session, ref)
        movable = session.can_move_files()
        try:
            plan = rename.plan_rename(
                session.refs, ref, params.new_name, modulepath_of, movable, can_leave_module=movable
            )
        except rename.RenameError as e:
            raise RenameRefused(str(e)) from None
        return workspace_edit(session, plan), plan.computed_note()

    await need_complete_index(ls, RenameRefused)
    edit, note = await on_worker_at(ls, params.text_document.uri, params.position, fn)
    if note is not None:  # names computed at run time are not edited: say where they are
        ls.window_show_message(types.ShowMessageParams(type=types.MessageType.Warning, message=note))
    return edit


async def prepare_call_hierarchy(
    ls: PuppetServer, params: types.CallHierarchyPrepareParams
) -> list[types.CallHierarchyItem] | None:
    session = ls.session

    def fn(ref: Any) -> list[types.CallHierarchyItem] | None:
        if ref is None or ref.key[0] not in rename.CALLABLE:
            return None
        item = _item(session, ref.key)
        return [item] if item else None

    await need_complete_index(ls)
    return await on_worker_at(ls, params.text_document.uri, params.position, fn)


def _calls(
    found: list[tuple[Any, list[Any]]], item: Callable[[Any], types.CallHierarchyItem | None]
) -> list[tuple[types.CallHierarchyItem, list[types.Range]]]:
    """Worker: each caller or callee of ``found`` that has an item, with the ranges of its calls."""
    out = []
    for other, refs in found:
        it = item(other)
        if it is not None:
            out.append((it, [convert.range_((r.start, r.end)) for r in refs]))
    return out


async def incoming_calls(
    ls: PuppetServer, params: types.CallHierarchyIncomingCallsParams
) -> list[types.CallHierarchyIncomingCall]:
    session = ls.session
    key = cast("references.RefKey", tuple(params.item.data or ()))

    def work() -> list[tuple[types.CallHierarchyItem, list[types.Range]]]:
        refresh_open_documents(session)
        found = sorted(rename.incoming(session.refs, key).items(), key=lambda kv: str(kv[0]))
        return _calls(found, lambda o: _owner_item(session, o))

    await need_complete_index(ls)
    calls = await ls.on_worker(work)
    return [types.CallHierarchyIncomingCall(from_=it, from_ranges=rs) for it, rs in calls]


async def outgoing_calls(
    ls: PuppetServer, params: types.CallHierarchyOutgoingCallsParams
) -> list[types.CallHierarchyOutgoingCall]:
    session = ls.session
    key = cast("references.Owner", tuple(params.item.data or ()))

    def work() -> list[tuple[types.CallHierarchyItem, list[types.Range]]]:
        refresh_open_documents(session)
        return _calls(sorted(rename.outgoing(session.refs, key).items()), lambda c: _item(session, c))

    await need_complete_index(ls)
    calls = await ls.on_worker(work)
    return [types.CallHierarchyOutgoingCall(to=it, from_ranges=rs) for it, rs in calls]


RENAME_FILES_OPTIONS = types.FileOperationRegistrationOptions(
    filters=[types.FileOperationFilter(pattern=types.FileOperationPattern(glob="**/*.pp"))]
)


async def did_rename_files(ls: PuppetServer, params: types.RenameFilesParams) -> None:
    session = ls.session
    for f in params.files:
        old, new = path_of_uri(f.old_uri), path_of_uri(f.new_uri)
        if old:
            session.refs.remove_file(old)
            session.index.remove_file(old)
        if new and new.endswith(".pp") and new not in session.open_paths():
            await indexing.reindex(ls, new)

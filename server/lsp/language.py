"""The editor features' handlers: each converts the request (server/lsp/convert.py), calls a pygls-free
feature function over the document's current analysis on the worker (server/analysis/navigation.py,
server/analysis/completion.py, server/analysis/features.py), and converts the plain answer back.

A document that is not Puppet code (a Puppetfile, a module's metadata.json: server/analysis/filekinds.py)
is answered by its kind's analysis instead (symbols, hover, definition, completion; nothing else), in the
same plain answers and through the same conversions."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Generator
from typing import Any, TypeVar

from lsprotocol import types
from pygls.exceptions import JsonRpcContentModified

from puppet_xpp.server.analysis import answers, features, navigation
from puppet_xpp.server.analysis import completion as completions
from puppet_xpp.server.analysis.document import Analysis, path_of_uri
from puppet_xpp.server.lsp import convert, indexing, lint, sync, text
from puppet_xpp.server.lsp.language_server import PuppetServer
from puppet_xpp.server.lsp.session import DocState

T = TypeVar("T")


def other_kind(ls: PuppetServer, uri: str) -> DocState | None:
    """The open document ``uri`` when it is not Puppet code (its kind's analysis answers), else None."""
    st = ls.session.documents.get(uri)
    return st if st is not None and not st.is_puppet else None


async def from_index(ls: PuppetServer, uri: str, answer: Callable[[Analysis], T | None]) -> T | None:
    """``answer`` over the document's analysis, where the answer may depend on the workspace index (a
    function or type of the module path): given at once when there is one; an empty answer while the
    index is incomplete is not given as if it were complete, but asked again once the index is (waiting
    at most indexing.WAIT_COMPLETE), or refused with ContentModified saying why (the client asks again
    later; a silent null would say "nothing there")."""
    found = await sync.with_analysis(ls, uri, answer)
    if found or ls.session.index_state.complete():
        return found
    why = await indexing.wait_complete(ls)
    if why is not None:
        raise JsonRpcContentModified(why)
    return await sync.with_analysis(ls, uri, answer)


async def document_symbol(
    ls: PuppetServer, params: types.DocumentSymbolParams
) -> list[types.DocumentSymbol] | None:
    st = other_kind(ls, params.text_document.uri)
    if st is not None:
        return await sync.with_file(
            ls, st, lambda analysis, file: [convert.document_symbol(s) for s in analysis.symbols(file)]
        )
    return await sync.with_analysis(
        ls,
        params.text_document.uri,
        lambda an: [convert.document_symbol(s) for s in navigation.document_symbols(an)],
    )


async def folding_range(
    ls: PuppetServer, params: types.FoldingRangeParams
) -> list[types.FoldingRange] | None:
    return await sync.with_analysis(
        ls,
        params.text_document.uri,
        lambda an: [convert.folding_range(a, b, kind) for a, b, kind in features.folding_ranges(an)],
    )


SEMANTIC_TOKENS_LEGEND = types.SemanticTokensLegend(
    token_types=features.TOKEN_TYPES, token_modifiers=features.TOKEN_MODIFIERS
)


async def semantic_tokens(
    ls: PuppetServer, params: types.SemanticTokensParams
) -> types.SemanticTokens | None:
    return await sync.with_analysis(
        ls, params.text_document.uri, lambda an: types.SemanticTokens(data=features.semantic_tokens(an))
    )


async def hover(ls: PuppetServer, params: types.HoverParams) -> types.Hover | None:
    uri = params.text_document.uri
    line, character = convert.pos_of(params.position)
    st = other_kind(ls, uri)
    if st is not None:
        return await sync.with_file(
            ls, st, lambda analysis, file: convert.hover(analysis.hover(file, line, character))
        )
    known = ls.session.knowledge(uri)
    return await from_index(ls, uri, lambda an: convert.hover(navigation.hover(an, known, line, character)))


async def definition(ls: PuppetServer, params: types.DefinitionParams) -> list[types.Location] | None:
    uri = params.text_document.uri
    line, character = convert.pos_of(params.position)
    st = other_kind(ls, uri)
    if st is not None:
        return await sync.with_file(
            ls, st, lambda analysis, file: convert.locations(analysis.definition(file, line, character), uri)
        )
    known = ls.session.knowledge(uri)
    path = path_of_uri(uri)
    return await from_index(
        ls, uri, lambda an: convert.locations(navigation.definition(an, known, path, line, character), uri)
    )


async def workspace_symbol(
    ls: PuppetServer, params: types.WorkspaceSymbolParams
) -> list[types.WorkspaceSymbol]:
    """A search of the whole workspace: never a partial list while the index is incomplete (waiting at
    most indexing.WAIT_COMPLETE, else ContentModified saying why)."""
    why = await indexing.wait_complete(ls)
    if why is not None:
        raise JsonRpcContentModified(why)
    return [convert.workspace_symbol(s) for s in ls.session.index.search(params.query)]


COMPLETION_OPTIONS = types.CompletionOptions(trigger_characters=["$", ":", ">"], resolve_provider=True)


# one step of a generator handler: pygls runs ``fn(*args)`` (a coroutine function here) and resumes the
# generator with its result
Step = tuple[Callable[..., Any], tuple[Any, ...], None]


def completion(
    ls: PuppetServer, params: types.CompletionParams
) -> Generator[Step, Any, convert.Prebuilt | None]:
    """The completion list, in its JSON form (convert.Prebuilt).  A Puppet document's is answered from the
    client's current text (:func:`text_completion`) unless its context reads the tree.

    A generator handler: pygls runs it at once, in the loop callback that read the request, and sends
    what it returns at once.  A coroutine handler would run a step later, behind whatever else the
    event loop has ready (a publish of diagnostics: several ms each on a 300 KB manifest), and its
    answer be sent a step later again.  Only when the analysis must answer does it wait
    (:func:`completion_from_analysis`, through :func:`awaited`)."""
    uri = params.text_document.uri
    line, character = convert.pos_of(params.position)
    wire = convert.completion_wire(ls.session.client_caps)
    doc = ls.session.documents.get(uri)
    if doc is not None and doc.is_puppet and doc.refused is None:
        quick = text_completion(doc, ls.session.knowledge(uri), line, character)
        if quick is not None:
            return convert.completion_list(quick, wire)
    answer: convert.Prebuilt | None = yield from awaited(
        ls, completion_from_analysis, ls, uri, line, character, wire
    )
    return answer


def awaited(ls: PuppetServer, fn: Callable[..., Awaitable[T]], *args: Any) -> Generator[Step, Any, T]:
    """``await fn(*args)`` inside a generator handler.  pygls keeps the coroutine's task under an id of
    its own making that nothing removes (with its result: a whole completion list); it is removed here
    once done, as server/lsp/guard.py does for notifications."""
    futures = ls.protocol._request_futures
    before = set(futures)
    try:
        result: T = yield (fn, args, None)
    finally:
        for key in set(futures) - before:
            made = futures.get(key)
            if made is not None and made.done():
                futures.pop(key, None)
    return result


async def completion_from_analysis(
    ls: PuppetServer, uri: str, line: int, character: int, wire: convert.CompletionWire
) -> convert.Prebuilt | None:
    """The completion answered from the document's analysis of its current text (on the worker), or from
    its kind's analysis for a document that is not Puppet code."""
    st = other_kind(ls, uri)
    if st is not None:
        return await sync.with_file(
            ls,
            st,
            lambda analysis, file: convert.completion_list(
                answers.Completions(analysis.completion(file, line, character)), wire
            ),
        )
    known = ls.session.knowledge(uri)
    doc = ls.session.documents.get(uri)

    def whole(an: Analysis) -> convert.Prebuilt:
        local = navigation.local_symbols(an)
        if doc is not None:
            doc.doc.local_symbols_memo = local
        return convert.completion_list(completions.completion(an, known, line, character, local), wire)

    return await sync.with_analysis(ls, uri, whole)


def text_completion(
    st: DocState, known: answers.Knowledge, line: int, character: int
) -> answers.Completions | None:
    """The completion at (line, character) from the client's current text alone (sync.text_now), at
    once on the event loop, when its context reads no tree (completions.needs_tree): it never waits
    for the analysis of the latest keystrokes (issue 31 item 3: in a 300 KB file that analysis takes
    as long as a full parse when the keystroke breaks a body).  What it reads of the text is a window
    around the cursor (completions.window_analysis: no work in proportion to the file's size).  The
    document's own definitions are those of the last completion answered from an analysis.  None: asked
    of the analysis instead (a context that reads the tree, no definitions known yet, a text the
    worker's line rule applies to)."""
    doc = st.doc
    if not st.is_puppet:
        return None
    local = doc.local_symbols_memo
    if local is None:
        return None
    data = sync.text_now(st)
    if data is None or text.binary_reason(data) is not None:
        return None
    an, first = completions.window_analysis(
        data, line, st.version, doc.encoding, doc.config.epp, doc.config.tasks
    )
    context = completions.context_at(an, line - first, character)
    if completions.needs_tree(an, line - first, character, context):
        return None
    found = completions.completion(an, known, line - first, character, local, context)
    return completions.shifted(found, first)


def completion_resolve(ls: PuppetServer, item: types.CompletionItem) -> types.CompletionItem:
    try:
        text = completions.resolve(ls.session.knowledge(""), item.data)
    except Exception:  # never fail a resolve: the item as it was
        return item
    if text:
        item.documentation = convert.markdown(text)
    return item


SIGNATURE_HELP_OPTIONS = types.SignatureHelpOptions(trigger_characters=["(", ","])


async def signature_help(ls: PuppetServer, params: types.SignatureHelpParams) -> types.SignatureHelp | None:
    uri = params.text_document.uri
    line, character = convert.pos_of(params.position)
    known = ls.session.knowledge(uri)
    return await from_index(
        ls, uri, lambda an: convert.signature_help(navigation.signature_help(an, known, line, character))
    )


# the command that runs facter once for the facts' hover (server/analysis/facts.py); never run unasked
RUN_FACTER = "puppet-xpp.runFacter"


async def run_facter(ls: PuppetServer) -> dict[str, object]:
    """``workspace/executeCommand`` puppet-xpp.runFacter: run facter once (on its own thread: it can
    take seconds) and keep its facts for the hover of facts; the answer says how many or why none."""
    got = await asyncio.to_thread(ls.session.facts.run_facter)
    if got.error:
        ls.log(f"puppet-xpp: {got.error}", types.MessageType.Warning)
        return {"facts": 0, "source": got.source, "error": got.error}
    ls.log(f"puppet-xpp: {len(got.values)} facts from {got.source}")
    return {"facts": len(got.values), "source": got.source}


# -- formatting: offered for the manifests only

# the documents the server formats (server/lsp/lint.py's formatting: Puppet manifests; an EPP template, a
# Puppetfile, Hiera's YAML and JSON and a module's metadata.json are answered with no edit)
FORMATTED_DOCUMENTS: list[types.TextDocumentFilter] = [types.TextDocumentFilterLanguage(language="puppet")]

FORMATTING_REGISTRATIONS: dict[str, Any] = {
    types.TEXT_DOCUMENT_FORMATTING: types.DocumentFormattingRegistrationOptions(
        document_selector=FORMATTED_DOCUMENTS
    ),
    types.TEXT_DOCUMENT_RANGE_FORMATTING: types.DocumentRangeFormattingRegistrationOptions(
        document_selector=FORMATTED_DOCUMENTS
    ),
    types.TEXT_DOCUMENT_ON_TYPE_FORMATTING: types.DocumentOnTypeFormattingRegistrationOptions(
        first_trigger_character=lint.ON_TYPE_FORMATTING.first_trigger_character,
        document_selector=FORMATTED_DOCUMENTS,
        more_trigger_character=lint.ON_TYPE_FORMATTING.more_trigger_character,
    ),
}


def registered_formatting(caps: types.ClientCapabilities | None) -> list[str]:
    """The formatting methods (document, range, on-type) the client takes by dynamic registration.

    Why: a capability in the ``initialize`` answer applies to every document the client sends the server,
    and VS Code's client sends Hiera's YAML and JSON and metadata.json too (editors/vscode/src/config.ts
    DOCUMENT_SELECTOR: the deep checks read their unsaved text), so it would register the server as a YAML
    and JSON formatter -- the "multiple formatters" question, or our empty answer instead of the YAML
    extension's edits, and the on-type formatting of every new line of YAML.  Registered with
    :data:`FORMATTED_DOCUMENTS` as its selector instead, formatting is offered for the manifests only; a
    client that cannot register it dynamically keeps the static capability (it decides itself which
    documents it sends)."""
    document = caps.text_document if caps is not None else None
    if document is None:
        return []
    supports = {
        types.TEXT_DOCUMENT_FORMATTING: document.formatting,
        types.TEXT_DOCUMENT_RANGE_FORMATTING: document.range_formatting,
        types.TEXT_DOCUMENT_ON_TYPE_FORMATTING: document.on_type_formatting,
    }
    return [method for method, cap in supports.items() if cap is not None and cap.dynamic_registration]


def withhold_formatting_capabilities(ls: PuppetServer, caps: types.ClientCapabilities | None) -> None:
    """``initialize`` (before pygls builds the answer's capabilities): the formatting methods the client
    registers dynamically are left out of the static capabilities (an option of None: pygls' rule for
    "not offered"); the handlers stay, and :func:`register_formatting` offers them in ``initialized``."""
    for method in registered_formatting(caps):
        ls.protocol.fm.feature_options[method] = None


async def register_formatting(ls: PuppetServer) -> None:
    """``initialized``: register the formatting methods withheld from the capabilities, for the documents the
    server formats (:data:`FORMATTED_DOCUMENTS`)."""
    methods = registered_formatting(ls.session.client_caps)
    if not methods:
        return
    registrations = [
        types.Registration(
            id=f"puppet-xpp-{method}", method=method, register_options=FORMATTING_REGISTRATIONS[method]
        )
        for method in methods
    ]
    try:
        await asyncio.wait_for(
            ls.client_register_capability_async(types.RegistrationParams(registrations=registrations)), 5
        )
    except Exception as e:  # a client that refuses: no formatting, said once (nothing else is lost)
        ls.log(f"puppet-xpp: formatting not registered with the client: {e!r}", types.MessageType.Warning)

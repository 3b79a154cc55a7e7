"""The Puppet language server (pygls 2): every handler registered in one place, and its command line.

    puppet-xpp [--stdio]            serve on stdin/stdout (default)
    puppet-xpp --tcp HOST:PORT      serve on a TCP socket

Where things are (server/lsp/): ``language_server`` (the server object: transport, worker thread, the
session), ``session`` (all state), ``documents`` (lifecycle, documents, the diagnostics loop),
``sync`` (the worker's side of a document: edits applied, analysis), ``language`` (symbols, folding,
semantic tokens, hover, definition, completion, signature help), ``references`` (references,
highlight, rename, call hierarchy), ``lint`` (lint diagnostics, formatting, code actions) over
``lint_carry`` (the last lint result carried across edits), ``indexing`` (the workspace index),
``custom`` (puppet-vscode's own messages: docs/messages.md), ``publish`` (the one publisher),
``convert`` (lsprotocol <-> plain data), ``guard`` and ``text`` (defences against broken clients).
The handlers are thin: the work is in server/analysis, which imports no pygls.
"""

from __future__ import annotations

import gc
import logging
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, BinaryIO

from puppet_xpp.grammar.gcpause import paused

# Importing the handlers' modules makes a few hundred thousand objects (classes, functions, tables) kept
# for the process, with no garbage among them: the collections their allocation would start find
# nothing, and once imported they are frozen (as what survives an analysis is: GcPacer in
# server/analysis/document.py, whose full collections still look at everything), so no collection
# before then traverses them again (~25 ms each).
with paused():
    from lsprotocol import types

    from puppet_xpp.server.lsp import custom, documents, indexing, language, lint, references
    from puppet_xpp.server.lsp.language_server import PuppetServer
gc.freeze()

if TYPE_CHECKING:
    from puppet_xpp.server.lsp.startup import Handoff

log = logging.getLogger("puppet-xpp.lsp")


async def code_action(ls: PuppetServer, params: types.CodeActionParams) -> list[types.CodeAction]:
    """``textDocument/codeAction``: server/lsp/deep.py's (the deep findings' quick fixes, then the
    validator's and lint's).  The deep checks' modules (~20 ms of imports) are imported by the first
    publish or code action, not by the server's start, whose first answers do not need them."""
    from puppet_xpp.server.lsp import deep

    return await deep.code_action(ls, params)


# (method, options, handler): the whole of what the server answers
FEATURES: tuple[tuple[str, Any, Callable[..., Any]], ...] = (
    # lifecycle and documents
    (types.INITIALIZE, None, documents.initialize),
    (types.INITIALIZED, None, documents.initialized),
    (types.WORKSPACE_DID_CHANGE_CONFIGURATION, None, documents.did_change_configuration),
    (types.TEXT_DOCUMENT_DID_OPEN, None, documents.did_open),
    (types.TEXT_DOCUMENT_DID_CHANGE, None, documents.did_change),
    (types.TEXT_DOCUMENT_DID_SAVE, documents.SAVE_OPTIONS, documents.did_save),
    (types.TEXT_DOCUMENT_DID_CLOSE, None, documents.did_close),
    # language features
    (types.TEXT_DOCUMENT_DOCUMENT_SYMBOL, None, language.document_symbol),
    (types.TEXT_DOCUMENT_FOLDING_RANGE, None, language.folding_range),
    (types.TEXT_DOCUMENT_SEMANTIC_TOKENS_FULL, language.SEMANTIC_TOKENS_LEGEND, language.semantic_tokens),
    (types.TEXT_DOCUMENT_HOVER, None, language.hover),
    (types.TEXT_DOCUMENT_DEFINITION, None, language.definition),
    (types.WORKSPACE_SYMBOL, None, language.workspace_symbol),
    (types.TEXT_DOCUMENT_COMPLETION, language.COMPLETION_OPTIONS, language.completion),
    (types.COMPLETION_ITEM_RESOLVE, None, language.completion_resolve),
    (types.TEXT_DOCUMENT_SIGNATURE_HELP, language.SIGNATURE_HELP_OPTIONS, language.signature_help),
    # the workspace
    (types.WORKSPACE_DID_CHANGE_WATCHED_FILES, None, indexing.did_change_watched_files),
    (types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS, None, indexing.did_change_workspace_folders),
    # references, rename, call hierarchy
    (types.TEXT_DOCUMENT_REFERENCES, None, references.find_references),
    (types.TEXT_DOCUMENT_DOCUMENT_HIGHLIGHT, None, references.highlight),
    (types.TEXT_DOCUMENT_PREPARE_RENAME, None, references.prepare_rename),
    (types.TEXT_DOCUMENT_RENAME, references.RENAME_OPTIONS, references.rename_symbol),
    (types.TEXT_DOCUMENT_PREPARE_CALL_HIERARCHY, None, references.prepare_call_hierarchy),
    (types.CALL_HIERARCHY_INCOMING_CALLS, None, references.incoming_calls),
    (types.CALL_HIERARCHY_OUTGOING_CALLS, None, references.outgoing_calls),
    (types.WORKSPACE_DID_RENAME_FILES, references.RENAME_FILES_OPTIONS, references.did_rename_files),
    # lint: formatting and code actions
    (types.TEXT_DOCUMENT_FORMATTING, None, lint.formatting),
    (types.TEXT_DOCUMENT_RANGE_FORMATTING, None, lint.range_formatting),
    (types.TEXT_DOCUMENT_ON_TYPE_FORMATTING, lint.ON_TYPE_FORMATTING, lint.on_type_formatting),
    # code actions: the deep checks' quick fixes (server/lsp/deep.py), then the validator's and lint's
    (types.TEXT_DOCUMENT_CODE_ACTION, lint.CODE_ACTIONS, code_action),
    # puppet-vscode's own messages, with puppet-editor-services' names and shapes (docs/messages.md)
    (custom.GET_VERSION, None, custom.get_version),
    (custom.GET_FACTS, None, custom.get_facts),
    (custom.GET_RESOURCE, None, custom.get_resource),
    (custom.COMPILE_NODE_GRAPH, None, custom.compile_node_graph),
    (custom.FIX_DIAGNOSTIC_ERRORS, None, custom.fix_diagnostic_errors),
    (custom.GET_DEPENDENCIES, None, custom.get_dependencies),
)


def create_server() -> PuppetServer:
    custom.register_message_types()
    ls = PuppetServer()
    for method, options, handler in FEATURES:
        ls.feature(method, options)(handler)
    ls.command(language.RUN_FACTER)(language.run_facter)
    return ls


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    tcp = None
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "--stdio":
            pass
        elif a == "--tcp" or a.startswith("--tcp="):
            v = a.split("=", 1)[1] if "=" in a else (argv[i + 1] if i + 1 < len(argv) else "")
            if "=" not in a:
                i += 1
            host, _, port = v.rpartition(":")
            try:
                tcp = (host or "127.0.0.1", int(port))
            except ValueError:
                print(f"puppet-xpp: --tcp expects HOST:PORT, not {v!r}", file=sys.stderr)
                return 2
        elif a in ("-v", "--verbose"):
            logging.basicConfig(level=logging.DEBUG)
        else:
            print(
                f"puppet-xpp: unknown option {a!r} (language server: --stdio | --tcp HOST:PORT)",
                file=sys.stderr,
            )
            return 2
        i += 1
    return serve(tcp)


def serve(
    tcp: tuple[str, int] | None = None,
    verbose: bool = False,
    handoff: Handoff | None = None,
    stdin: BinaryIO | None = None,
    stdout: BinaryIO | None = None,
) -> int:
    """Serve on stdio (or on the TCP address ``tcp``) until the client leaves; the exit status.  After
    the start-up front (server/lsp/startup.py): ``handoff`` is what it leaves, ``stdin`` the client's
    stream with the bytes it read given again."""
    if verbose:
        logging.basicConfig(level=logging.DEBUG)
    server = create_server()
    if handoff is not None:  # (the first diagnostics the front published: not sent again)
        server.session.front_published.update(handoff.published)
        if handoff.settled is not None:  # (the start-up's code cache window closes after the first index)
            server.session.index_state.on_complete.append(handoff.settled.set)
        # (the session's once taken: the handoff, kept while serving, holds none of it)
        server.session.early_index, handoff.early_index = handoff.early_index, None
    try:
        if tcp is not None:
            server.start_tcp(*tcp)
        else:
            server.start_io(stdin, stdout, handoff)
    finally:
        server.worker.shutdown(wait=False, cancel_futures=True)
    code = getattr(server.protocol, "exit_code", None)
    return 0 if code is None else int(code)  # LSP: exit without shutdown is 1


if __name__ == "__main__":
    sys.exit(main())

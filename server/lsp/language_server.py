"""The pygls server object: the transport (server/lsp/guard.py's defences against broken clients),
the analysis worker thread, and the :class:`Session` that holds all the server's state.

Concurrency: all parsing and analysis runs on ONE worker thread, in order (:meth:`on_worker`); the
asyncio loop only queues edits and answers.
"""

from __future__ import annotations

import asyncio
import logging
import sys
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, BinaryIO, TypeVar

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from puppet_xpp import __version__
from puppet_xpp.server.lsp import guard, publish
from puppet_xpp.server.lsp.session import Session

if TYPE_CHECKING:
    from puppet_xpp.server.lsp.startup import Handoff

log = logging.getLogger("puppet-xpp.lsp")
T = TypeVar("T")


class PuppetServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__(
            "puppet-xpp",
            __version__,
            text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
            protocol_cls=guard.GuardedProtocol,
        )
        self.session = Session()
        self.worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="puppet-analysis")

    @property
    def encoding(self) -> str:
        """The negotiated position encoding ("utf-16" until the workspace exists)."""
        try:
            enc = getattr(self.workspace, "position_encoding", None)
        except Exception:  # before initialize
            enc = None
        v = getattr(enc, "value", enc) or "utf-16"
        return {"utf-8": "utf-8", "utf-32": "utf-32"}.get(str(v), "utf-16")

    async def on_worker(self, fn: Callable[..., T], *args: Any) -> T:
        return await asyncio.get_running_loop().run_in_executor(self.worker, fn, *args)

    def log(self, msg: str, typ: types.MessageType = types.MessageType.Info) -> None:
        try:
            self.window_log_message(types.LogMessageParams(type=typ, message=msg))
        except Exception:  # pragma: no cover - no client
            pass

    # -- transport (server.lsp.guard) ---------------------------------------------------------------

    def start_io(
        self, stdin: BinaryIO | None = None, stdout: BinaryIO | None = None, handoff: Handoff | None = None
    ) -> None:
        """stdio with bounded header lines and pygls' reader replaced by :func:`guard.read_messages`.
        After the start-up front (server/lsp/startup.py), ``stdin`` gives again what it read and the
        answers to the requests it answered are dropped (``handoff``)."""
        from pygls.io_ import StdinAsyncReader, StdoutWriter

        class Bounded(StdinAsyncReader):
            def readline(self) -> Any:
                return self.loop.run_in_executor(self.executor, self.stdin.readline, guard.MAX_HEADER_LINE)

        self._stop_event = threading.Event()
        reader = Bounded(stdin or sys.stdin.buffer, self.thread_pool)
        writer: Any = StdoutWriter(stdout or sys.stdout.buffer)
        if handoff is not None:
            from puppet_xpp.server.lsp.startup import AnsweredFilter

            writer = AnsweredFilter(writer, handoff)
        self.protocol.set_writer(writer)

        async def serve() -> None:
            try:
                await guard.read_messages(
                    self._stop_event, reader, self.protocol, log, self.report_server_error
                )
            finally:  # before asyncio.run and pygls' shutdown wait for their executors' threads
                guard.exit_watchdog(self.protocol)

        try:
            asyncio.run(serve())
        except BrokenPipeError:
            log.error("connection to the client lost; shutting down")
        except (KeyboardInterrupt, SystemExit):
            pass
        finally:
            self.shutdown()  # type: ignore[no-untyped-call]

    def start_tcp(self, host: str, port: int) -> None:
        import pygls.server

        pygls.server.run_async = guard.read_messages  # type: ignore[attr-defined]  # the same loop for TCP
        super().start_tcp(host, port)

    def refuse_document(self, uri: str, why: str) -> None:
        """A change to ``uri`` could not be applied (server.lsp.guard): our copy would drift from the
        client's, so the document is not analysed until it is opened again, and its diagnostics say so."""
        st = self.session.documents.get(uri)
        if st is None:
            return
        st.refused = why
        publish.out_of_sync(self, uri, why)

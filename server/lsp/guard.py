"""The language server's defences against broken clients (issue 11 item 8), kept apart from the handlers.

* **Framing.**  pygls' reader goes deaf for good after one bad header (``Content-Length: abc``, a negative
  or too short length: the next body is then read as header lines and never matches again) and reads any
  announced length into memory.  :func:`read_messages` replaces it: a ``Content-Length`` header is found
  anywhere at the end of a line (so a body glued to the next header recovers at that header), a bad value
  skips that message with a logged error (its bytes are then passed over as lines up to the next
  header), header lines are bounded, and a length over :data:`MAX_MESSAGE_BYTES`
  (``PUPPET_XPP_LSP_MAX_MESSAGE`` bytes) is refused the same way: nothing of that size is ever held.
* **Memory over weeks.**  pygls 2.1.1 stores a future in ``_request_futures`` for every notification whose
  handler is a coroutine, a thread function or one of its own generator handlers (``didChange``,
  ``didOpen``, ...), under a fresh id that nothing ever removes: ~2 KB per keystroke.
  :class:`GuardedProtocol` removes each such future when it completes.  The workaround depends on that
  private attribute, so ``pyproject.toml`` pins pygls to the version it was checked against.
* **One copy of a document**: pygls' own copy (unused) is not kept (see the did* methods below).
* **Invalid params.**  A request that lsprotocol cannot build (a position of -1 or 2**31, a string for a
  number, a missing field) is answered with InvalidParams (-32602) instead of being dropped.
* **Lifecycle.**  After ``shutdown`` every request gets ``InvalidRequest`` and notifications other than
  ``exit`` are ignored; ``exit`` without ``shutdown`` ends the process with status 1 (pygls computes that
  status, but its I/O loop swallows the ``SystemExit``; :attr:`GuardedProtocol.exit_code` keeps it); shutdown cancels the requests still pending without failing on them.
"""

from __future__ import annotations

import json
import logging
import os
import re
import threading
from collections.abc import Callable, Generator
from typing import Any

from lsprotocol import types
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.language_server import lsp_method

log = logging.getLogger("puppet-xpp.lsp")

MAX_MESSAGE_BYTES = int(os.environ.get("PUPPET_XPP_LSP_MAX_MESSAGE", str(64 * 1024 * 1024)))
MAX_HEADER_LINE = 1024 * 1024
_LENGTH = re.compile(rb"content-length[ \t]*:[ \t]*([^\r\n]*?)[ \t]*\r?\n?\Z", re.IGNORECASE)
_INVALID_REQUEST = -32600


def _forget(futures: dict[Any, Any], key: Any) -> Callable[[Any], None]:
    """A done-callback removing ``key`` from ``futures`` (bound to this key, not to the loop variable)."""

    def done(_f: Any) -> None:
        futures.pop(key, None)

    return done


class GuardedProtocol(LanguageServerProtocol):
    exit_code: int | None = None  # set by the exit notification

    def _handle_notification(self, method_name: str, params: Any) -> None:
        if method_name == types.EXIT:
            self.exit_code = 0 if getattr(self, "_shutdown", False) else 1
        futures = self._request_futures
        before = set(futures)
        super()._handle_notification(method_name, params)
        for key in set(futures) - before:
            fut = futures.get(key)
            if fut is not None:
                fut.add_done_callback(_forget(futures, key))

    @lsp_method(types.SHUTDOWN)
    def lsp_shutdown(self, *args: Any) -> Generator[Any, Any, None]:
        """pygls's shutdown, over a snapshot of the pending futures: cancelling a request the server sent
        (``workspace/configuration`` that the client never answered) runs the done-callbacks that remove
        it from ``_request_futures`` at once, and pygls iterated over that dict itself, so shutdown
        answered an internal error and ``exit`` then ended with status 1."""
        if (handler := self.fm.features.get(types.SHUTDOWN)) is not None:
            yield handler, args, None
        current = self.msg_id
        for msg_id, future in list(self._request_futures.items()):
            if msg_id != current and not future.done():
                future.cancel()
        self._shutdown = True
        return None

    # pygls keeps a second copy of every open document (unused here: the server's own Document is the
    # copy), updated line by line on every change (O(size) per keystroke) and raising on input the server
    # repairs (lone surrogates) before our handler runs.  These replace its bookkeeping: they only call
    # the server's handlers.
    @lsp_method(types.TEXT_DOCUMENT_DID_OPEN)
    def lsp_text_document__did_open(self, params: Any) -> Generator[Any, Any, None]:
        if (handler := self.fm.features.get(types.TEXT_DOCUMENT_DID_OPEN)) is not None:
            yield handler, (params,), None

    @lsp_method(types.TEXT_DOCUMENT_DID_CHANGE)
    def lsp_text_document__did_change(self, params: Any) -> Generator[Any, Any, None]:
        if (handler := self.fm.features.get(types.TEXT_DOCUMENT_DID_CHANGE)) is not None:
            yield handler, (params,), None

    @lsp_method(types.TEXT_DOCUMENT_DID_CLOSE)
    def lsp_text_document__did_close(self, params: Any) -> Generator[Any, Any, None]:
        if (handler := self.fm.features.get(types.TEXT_DOCUMENT_DID_CLOSE)) is not None:
            yield handler, (params,), None

    def handle_message(self, message: Any) -> None:
        method = getattr(message, "method", None)
        if getattr(self, "_shutdown", False) and method != types.EXIT:
            if method is not None and getattr(message, "id", None) is not None:  # a request: answer it
                from pygls.exceptions import JsonRpcException

                err = JsonRpcException(code=_INVALID_REQUEST, message=f"{method}: the server is shut down")
                self._send_response(message.id, None, err.to_response_error())
            else:
                log.warning("ignoring %s after shutdown", method)
            return
        super().handle_message(message)


async def read_messages(
    stop_event: Any,
    reader: Any,
    protocol: Any,
    logger: logging.Logger | None = None,
    error_handler: Any = None,
) -> None:
    """The message loop (same signature as ``pygls.io_.run_async``), with the framing rules above."""
    logger = logger or log
    length: int | None = None
    while not stop_event.is_set():
        try:
            line = await reader.readline()
        except ValueError:  # asyncio.StreamReader: a line over its limit
            await reader.read(MAX_HEADER_LINE)
            continue
        if not line:
            break
        if not line.strip():
            if length is None:
                continue  # blank line without a valid length: nothing to read
            n, length = length, None
            try:
                body = await reader.readexactly(n)
            except Exception:  # asyncio.IncompleteReadError: the client went away
                break
            if len(body) < n:
                break
            _dispatch(body, protocol, logger, error_handler)
            continue
        m = _LENGTH.search(line[-200:])
        if m is not None:
            value = m.group(1)
            if value.isdigit() and 0 < int(value) <= MAX_MESSAGE_BYTES:
                length = int(value)
            elif value.isdigit() and int(value) > MAX_MESSAGE_BYTES:
                length = None  # not read: its bytes are skipped as lines up to the next header
                logger.error(
                    "message of %s bytes exceeds the limit of %d: skipped", value[:20], MAX_MESSAGE_BYTES
                )
            else:
                length = None
                logger.error("bad Content-Length %r: message skipped", value[:40])


def _dispatch(body: bytes, protocol: Any, logger: logging.Logger, error_handler: Any) -> None:
    try:
        message = json.loads(body, object_hook=protocol.structure_message)
    except Exception as exc:
        message = _repaired(body, protocol)
        if message is None:
            why = _reason(exc)
            if _invalid_params(body, protocol, why):
                logger.error("request with invalid params answered with an error: %s", why)
                return
            logger.error("unreadable message dropped: %s", why)
            _out_of_sync(body, protocol, str(exc))
            return
    try:
        protocol.handle_message(message)
    except Exception as exc:
        logger.exception("Unable to handle message")
        if error_handler:
            from pygls.exceptions import JsonRpcException

            error_handler(exc, JsonRpcException)


_UINT = 2**31 - 1


def _clamp(v: Any) -> Any:
    """Positions in a didChange outside LSP's uinteger range are clamped (the client's meaning: 'far')."""
    if isinstance(v, dict):
        out = {}
        for k, x in v.items():
            if k in ("line", "character") and isinstance(x, (int, float)) and not isinstance(x, bool):
                out[k] = min(max(int(x), 0), _UINT)
            else:
                out[k] = _clamp(x)
        return out
    if isinstance(v, list):
        return [_clamp(x) for x in v]
    return v


def _repaired(body: bytes, protocol: Any) -> Any:
    """A didChange rejected for out-of-range positions, with its positions clamped (else None)."""
    try:
        raw = json.loads(body)
    except Exception:
        return None
    if not isinstance(raw, dict) or raw.get("method") != types.TEXT_DOCUMENT_DID_CHANGE:
        return None
    try:
        return json.loads(json.dumps(_clamp(raw)), object_hook=protocol.structure_message)
    except Exception:
        return None


def _reason(exc: BaseException) -> str:
    """The first line of the innermost error behind ``exc`` (pygls wraps lsprotocol's validation errors, which
    are exception groups): e.g. "Position.line should be in range [0:2147483647], but was -1."."""
    seen: set[int] = set()
    e: BaseException | None = exc
    while e is not None and id(e) not in seen:
        seen.add(id(e))
        inner = getattr(e, "exceptions", None)
        if inner:
            e = inner[0]
        elif e.__cause__ is not None:
            e = e.__cause__
        else:
            break
    if isinstance(e, KeyError) and e.args:
        return f"missing field {e.args[0]}"
    text = str(e if e is not None else exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


class _OneLine(logging.Filter):
    """pygls logs a full traceback for every message it cannot build (several KB: a client sending bad
    positions could fill the log); :func:`_dispatch` logs one line with the reason instead."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith("Unable to deserialize message")


logging.getLogger("pygls.protocol.json_rpc").addFilter(_OneLine())


def _invalid_params(body: bytes, protocol: Any, why: str) -> bool:
    """A request whose params do not have the types of its method (a position of -1 or 2**31, a string
    where a number belongs, a missing field: lsprotocol refuses to build it) is answered with InvalidParams,
    as a conforming server does, instead of being dropped (its client would wait for ever).  True when it
    was a request and has been answered."""
    try:
        raw = json.loads(body)
    except Exception:
        return False
    if not isinstance(raw, dict) or not isinstance(raw.get("method"), str):
        return False
    msg_id = raw.get("id")
    if isinstance(msg_id, bool) or not isinstance(msg_id, (int, str)):
        return False  # a notification (nothing to answer), or an id no response could carry
    from pygls.exceptions import JsonRpcInvalidParams

    err = JsonRpcInvalidParams(message=f"{raw['method']}: invalid params: {why}")
    protocol._send_response(msg_id, None, err.to_response_error())
    return True


def _out_of_sync(body: bytes, protocol: Any, why: str) -> None:
    """A change we could not apply: our copy would differ from the client's, so the document is refused
    (its diagnostics say so) until the client opens it again."""
    try:
        raw = json.loads(body)
        uri = raw["params"]["textDocument"]["uri"]
        method = raw.get("method")
    except Exception:
        return
    if method != types.TEXT_DOCUMENT_DID_CHANGE:
        return
    refuse = getattr(protocol._server, "refuse_document", None)
    if refuse is not None:
        refuse(uri, why)


EXIT_GRACE = 5.0  # seconds the work in flight gets once the client's stream has ended


def exit_watchdog(protocol: Any) -> None:
    """The client's stdio stream has ended, so nothing more can reach it. Work in flight (an .xpp being
    written on save) gets EXIT_GRACE seconds to finish while the server shuts down; after that the
    process ends anyway. Why: work that never returns (a bug; seen once, an orphaned server spinning
    after its Neovim had quit, its main thread waiting for a thread at shutdown, cause not found) must
    not keep a server alive without a client."""

    def leave() -> None:
        log.error("work still running %.0f s after the client's stream ended: exiting", EXIT_GRACE)
        logging.shutdown()
        code = getattr(protocol, "exit_code", None)
        os._exit(0 if code is None else code)

    timer = threading.Timer(EXIT_GRACE, leave)
    timer.daemon = True
    timer.start()

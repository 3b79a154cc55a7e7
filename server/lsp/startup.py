"""Start-up of the language server on stdio: a front that answers the first messages while the server's
heavy part (lsprotocol's ~1,000 classes, pygls, the handlers: ~0.7 s of CPU) is imported on a thread.

Why: an editor waits for ``initialize``'s answer before it sends anything else, and shows nothing of a
file until its first diagnostics.  Importing ``lsprotocol.types`` alone costs ~0.4 s, so the server
that pygls runs cannot answer in 300 ms; this front, which imports neither, does:

* ``initialize`` is answered with the result pygls gave the last time a client with the same capabilities
  started this same build of the server (kept in the user's cache directory, :class:`AnswerCache`: the
  result depends only on the code -- the handlers registered, their options -- and on the client's
  capabilities, e.g. the position encoding).  Nothing known (the first start after an install, another
  editor): the front does not answer and pygls does, once it is loaded, as before -- and its answer is
  kept for the next start;
* ``textDocument/didOpen`` of a Puppet manifest or template, after that early answer: the document's
  first diagnostics -- what the server's first publish of that version holds: its parse and validation
  diagnostics (:func:`first_diagnostics`, by the server's own pieces: server/analysis/document.py's
  ``Document`` and ``to_lsp_diagnostics`` over grammar/check.py's parser and validator, at the level and
  ``strict`` of the settings in ``initializationOptions``) -- are published as soon as the front has
  read every message the client sent so far, unless a later one changed or closed the document (the
  server's rule: never a publish of a version already replaced).  A document the server would treat
  otherwise (not Puppet, binary content, lone CRs, more diagnostics than one publish shows) is left to
  the server;
* ``shutdown`` is answered and ``exit`` ends the process (0 after ``shutdown``, else 1, as the server);
* everything else waits.

Then the handoff (:func:`serve_stdio`): every byte read from the client is given again to the server's
reader (server/lsp/guard.py's framing) before the rest of the stream, so pygls handles every message
exactly as if it had read it itself -- pygls' converters stay the one place where messages are built
once the server runs; its answers to the requests the front already answered are dropped
(:class:`Handoff`), the ``initialize`` one after being compared with what the front sent (kept for the
next start when they differ).  What the front published is handed over too (``Handoff.published``): the
server's one publisher (server/lsp/publish.py) does not send its own first publish of such a document
again when it holds exactly that, so lint's and the deep checks' publishes follow the front's in the
order and shape they follow the server's without the front (the client sees the same publishes, the
first one earlier).

One interpreter lock: while the front analyses a document, the loader waits (:class:`FrontWork`) at the
next of its steps (:data:`LOAD_STEPS`: the modules the front's analysis needs come first, then
lsprotocol, pygls and the server's handlers), so the first diagnostics do not share the processor
with the server's import.

The front reads only well-formed frames (``Content-Length`` headers); anything else stops its reading
of messages, and the server, whose reader handles broken clients, gets it all.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import select
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, BinaryIO, cast

# (the start-up cache's directory and files: one home, the command line's code cache uses it too)
from puppet_xpp.server.startup_cache import cache_dir, read_cached, write_cached

if TYPE_CHECKING:
    from puppet_xpp.server.analysis.index_cache import Prepared

__all__ = ["AnswerCache", "Front", "Handoff", "Replayed", "fingerprint", "serve_stdio"]

log = logging.getLogger("puppet-xpp.lsp")

FORMAT = "puppet-xpp-startup"
SCHEMA = 1
CACHE_NAME = "initialize.json"
# initialize answers kept (one per set of client capabilities: editors, their versions)
KEEP_ANSWERS = 16
# the most the front reads before the handoff: the rest stays in the pipe for the server's reader
MAX_FRONT_BYTES = 16 * 1024 * 1024
MAX_CACHE_BYTES = 4 * 1024 * 1024

SERVER_MODULE = "puppet_xpp.server.lsp.server"
# what the front's diagnostics need (no lsprotocol, no pygls), imported first by the loader; then the
# server in steps, between which the loader waits while the front analyses a document
FRONT_MODULES = (
    "puppet_xpp.server.analysis.document",
    "puppet_xpp.server.analysis.workspace",
    "puppet_xpp.server.analysis.filekinds",
    "puppet_xpp.grammar.incremental",
    "puppet_xpp.server.lsp.text",
)
LOAD_STEPS = ("lsprotocol.types", "pygls.lsp.server", SERVER_MODULE)
# imported once the server's first indexing is over, in the code cache's window: what the first publish
# and code action need, not the first answers (the deep checks' modules, ~20 ms outside the window)
LATE_STEPS = ("puppet_xpp.server.lsp.deep",)
# the most the loader waits for the front in all (s): never a dead lock, at worst a slower start
FRONT_WAIT = 1.0
# the longest the code cache's window stays open after the server took over (s): its first messages'
# converters are compiled through it (load_server)
SETTLE = 10.0
DID_OPEN = "textDocument/didOpen"
Json = dict[str, Any]


# ----------------------------------------------------------------------------------------------- the cache


def _package_files(directory: str, recursive: bool = True) -> list[str]:
    out: list[str] = []
    for base, dirs, files in os.walk(directory):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__") if recursive else []
        out.extend(os.path.join(base, f) for f in sorted(files) if f.endswith(".py"))
    return out


def fingerprint() -> str:
    """This build of the server, as far as ``initialize``'s answer goes: Python's version, puppet-xpp's,
    and the size and modification time of every module of the language server and its analysis, and
    of pygls, lsprotocol, cattrs and attrs (which build and encode the answer); the analysis's
    subpackages (the deep checks) are left out: nothing of theirs is in the answer.  A stat of each file,
    no import: a few milliseconds."""
    import importlib.util

    from puppet_xpp import __version__

    here = os.path.dirname(os.path.abspath(__file__))
    files = [
        *_package_files(here, False),
        *_package_files(os.path.join(os.path.dirname(here), "analysis"), False),
    ]
    dirs = []
    for name in ("pygls", "lsprotocol", "cattrs", "attrs", "attr"):
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            spec = None
        locations = list(spec.submodule_search_locations or []) if spec is not None else []
        dirs.extend(locations or [f"?{name}"])
    parts = [f"python={sys.version}", f"puppet-xpp={__version__}"]
    for f in [*files, *(f for d in dirs for f in _package_files(d))]:
        try:
            st = os.stat(f)
            parts.append(f"{f}:{st.st_size}:{st.st_mtime_ns}")
        except OSError:
            parts.append(f"{f}:?")
    return hashlib.sha256("\n".join(parts).encode("utf-8", "surrogateescape")).hexdigest()


def capabilities_key(capabilities: Any) -> str:
    """The key of a client's capabilities (their canonical JSON)."""
    text = json.dumps(capabilities, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(text.encode()).hexdigest()


class AnswerCache:
    """The ``initialize`` results pygls gave, by client capabilities, for one build (:func:`fingerprint`).
    One small JSON file in the cache directory, read and replaced relative to the directory
    (:func:`puppet_xpp.open_cache_dir`; temporary file + rename), so two servers starting at once leave
    one whole file; anything doubtful in it (another build's, damaged) is no answer."""

    def __init__(self, directory: str | None, build: str) -> None:
        self.directory = directory
        self.build = build
        self.answers: dict[str, Json] = {}

    @classmethod
    def open(cls, directory: str | None = None) -> AnswerCache:
        d = directory if directory is not None else cache_dir()
        cache = cls(d, fingerprint() if d is not None else "")
        cache.load()
        return cache

    def load(self) -> None:
        data = read_cached(self.directory, CACHE_NAME, MAX_CACHE_BYTES)
        try:
            doc = json.loads(data) if data is not None else None
        except ValueError:
            return
        if (
            type(doc) is dict
            and doc.get("format") == FORMAT
            and doc.get("schema") == SCHEMA
            and doc.get("build") == self.build
            and type(doc.get("answers")) is dict
        ):
            self.answers = {k: v for k, v in doc["answers"].items() if type(k) is str and type(v) is dict}

    def get(self, capabilities: Any) -> Json | None:
        return self.answers.get(capabilities_key(capabilities))

    def put(self, capabilities: Any, result: Json) -> bool:
        """Keep ``result`` for ``capabilities`` (the last :data:`KEEP_ANSWERS` sets); False when not written."""
        if self.directory is None:
            return False
        key = capabilities_key(capabilities)
        self.answers.pop(key, None)
        self.answers[key] = result
        while len(self.answers) > KEEP_ANSWERS:
            del self.answers[next(iter(self.answers))]
        doc = {"format": FORMAT, "schema": SCHEMA, "build": self.build, "answers": self.answers}
        return write_cached(self.directory, CACHE_NAME, json.dumps(doc).encode())


# ----------------------------------------------------------------------------------------------- the front


def _optional(value: Any, *types: type) -> bool:
    return value is None or (type(value) in types)


def plausible_initialize(params: Any) -> bool:
    """Whether pygls will build ``initialize``'s params (the front answers only then; the capabilities
    themselves are checked by the cache: a set pygls once answered).  Anything else is left to pygls,
    which answers an error where it must."""
    if type(params) is not dict or type(params.get("capabilities")) is not dict:
        return False
    folders = params.get("workspaceFolders")
    if folders is not None and not (
        type(folders) is list
        and all(type(f) is dict and type(f.get("uri")) is str and type(f.get("name")) is str for f in folders)
    ):
        return False
    info = params.get("clientInfo")
    if info is not None and not (
        type(info) is dict and type(info.get("name")) is str and _optional(info.get("version"), str)
    ):
        return False
    return (
        _optional(params.get("processId"), int)
        and _optional(params.get("rootUri"), str)
        and _optional(params.get("rootPath"), str)
        and _optional(params.get("locale"), str)
        and _optional(params.get("workDoneToken"), int, str)
        and params.get("trace") in (None, "off", "messages", "verbose")
    )


def diagnostic_json(d: Any) -> Json:
    """One :class:`server.analysis.document.LspDiagnostic` as pygls sends the server's (lsp/convert.py's
    ``diagnostic``, fields without a value left out)."""
    out: Json = {
        "range": {
            "start": {"line": d.start[0], "character": d.start[1]},
            "end": {"line": d.end[0], "character": d.end[1]},
        },
        "severity": d.severity,
        "code": d.code,
        "source": d.source,
        "message": d.message,
    }
    if d.deprecated:
        out["tags"] = [2]  # DiagnosticTag.Deprecated
    return out


def roots_of(init: Json) -> list[str]:
    """The workspace folders of ``initialize``'s params as the server takes them."""
    from puppet_xpp.server.analysis.document import workspace_roots

    return workspace_roots((f["uri"] for f in init.get("workspaceFolders") or []), init.get("rootUri"))


def first_diagnostics(document: Any, init: Json, encoding: str) -> tuple[str, int, list[Any]] | None:
    """(uri, version, diagnostics) of a ``didOpen``'s ``textDocument`` after ``initialize`` (``init``):
    what the server's first publish of it holds -- its parse and validation diagnostics, made by the very
    code the server's analysis runs (server/lsp/sync.py ``analyze``: a Document of the text as
    documents.py's ``did_open`` makes it, with the check configuration of the settings
    ``initializationOptions`` give) -- or None when the server is to say: not a Puppet manifest or
    template, binary content, a lone CR, more diagnostics than one publish shows, a big text (the
    server analyses it on a thread of its own: here it would hold up the front's reading, and so a
    ``shutdown``, for as long)."""
    from puppet_xpp.server.analysis import filekinds
    from puppet_xpp.server.analysis.document import APART_BYTES, Document, path_of_uri, to_lsp_diagnostics
    from puppet_xpp.server.analysis.workspace import Settings, check_config_for
    from puppet_xpp.server.lsp import text

    if type(document) is not dict:
        return None
    uri, source, version = document.get("uri"), document.get("text"), document.get("version")
    language = document.get("languageId")
    if (
        type(uri) is not str
        or type(source) is not str
        or type(version) is not int
        or type(language) is not str
    ):
        return None
    if (
        filekinds.kind_of(uri, language) not in (filekinds.PUPPET, filekinds.EPP)
        or len(source) >= APART_BYTES
    ):
        return None  # (characters: at most its bytes; the bytes are checked below)
    roots = roots_of(init)
    settings = Settings.from_dict(
        init.get("initializationOptions") or {}, Settings(), roots[0] if roots else None
    )
    doc = Document(
        uri, text.clean_surrogates(source), version, check_config_for(path_of_uri(uri), settings), encoding
    )
    data = doc.data
    if len(data) >= APART_BYTES or text.binary_reason(data) is not None or text.has_lone_cr_bytes(data):
        return None
    diags = to_lsp_diagnostics(doc.analysis())
    if len(diags) > text.MAX_DIAGNOSTICS:
        return None
    return uri, version, diags


class Surveyor:
    """A child process forked when the front starts -- before any thread, so nothing it inherits is
    half-imported or locked -- that surveys the workspace once ``initialize`` names it
    (server/analysis/index_cache.py ``survey``: the walk, the index cache's check, the stat of every
    file; ~0.1 s of CPU on issue 31's workspace) on the other processor while this one imports the
    server.  It holds none of the client's pipes (its stdin, stdout and stderr are /dev/null), takes
    the roots on a pipe (none: it exits) and writes what it found to another (marshal: plain lists and
    strings), then exits; the parent reaps it."""

    def __init__(self, pid: int, ask_fd: int, answer_fd: int) -> None:
        self.pid = pid
        self.ask_fd: int | None = ask_fd
        self.answer_fd = answer_fd

    @classmethod
    def fork(cls) -> Surveyor | None:
        """The child, or None where a fork is not safe (threads running: a test's process) or failed."""
        if threading.active_count() != 1 or not hasattr(os, "fork"):
            return None
        ask_r, ask_w = os.pipe()
        answer_r, answer_w = os.pipe()
        try:
            pid = os.fork()
        except OSError:
            for fd in (ask_r, ask_w, answer_r, answer_w):
                os.close(fd)
            return None
        if pid == 0:  # pragma: no cover (the child; tests see what it sends)
            status = 1
            try:
                os.close(ask_w)
                os.close(answer_r)
                null = os.open(os.devnull, os.O_RDWR)
                for fd in (0, 1, 2):
                    os.dup2(null, fd)
                status = _survey_child(ask_r, answer_w)
            finally:
                os._exit(status)
        os.close(ask_r)
        os.close(answer_w)
        return cls(pid, ask_w, answer_r)

    def ask(self, roots: list[str]) -> None:
        """Survey ``roots`` (once; after :meth:`close`, nothing)."""
        import marshal

        fd, self.ask_fd = self.ask_fd, None
        if fd is None:
            return
        try:
            os.write(fd, marshal.dumps(roots))  # (a few hundred bytes: within the pipe's buffer)
        except OSError:
            pass
        finally:
            os.close(fd)

    def answer(self) -> Any:
        """What the child found (None: nothing, it failed); waits for it to end, and reaps it."""
        import marshal

        chunks = []
        try:
            while chunk := os.read(self.answer_fd, 1 << 20):
                chunks.append(chunk)
        except OSError:
            chunks = []
        finally:
            os.close(self.answer_fd)
            self.reap()
        try:
            return marshal.loads(b"".join(chunks)) if chunks else None
        except (EOFError, TypeError, ValueError):
            return None

    def close(self) -> None:
        """Not asked after all: the child sees the end of its pipe and exits; reaped on a thread."""
        fd, self.ask_fd = self.ask_fd, None
        if fd is not None:
            os.close(fd)
            os.close(self.answer_fd)
            threading.Thread(target=self.reap, name="puppet-survey-reap", daemon=True).start()

    def reap(self) -> None:
        try:
            os.waitpid(self.pid, 0)
        except ChildProcessError:
            pass


def _survey_child(ask_fd: int, answer_fd: int) -> int:
    """The surveyor's work (in the child): the roots asked, what index_cache.survey finds written back."""
    import marshal

    data = b""
    while chunk := os.read(ask_fd, 65536):
        data += chunk
    if not data:
        return 0
    roots = marshal.loads(data)
    from puppet_xpp.server.analysis.index_cache import survey

    out = memoryview(marshal.dumps(survey(roots)))
    while out:
        out = out[os.write(answer_fd, out) :]
    return 0


def start_early_index(
    init: Json, work: FrontWork | None = None, surveyor: Surveyor | None = None
) -> Future[Prepared | None]:
    """Read the workspace's files and index cache (server/analysis/index_cache.py ``prepare``, for the
    index roots ``initialize``'s params give: workspace.index_roots) on a thread of its own while the
    server is loaded -- the file system's part by ``surveyor``, in its own process, when there is one --
    so that on a second start the indexing at ``initialized`` files the cached entries at once.  The
    thread waits while the front analyses a document (its first diagnostics come first).  The server
    takes the result only when its own index roots are these (server/lsp/indexing.py
    ``take_prepared``); a failure is only a slower start."""
    future: Future[Prepared | None] = Future()

    def between() -> None:
        if work is not None:
            work.idle.wait(FRONT_WAIT)

    def run() -> None:
        if not future.set_running_or_notify_cancel():
            return
        try:
            from puppet_xpp.server.analysis.workspace import Settings, index_roots

            roots = roots_of(init)
            options = init.get("initializationOptions") or {}
            settings = Settings.from_dict(options, Settings(), roots[0] if roots else None)
            roots = index_roots(roots, settings.modulepath)
            if not roots:  # (nothing to index: the server starts no indexing)
                future.set_result(None)
                return
            surveyed = None
            if surveyor is not None:
                surveyor.ask(roots)
                surveyed = surveyor.answer()
            from puppet_xpp.server.analysis.index_cache import prepare

            between()
            future.set_result(prepare(roots, surveyed, between))
        except BaseException as e:  # (the server's indexing says so and reads everything itself)
            future.set_exception(e)
        finally:
            if surveyor is not None:
                surveyor.close()

    threading.Thread(target=run, name="puppet-index-early", daemon=True).start()
    return future


class FrontWork:
    """What the loader and the front tell each other: the modules the front's analysis needs are
    imported (``ready``), and the front has no document to analyse (``idle``: the loader goes on); and
    what the server tells the loader: its first indexing is over, or it is leaving (``settled``: the
    code cache's window closes)."""

    def __init__(self) -> None:
        self.ready = threading.Event()
        self.idle = threading.Event()
        self.idle.set()
        self.settled = threading.Event()
        self.leaving = False  # (the server is leaving: nothing more is imported)
        self.waited = 0.0  # seconds the loader waited so far

    def wait_idle(self) -> None:
        """The loader, between two steps: wait while the front analyses (at most :data:`FRONT_WAIT` in
        all: the server is never held up longer, whatever the documents)."""
        if self.idle.is_set() or self.waited >= FRONT_WAIT:
            return
        t0 = time.monotonic()
        self.idle.wait(FRONT_WAIT - self.waited)
        self.waited += time.monotonic() - t0


@dataclass
class Handoff:
    """What the front leaves the server: the bytes read (given again to its reader), the requests the
    front answered (the server's answers to them are dropped), ``initialize``'s id and params, and what
    the front answered it with (None: nothing, pygls answers)."""

    prefix: bytes = b""
    answered: set[Any] = field(default_factory=set)
    initialize_id: Any = None
    initialize_params: Json | None = None
    initialize_result: Json | None = None
    cache: AnswerCache | None = None
    # the documents whose first diagnostics the front published: uri -> (version, LspDiagnostic list)
    published: dict[str, tuple[int, list[Any]]] = field(default_factory=dict)
    # the workspace's files and index cache, read on a thread from ``initialize`` on (start_early_index)
    early_index: Future[Prepared | None] | None = None
    # set by the server when its first indexing is over (the loader's code cache window closes then)
    settled: threading.Event | None = None


class Front:
    """The front: reads the client's frames from ``fd_in`` until ``ready`` (a pipe the loader writes to
    once the server is imported), answering what it can on ``out``."""

    def __init__(
        self,
        fd_in: int,
        out: BinaryIO,
        ready_fd: int,
        cache: Callable[[], AnswerCache],
        work: FrontWork | None = None,
        surveyor: Surveyor | None = None,
    ) -> None:
        self.work = work
        self.surveyor = surveyor  # (given to the early index's thread at initialize)
        self.fd_in = fd_in
        self.out = out
        self.ready_fd = ready_fd
        self.open_cache = cache
        self.raw = bytearray()
        self.pos = 0  # how far ``raw`` has been read as frames
        self.lost = False  # a frame the front does not read: the rest is the server's reader's
        self.eof = False
        self.shutdown = False
        self.pending = 0  # requests read and not answered by the front (the server answers them)
        self.handoff = Handoff()
        self.encoding = "utf-16"  # the position encoding of the early initialize answer
        # documents opened whose first diagnostics the front is to publish (uri -> textDocument), once
        # it has read what the client sent so far
        self.todo: dict[str, Json] = {}

    # -- output

    def send(self, msg: Json) -> None:
        body = json.dumps(msg, separators=(",", ":")).encode()
        self.out.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.out.flush()

    # -- the loop

    def run(self) -> int | None:
        """Serve until the server is ready (None), or until the client's ``exit`` when nothing it asked
        is left unanswered (the status).  A client gone is the server's to see (the messages before
        may have asked for work: an ``.xpp`` written on save)."""
        while True:
            want = [self.ready_fd]
            if not self.eof and len(self.raw) < MAX_FRONT_BYTES:
                want.append(self.fd_in)
            readable, _, _ = select.select(want, [], [], 0 if self.todo else None)
            if self.ready_fd in readable:
                self.handoff.prefix = bytes(self.raw)
                self.set_todo({})
                return None
            if self.fd_in not in readable:
                if self.todo:  # everything sent so far is read: the first document's diagnostics
                    uri = next(iter(self.todo))
                    document = self.todo[uri]
                    self.publish_first(document)
                    self.set_todo({u: d for u, d in self.todo.items() if u != uri})
                continue
            try:
                chunk = os.read(self.fd_in, 65536)
            except OSError:
                chunk = b""
            if not chunk:
                self.eof = True
                continue
            self.raw += chunk
            while not self.lost:
                if select.select([self.ready_fd], [], [], 0)[0]:  # the server is loaded: it takes over
                    self.handoff.prefix = bytes(self.raw)
                    return None
                msg = self.next_message()
                if msg is None:
                    break
                status = self.handle(msg)
                if status is not None:
                    return status
            if self.lost and self.todo:  # (what follows may change them: the server's)
                self.set_todo({})

    def next_message(self) -> Any:
        """The next whole frame's message (None: not all there yet, or not one the front reads)."""
        end = self.raw.find(b"\r\n\r\n", self.pos)
        if end < 0:
            if len(self.raw) - self.pos > 4096:
                self.lost = True
            return None
        length = None
        for line in bytes(self.raw[self.pos : end]).split(b"\r\n"):
            name, sep, value = line.partition(b":")
            if not sep:
                self.lost = True
                return None
            if name.strip().lower() == b"content-length":
                v = value.strip()
                if not v.isdigit() or length is not None:
                    self.lost = True
                    return None
                length = int(v)
        if length is None or length <= 0:
            self.lost = True
            return None
        if end + 4 + length > len(self.raw):
            return None
        body = bytes(self.raw[end + 4 : end + 4 + length])
        self.pos = end + 4 + length
        try:
            msg = json.loads(body)
        except ValueError:
            self.lost = True
            return None
        if type(msg) is not dict or type(msg.get("method")) is not str:
            self.lost = True  # (a response, a batch: the server's)
            return None
        return msg

    def handle(self, msg: Json) -> int | None:
        """One message: answered, acted on, or left to the server; the exit status on ``exit``."""
        method = msg["method"]
        params = msg.get("params")
        msg_id = msg.get("id")
        hand = self.handoff
        if "id" in msg:
            if type(msg_id) not in (int, str):
                self.lost = True  # (the server's reader answers what it makes of it)
                return None
            self.pending += 1
        if method == "exit" and "id" not in msg:
            if self.pending == 0:
                return 0 if self.shutdown else 1
            self.lost = True  # requests not answered yet: the server answers them, then exits
            return None
        if self.shutdown:
            return None  # (the server answers what follows a shutdown: an error)
        if method == "initialize" and "id" in msg and hand.initialize_id is None:
            hand.initialize_id = msg_id
            if plausible_initialize(params):
                assert type(params) is dict
                hand.initialize_params = params
                cache = hand.cache = self.open_cache()
                result = cache.get(params["capabilities"])
                if result is not None:
                    self.answer(msg_id, result)
                    hand.initialize_result = result
                    caps = result.get("capabilities")
                    enc = caps.get("positionEncoding") if type(caps) is dict else None
                    self.encoding = enc if enc in ("utf-8", "utf-16", "utf-32") else "utf-16"
                # (after the answer: the client waits for nothing else)
                hand.early_index = start_early_index(params, self.work, self.surveyor)
                self.surveyor = None
            return None
        if method == "shutdown" and "id" in msg and hand.initialize_result is not None and self.pending == 1:
            self.answer(msg_id, None)
            self.shutdown = True
            self.set_todo({})
            return None
        document = params.get("textDocument") if type(params) is dict else None
        if type(document) is not dict or type(document.get("uri")) is not str or "id" in msg:
            return None
        uri = document["uri"]
        if method == DID_OPEN and hand.initialize_result is not None and uri not in hand.published:
            self.set_todo({**self.todo, uri: document})
        elif uri in self.todo:  # changed, closed, saved: its first publish is the server's
            self.set_todo({u: d for u, d in self.todo.items() if u != uri})
        return None

    def set_todo(self, todo: dict[str, Json]) -> None:
        """The documents left to publish; the loader waits while there are any."""
        self.todo = todo
        if self.work is not None:
            if todo:
                self.work.idle.clear()
            else:
                self.work.idle.set()

    def publish_first(self, document: Json) -> None:
        """Publish the first diagnostics of the document opened (``didOpen``'s ``textDocument``), when
        they are the server's first publish of it (:func:`first_diagnostics`); what was published goes
        to the server with the handoff."""
        params = self.handoff.initialize_params
        if params is None:
            return
        try:
            if self.work is not None and not self.work.ready.wait(FRONT_WAIT):
                return  # (the loader is slow: the server publishes)
            first = first_diagnostics(document, params, self.encoding)
        except Exception:  # never the front's to fail: the server analyses it again
            log.exception("puppet-xpp: early diagnostics failed")
            return
        if first is None:
            return
        uri, version, diags = first
        msg = {"uri": uri, "version": version, "diagnostics": [diagnostic_json(d) for d in diags]}
        self.send({"jsonrpc": "2.0", "method": "textDocument/publishDiagnostics", "params": msg})
        self.handoff.published[uri] = (version, diags)
        log.debug("puppet-xpp: the front published %s version %s (%d diagnostics)", uri, version, len(diags))

    def answer(self, msg_id: Any, result: Any) -> None:
        self.send({"jsonrpc": "2.0", "id": msg_id, "result": result})
        self.handoff.answered.add(msg_id)
        self.pending -= 1


# ----------------------------------------------------------------------------------------------- the server's side


class Replayed:
    """The client's stream as the server's reader sees it: the bytes the front read, then the rest."""

    def __init__(self, prefix: bytes, stream: BinaryIO) -> None:
        self.prefix = prefix
        self.at = 0
        self.stream = stream

    def readline(self, limit: int = -1) -> bytes:
        if self.prefix and self.at >= len(self.prefix):
            self.prefix = b""
        if self.at < len(self.prefix):
            stop = len(self.prefix) if limit < 0 else min(len(self.prefix), self.at + limit)
            nl = self.prefix.find(b"\n", self.at, stop)
            end = stop if nl < 0 else nl + 1
            line = self.prefix[self.at : end]
            self.at = end
            if nl >= 0 or (limit >= 0 and len(line) >= limit):
                return line
            return line + self.stream.readline(-1 if limit < 0 else limit - len(line))
        return self.stream.readline(limit)

    def read(self, n: int = -1) -> bytes:
        if self.prefix and self.at >= len(self.prefix):
            self.prefix = b""
        if self.at < len(self.prefix):
            part = self.prefix[self.at :] if n < 0 else self.prefix[self.at : self.at + n]
            self.at += len(part)
            if n < 0:
                return part + self.stream.read()
            if len(part) < n:
                return part + self.stream.read(n - len(part))
            return part
        return self.stream.read(n)


class AnsweredFilter:
    """The server's writer, dropping its answers to the requests the front answered; ``initialize``'s is
    compared with the front's first and kept in the cache when it differs (or the front had none)."""

    def __init__(self, writer: Any, hand: Handoff) -> None:
        self.writer = writer
        self.hand = hand
        self.watch = set(hand.answered)
        if hand.initialize_id is not None and hand.initialize_params is not None:
            self.watch.add(hand.initialize_id)

    def write(self, data: bytes) -> None:
        if self.watch:
            msg = _body(data)
            if type(msg) is dict and "method" not in msg and msg.get("id") in self.watch:
                self.watch.discard(msg["id"])
                self.seen_answer(msg)
                if msg["id"] in self.hand.answered:
                    return
        self.writer.write(data)

    def close(self) -> Any:
        return self.writer.close()

    def seen_answer(self, msg: Json) -> None:
        hand = self.hand
        if msg["id"] != hand.initialize_id or hand.cache is None or hand.initialize_params is None:
            return
        result = msg.get("result")
        if type(result) is not dict:
            if hand.initialize_result is not None:
                log.error(
                    "puppet-xpp: initialize answered early, but the server refused it: %s", msg.get("error")
                )
            return
        if result != hand.initialize_result:
            if hand.initialize_result is not None:
                log.error(
                    "puppet-xpp: the early initialize answer differed from the server's (kept for next time)"
                )
            hand.cache.put(hand.initialize_params["capabilities"], result)


def _body(data: bytes) -> Any:
    head, sep, body = data.partition(b"\r\n\r\n")
    try:
        return json.loads(body if sep else head)
    except ValueError:
        return None


# ----------------------------------------------------------------------------------------------- start


def load_server(done: Callable[[], None], failed: list[BaseException], work: FrontWork | None = None) -> None:
    """The loader thread: what the front's diagnostics need, then the whole server in steps (waiting
    while the front analyses a document); ``done`` is called either way.  The code cache's window
    (server/startup_cache.py) stays open while the server handles its first messages -- until its first
    indexing is over (``work.settled``), at most :data:`SETTLE` seconds: the converters cattrs
    generates for them (their structure and unstructure code, ~40 compiled sources before a second
    start's index is ready) are compiled once and kept too.  Then :data:`LATE_STEPS` are imported, in
    the window, before the first document's publish usually needs them, and the cache is written."""
    import importlib

    code = None
    called = False

    def done_once() -> None:
        nonlocal called
        if not called:
            called = True
            done()

    try:
        from puppet_xpp.grammar.gcpause import paused

        try:
            with paused():  # (their objects last as long as the process, as the server's: see below)
                for name in FRONT_MODULES:
                    importlib.import_module(name)
        finally:
            if work is not None:
                work.ready.set()
        from puppet_xpp.server.startup_cache import kept_compiled

        if work is not None:  # (the code cache is read once the front has no document to analyse)
            work.wait_idle()
        # (the methods attrs generates for lsprotocol's classes: compiled at the first start only)
        with kept_compiled(cache_dir()) as code:
            for name in LOAD_STEPS:
                if work is not None:
                    work.wait_idle()
                # lsprotocol's and pygls' ~1,000 classes live as long as the process: the collections
                # their allocation would start find nothing (about 30 ms of the start; the server's own
                # step freezes)
                with paused():
                    importlib.import_module(name)
            done_once()
            if work is not None:
                work.settled.wait(SETTLE)
                for name in LATE_STEPS if not work.leaving else ():
                    try:
                        with paused():
                            importlib.import_module(name)
                    except Exception:  # (the first publish imports it again, and says why)
                        log.exception("puppet-xpp: %s not imported", name)
    except BaseException as e:  # the handoff reports it (the main thread imports again and raises)
        failed.append(e)
    finally:
        done_once()
    if code is not None and not failed:
        code.save()  # (only when something was compiled)


def serve_stdio(verbose: bool = False, stdin: BinaryIO | None = None, stdout: BinaryIO | None = None) -> int:
    """Serve on stdio: the front until the server is loaded, then the server; the exit status."""
    if verbose:
        logging.basicConfig(level=logging.DEBUG)
    t0 = time.perf_counter()
    inp = stdin or sys.stdin.buffer
    out = stdout or sys.stdout.buffer
    ready_r, ready_w = os.pipe()
    failed: list[BaseException] = []
    work = FrontWork()
    surveyor = Surveyor.fork()  # (before any thread of ours)
    loader = threading.Thread(
        target=load_server,
        args=(lambda: os.write(ready_w, b"."), failed, work),
        name="puppet-load",
        daemon=True,
    )
    loader.start()
    front = Front(inp.fileno(), out, ready_r, AnswerCache.open, work, surveyor)
    status = front.run()
    if front.surveyor is not None:  # (no initialize it could survey)
        front.surveyor.close()
    if status is not None:
        out.flush()
        logging.shutdown()
        os._exit(status)  # (the loader may hold the import lock: nothing waits for it)
    os.close(ready_r)  # (the loader wrote to it once: the server is imported)
    os.close(ready_w)
    from puppet_xpp.server.lsp import server

    log.debug("puppet-xpp: server loaded %.3f s after start", time.perf_counter() - t0)
    hand = front.handoff
    replayed = cast(BinaryIO, Replayed(hand.prefix, inp))  # (what the reader uses of a stream)
    hand.prefix = b""  # (the reader's copy is dropped once read: nothing read at start is kept)
    hand.settled = work.settled
    del front
    try:
        return server.serve(None, handoff=hand, stdin=replayed, stdout=out)
    finally:  # (the code cache's window closes, and what it compiled is written before the exit)
        work.leaving = True
        work.settled.set()
        loader.join(SETTLE)

"""The language server's state, in one typed object (as ruff_server's ``Session``): the open documents,
the settings (lint's included), the workspace folders and the client's capabilities, the workspace
index, the reference index and the hooks that feed it, the Hiera cache, the lint process, the GC pacer,
the deep checks' setting and hooks (server/lsp/deep.py), and per document its diagnostics by source with
what the one publisher (server/lsp/publish.py) sent and its deep checks' per-statement cache.

The server object (server/lsp/language_server.py) owns one :class:`Session`; the handlers reach
everything through it, and no module keeps state of its own.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from lsprotocol import types

from puppet_xpp.grammar.check import CheckConfig
from puppet_xpp.server.analysis import filekinds, references
from puppet_xpp.server.analysis.answers import Knowledge
from puppet_xpp.server.analysis.document import Analysis, Document, GcPacer, LspDiagnostic, Span, path_of_uri
from puppet_xpp.server.analysis.facts import FactSource
from puppet_xpp.server.analysis.hiera import HieraCache, Layer
from puppet_xpp.server.analysis.index import ParsedHook, WorkspaceIndex
from puppet_xpp.server.analysis.index_cache import Prepared
from puppet_xpp.server.analysis.lint_pool import LintPool
from puppet_xpp.server.analysis.puppet_tools import ToolState
from puppet_xpp.server.analysis.symbols import Sym
from puppet_xpp.server.analysis.workspace import (
    Settings,
    check_config_for,
    file_context,
    find_environment,
    index_roots,
)
from puppet_xpp.server.lsp.lint_carry import LintState

if TYPE_CHECKING:
    from puppet_xpp.server.lsp.deep import DeepCache

# the sources of a document's diagnostics, in the order they are published (FILE: the analysis of a
# document that is not Puppet code, server/analysis/filekinds.py)
PARSE, LINT, DEEP, FILE = "parse", "lint", "deep", "file"
SOURCES = (PARSE, LINT, DEEP, FILE)
# what a diagnostic's lsprotocol form is made of (the publisher reuses the form of an equal one)
DiagnosticKey = tuple[int, int, int, int, int, str, str, str, bool]


@dataclass
class DiagnosticsStore:
    """A document's diagnostics by source (written on the event loop only) for one version, and the
    lsprotocol form of each diagnostic of its last publish (server/lsp/publish.py)."""

    version: int | None = None
    by_source: dict[str, list[LspDiagnostic]] = field(default_factory=dict)
    converted: dict[DiagnosticKey, types.Diagnostic] = field(default_factory=dict)

    def set(self, version: int | None, source: str, diags: list[LspDiagnostic]) -> None:
        """``diags`` are ``source``'s for ``version`` (another version's other sources are dropped)."""
        if version != self.version:
            self.version = version
            self.by_source = {}
        self.by_source[source] = diags

    def get(self, source: str) -> list[LspDiagnostic]:
        return self.by_source.get(source, [])

    def all(self) -> list[LspDiagnostic]:
        by = self.by_source
        return [d for s in SOURCES for d in by.get(s, ())]


@dataclass(eq=False)
class DocState:
    """One open document.  ``doc`` belongs to the worker thread; ``pending`` (guarded by ``lock``)
    holds the content changes received and not applied yet, ``version`` the latest version received.
    ``kind`` (server/analysis/filekinds.py) says how it is analysed: a document that is not Puppet
    code keeps its text in ``doc`` (edits applied as to any other) but is never parsed as Puppet."""

    uri: str
    doc: Document
    version: int | None = None
    pending: list[tuple[Span | None, str]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    job: asyncio.Future[None] | None = field(default=None, repr=False)  # computing diagnostics
    published: int | None = None  # the version last published
    last_good: Analysis | None = (
        None  # the last analysis that succeeded (features use it after an internal error)
    )
    refused: str | None = None  # why our copy may differ from the client's (until reopened)
    lint: LintState = field(default_factory=LintState)
    diagnostics: DiagnosticsStore = field(default_factory=DiagnosticsStore)
    kind: str = filekinds.PUPPET
    # the deep checks' results per top-level statement (server/lsp/deep.py; worker thread only)
    deep: DeepCache | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        if self.version is None:
            self.version = self.doc.version

    @property
    def is_puppet(self) -> bool:
        """A Puppet manifest or an EPP template (parsed, validated and linted as Puppet)."""
        return self.kind in (filekinds.PUPPET, filekinds.EPP)


@dataclass(eq=False)
class IndexState:
    """How far the workspace indexing is (event loop only).  Requests whose answer needs the whole
    index (references, rename, call hierarchy) wait for it a bounded time, then refuse rather than answer
    from a partial index as if it were complete (server/lsp/indexing.py's ``wait_complete``).

    Until the first indexing of the workspace has ended the index is incomplete, even before that
    indexing started (``initialized`` may not have come yet): a request at that moment must not be
    mistaken for one on a complete index."""

    first_done: bool = False  # the indexing at start has ended
    running: int = 0  # indexings running now (at start, folders added later)
    done: int = 0  # files indexed by the running indexings
    total: int = 0  # files the running indexings have to index
    idle: asyncio.Event | None = field(default=None, repr=False)
    # called (event loop) each time the index becomes complete: the deep checks of the open documents,
    # which wait for it, run then (server/lsp/deep.py)
    on_complete: list[Callable[[], None]] = field(default_factory=list, repr=False)

    def complete(self) -> bool:
        return self.first_done and self.running == 0

    def event(self) -> asyncio.Event:
        """Set while the index is complete."""
        if self.idle is None:
            self.idle = asyncio.Event()
        if self.complete():
            self.idle.set()
        return self.idle

    def begin(self, files: int) -> None:
        self.running += 1
        self.total += files
        self.event().clear()

    def end(self) -> None:
        self.running = max(0, self.running - 1)
        self.first_done = True
        if self.running == 0:
            self.done = self.total = 0
        self.event()
        if self.complete():
            for hook in list(self.on_complete):
                hook()


class ObservedIndex(WorkspaceIndex):
    """The workspace index, telling its listeners which file's entries were set (after they are): what
    a name resolves to may have changed, so the deep checks of the open documents look again
    (server/lsp/deep.py; a listener may be called on any thread)."""

    def __init__(self) -> None:
        super().__init__()
        self.listeners: list[Callable[[str], None]] = []

    def set_file(self, path: str, syms: list[Sym]) -> None:
        super().set_file(path, syms)
        for listener in list(self.listeners):
            listener(path)


def deep_checks_from(d: object, current: bool) -> bool:
    """The deep checks' setting in a client settings object: ``deepChecks: {enabled: bool}`` (named as
    lint's ``lint: {enabled}``) or ``deepChecks: bool``, in the object or its ``puppet`` section;
    ``current`` when it says nothing usable."""
    if not isinstance(d, dict):
        return current
    section = d.get("puppet")
    settings: dict[str, object] = section if isinstance(section, dict) else d
    value = settings.get("deepChecks", settings.get("deep_checks"))
    if isinstance(value, dict):
        value = value.get("enabled")
    return value if isinstance(value, bool) else current


@dataclass(eq=False)
class Session:
    settings: Settings = field(default_factory=Settings)
    roots: list[str] = field(default_factory=list)  # the workspace folders
    client_caps: types.ClientCapabilities | None = None
    documents: dict[str, DocState] = field(default_factory=dict)
    index: WorkspaceIndex = field(default_factory=ObservedIndex)
    refs: references.RefIndex = field(default_factory=references.RefIndex)
    parsed_hooks: tuple[ParsedHook, ...] = ()  # what else each manifest the indexing parses feeds
    hiera: HieraCache = field(default_factory=HieraCache)
    lint_pool: LintPool = field(default_factory=LintPool)
    gc_pacer: GcPacer = field(default_factory=GcPacer)
    timings: list[float] = field(default_factory=list)  # seconds per analysis (the last 1,000)
    indexing: asyncio.Future[None] | None = None  # the workspace indexing at start
    index_state: IndexState = field(default_factory=IndexState)
    idle_gc: asyncio.Future[None] | None = None  # a full collection waiting for a pause
    # the user's facts (setting facts.file, a facter run on request: server/analysis/facts.py)
    facts: FactSource = field(default_factory=FactSource)
    # puppet-vscode's messages: the tools' versions and the facter run (server/lsp/custom.py)
    tools: ToolState = field(default_factory=ToolState)
    # project configuration problems the user was already shown (Session.project_problem)
    project_problems_shown: set[str] = field(default_factory=set)
    # the deep checks (issue 30: server/lsp/deep.py) are on (setting deepChecks.enabled, default on);
    # deep_hooks are called (event loop) when the setting changes
    deep_checks: bool = True
    deep_hooks: list[Callable[[], None]] = field(default_factory=list, repr=False)
    deep_installed: bool = False  # server/lsp/deep.py listens to the index and the setting
    index_generation: int = 0  # index changes so far (event loop; the deep checks' world follows it)
    # the first diagnostics the start-up front published before the server was loaded (server/lsp/
    # startup.py), by uri: (version, diagnostics); the publisher does not send them again
    # (server/lsp/publish.py ``send``)
    front_published: dict[str, tuple[int, list[LspDiagnostic]]] = field(default_factory=dict)
    # the workspace's files and index cache as the start-up front's thread read them while the server
    # was loaded (index_cache.prepare), taken by the first indexing (server/lsp/indexing.py)
    early_index: Future[Prepared | None] | None = None

    def __post_init__(self) -> None:
        if not self.parsed_hooks:  # one parse of a manifest also files its references
            self.parsed_hooks = (references.feed(self.refs),)

    # -- documents

    def config_for(self, uri: str) -> CheckConfig:
        return check_config_for(path_of_uri(uri), self.settings)

    def project_problem(self, uri: str) -> str | None:
        """The project configuration file (xpp.project) that applies to ``uri`` when it cannot be used,
        as ``path:line: what`` -- once per distinct problem (the editor is told, not every open file)."""
        from puppet_xpp.xpp.project import project_for

        path = path_of_uri(uri)
        error = project_for(path).error if path else None
        if error is None or str(error) in self.project_problems_shown:
            return None
        self.project_problems_shown.add(str(error))
        return str(error)

    def open_paths(self) -> set[str | None]:
        return {path_of_uri(u) for u in self.documents}

    def deep_active(self, uri: str) -> bool:
        """Deep checks for the document ``uri``: on, and a Puppet manifest (not EPP, not a Puppetfile or
        a metadata.json)."""
        st = self.documents.get(uri)
        return (
            self.deep_checks and st is not None and st.kind == filekinds.PUPPET and not uri.endswith(".epp")
        )

    def lint_active(self, uri: str) -> bool:
        """Lint diagnostics and quick fixes for the document ``uri`` (never for EPP, nor for a document
        that is not Puppet code: a Puppetfile, a metadata.json)."""
        st = self.documents.get(uri)
        if st is not None and st.kind != filekinds.PUPPET:
            return False
        return self.settings.lint.enabled and not uri.endswith(".epp")

    def file_text(self, st: DocState) -> filekinds.FileText:
        """Worker: the current text of the non-Puppet document ``st`` as its analysis takes it, with the
        module path seen from it (the environment model's, and the editor's setting modulepath)."""
        path = path_of_uri(st.uri)
        modulepath = file_context(path, self.settings).modulepath
        return filekinds.FileText(st.doc.text, path, st.doc.encoding, modulepath)

    # -- the workspace

    def settings_from(self, d: object) -> Settings:
        """The settings of a client settings object (the facts file, ``facts.file``, is kept apart: it
        is no analysis setting)."""
        root = self.roots[0] if self.roots else None
        self.facts.configure(d, root)
        deep = deep_checks_from(d, self.deep_checks)
        if deep != self.deep_checks:
            self.deep_checks = deep
            for hook in list(self.deep_hooks):
                hook()
        return Settings.from_dict(d, self.settings, root)

    def index_roots(self) -> list[str]:
        """Workspace folders, the configured module path, and each folder's environment module path."""
        return index_roots(self.roots, self.settings.modulepath)

    def owning_environment(self, path: str) -> str | None:
        """The directory of the workspace environment whose module path holds ``path`` (a module on an
        absolute module path outside the environment's directory, where the file's own location finds
        no environment), or None."""
        for r in self.roots:
            env = find_environment(r)
            if env is not None and env.module_of(path) is not None:
                return env.root
        return None

    def hiera_layers(self, uri: str) -> list[Layer]:
        """The Hiera layers seen from the document ``uri`` (its environment, else the first folder)."""
        path = path_of_uri(uri)
        env_root = None
        if path:
            env = find_environment(path)
            env_root = env.root if env is not None else None
        if env_root is None and self.roots:
            env_root = self.roots[0]
        return self.hiera.layers_for(env_root, self.index_roots())

    def knowledge(self, uri: str) -> Knowledge:
        """What the features know beyond the document ``uri``."""
        return Knowledge(
            self.index,
            self.settings.puppet_version,
            lambda: self.hiera_layers(uri),
            self.snippets(),
            self.facts.current,
        )

    # -- the client

    def snippets(self) -> bool:
        """The client takes snippets in completion items."""
        caps = self.client_caps
        document = caps.text_document if caps is not None else None
        completion = document.completion if document is not None else None
        item = completion.completion_item if completion is not None else None
        return bool(item is not None and item.snippet_support)

    def work_done_progress(self) -> bool:
        window = self.client_caps.window if self.client_caps is not None else None
        return bool(getattr(window, "work_done_progress", False))

    def watches_files(self) -> bool:
        """The client registers file watchers on request."""
        caps = self.client_caps
        ws = caps.workspace if caps is not None else None
        watched = ws.did_change_watched_files if ws is not None else None
        return bool(watched is not None and watched.dynamic_registration)

    def edit_caps(self) -> types.WorkspaceEditClientCapabilities | None:
        ws = self.client_caps.workspace if self.client_caps is not None else None
        return ws.workspace_edit if ws is not None else None

    def can_move_files(self) -> bool:
        """The client applies RenameFile operations (resource operations live in documentChanges, so a
        client announcing them takes documentChanges too: Neovim 0.7 announces only the former)."""
        caps = self.edit_caps()
        ops = (caps.resource_operations if caps is not None else None) or []
        return any(getattr(o, "value", o) == "rename" for o in ops)

    def takes_document_changes(self) -> bool:
        caps = self.edit_caps()
        return bool(caps is not None and caps.document_changes)

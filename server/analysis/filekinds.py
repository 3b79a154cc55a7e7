"""Which kind of file an open document is, and the interface the analyses of the files that are not
Puppet code implement (no pygls here).

The server parses and validates Puppet manifests and EPP templates itself (server/analysis/document.py);
the other files it opens -- a Puppetfile (server/analysis/puppetfile.py, puppetfile_editor.py), a
module's metadata.json (server/analysis/metadata_json.py) -- are never parsed as Puppet, never linted and
never compiled to .xpp: the session routes them by :func:`kind_of` to a :class:`FileAnalysis`, whose plain
answers (server/analysis/answers.py) the existing handlers convert as they convert the Puppet ones.  Nor
are Hiera's files -- ``hiera.yaml`` and its YAML/JSON data, which the editors send so that the deep checks
read the unsaved buffers (server/analysis/hiera.py) -- nor any other YAML or JSON document: their kind is
``other``, which has no analysis (empty answers to every request).

Positions are LSP's, as everywhere in the analysis: 0-based line and a column in the negotiated
encoding (UTF-16 by default).  A :class:`FileText` carries the text with that encoding, and converts
between them and offsets through the one converter (:class:`server.analysis.document.LineIndex`).
"""

from __future__ import annotations

import functools
import importlib
import os
from dataclasses import dataclass, field
from typing import Protocol

from puppet_xpp.server.analysis.answers import CompletionItem, DocumentSymbol, Hover, Location
from puppet_xpp.server.analysis.document import LineIndex, LspDiagnostic, Pos, Span

PUPPET, EPP, PUPPETFILE, METADATA, OTHER = "puppet", "epp", "puppetfile", "metadata", "other"
KINDS = (PUPPET, EPP, PUPPETFILE, METADATA, OTHER)

# the client language ids of each kind (VS Code's puppet-vscode and ours, Neovim's filetypes)
EPP_LANGUAGE_IDS = frozenset({"epp", "embedded-puppet", "epuppet"})
PUPPETFILE_LANGUAGE_IDS = frozenset({"puppetfile"})
JSON_LANGUAGE_IDS = frozenset({"json", "jsonc"})
YAML_LANGUAGE_IDS = frozenset({"yaml"})
# the names of the files Hiera 5's built-in backends read (yaml_data: .yaml; json_data: .json; and
# hiera.yaml itself), by which a document opened with no language id is known as data, not Puppet
DATA_SUFFIXES = (".yaml", ".yml", ".json")
# r10k reads the file named ``Puppetfile`` in an environment (R10K::ModuleLoader::Puppetfile's
# DEFAULT_PUPPETFILE_NAME), by that exact name: ``puppetfile`` is another file on a case-sensitive file
# system (a file of another name is a Puppetfile when the client says so: language id ``puppetfile``)
PUPPETFILE_NAME = "Puppetfile"
METADATA_NAME = "metadata.json"
# directories whose metadata.json is never a Puppet module's (a JavaScript package's dependencies, a
# VCS's own files)
NOT_MODULE_DIRS = frozenset({"node_modules", ".git", ".hg", ".svn"})


def kind_of(uri: str, language_id: str | None) -> str:
    """The kind of the document ``uri`` the client opened with ``language_id`` (None: not known, as
    for a document opened before the language id was kept): one of :data:`KINDS`.

    * ``puppetfile``: the language id ``puppetfile``, or a file named ``Puppetfile``;
    * ``metadata``: a file named ``metadata.json`` opened as JSON (or with no language id) in a
      directory that is a module root -- Puppet's rule: the directory holding metadata.json is the
      module's (xpp/environment.py ``infer_module``) -- but not one under ``node_modules`` or a VCS's
      directory;
    * ``other``: any other JSON document, and every YAML document -- Hiera's ``hiera.yaml`` and data
      files among them (opened as JSON or YAML, or with no language id a file ending ``.json``,
      ``.yaml`` or ``.yml``): no analysis, never Puppet;
    * ``epp``: the language id ``epp``/``embedded-puppet``/``epuppet``, or a file ending ``.epp``;
    * ``puppet``: everything else (the server's behaviour before the kinds existed).
    """
    name = _basename(uri)
    lang = (language_id or "").lower()
    if lang in PUPPETFILE_LANGUAGE_IDS or name == PUPPETFILE_NAME:
        return PUPPETFILE
    if name == METADATA_NAME and (not lang or lang in JSON_LANGUAGE_IDS) and _module_root(uri):
        return METADATA
    if (
        lang in JSON_LANGUAGE_IDS
        or lang in YAML_LANGUAGE_IDS
        or (not lang and name.lower().endswith(DATA_SUFFIXES))
    ):
        return OTHER
    if lang in EPP_LANGUAGE_IDS or name.lower().endswith(".epp"):
        return EPP
    return PUPPET


def is_data_file(uri: str) -> bool:
    """Whether the document ``uri`` may be a file Hiera reads (its name ends ``.yaml``, ``.yml`` or
    ``.json``): its text opened, edited, saved or closed in the editor changes what the deep checks
    see (server/lsp/documents.py ``data_changed``), whatever the kind it was opened as."""
    return _basename(uri).lower().endswith(DATA_SUFFIXES)


def _basename(uri: str) -> str:
    """The last segment of a URI or path, without a query or fragment."""
    tail = uri.split("?", 1)[0].split("#", 1)[0].replace("\\", "/")
    return tail.rstrip("/").rsplit("/", 1)[-1]


def _module_root(uri: str) -> bool:
    from puppet_xpp.server.analysis.document import path_of_uri

    path = path_of_uri(uri) if "://" in uri or uri.startswith("file:") else uri
    if path is None:  # an untitled buffer named metadata.json: judged by its name alone
        return True
    parts = os.path.normpath(path).split(os.sep)[:-1]
    return not any(p in NOT_MODULE_DIRS for p in parts)


@dataclass(frozen=True)
class FileText:
    """One version of a non-Puppet document as its analysis sees it: the text, its path (None: an
    untitled buffer), the position encoding the client negotiated, and the module path seen from the
    file (the directories, in order: its environment's, then the editor's setting ``modulepath``) --
    what the session knows beyond the text.

    The conversions go through :class:`LineIndex` (UTF-8 byte offsets <-> LSP positions), as the
    Puppet analysis does: ``span(start, end)`` of byte offsets, ``offset(line, character)``."""

    text: str
    path: str | None = None
    encoding: str = "utf-16"
    modulepath: tuple[str, ...] = ()
    lines: LineIndex = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        data = self.text.encode("utf-8", "surrogateescape")
        object.__setattr__(self, "lines", LineIndex(data, encoding=self.encoding))

    @property
    def data(self) -> bytes:
        """The text as UTF-8 (what byte offsets count)."""
        return self.lines.data

    def position(self, offset: int) -> Pos:
        """The LSP position of a UTF-8 byte offset."""
        return self.lines.position(offset)

    def span(self, start: int, end: int) -> Span:
        """The LSP range of the UTF-8 byte offsets [start, end)."""
        return self.lines.position(start), self.lines.position(end)

    def offset(self, line: int, character: int) -> int:
        """The UTF-8 byte offset of an LSP position (clamped to the text)."""
        return self.lines.offset(line, character)

    def char_offset(self, offset: int) -> int:
        """The index in ``text`` of a UTF-8 byte offset (for analyses that work on the str)."""
        return len(self.data[:offset].decode("utf-8", "surrogateescape"))

    def byte_offset(self, index: int) -> int:
        """The UTF-8 byte offset of an index in ``text``."""
        return len(self.text[:index].encode("utf-8", "surrogateescape"))


class FileAnalysis(Protocol):
    """What the server asks of the analysis of one non-Puppet kind of file.  Each method is called on
    the analysis worker thread with the document's current :class:`FileText`; none raises for bad
    input (a bad file is diagnostics, never a traceback) and none writes anything.  ``source`` is the
    ``source`` of its diagnostics (e.g. ``puppet-xpp.puppetfile``), so an editor can tell them from
    the Puppet ones."""

    @property
    def source(self) -> str:
        """The ``source`` of its diagnostics."""
        ...

    def diagnostics(self, file: FileText) -> list[LspDiagnostic]:
        """The file's problems (their ``source`` set to :attr:`source`)."""
        ...

    def hover(self, file: FileText, line: int, character: int) -> Hover | None:
        """Markdown about what is at the position, and the span it is about."""
        ...

    def definition(self, file: FileText, line: int, character: int) -> list[Location]:
        """Where what is at the position is (a module's directory: its path and the span (0, 0)-(0, 0);
        a path None is this document)."""
        ...

    def completion(self, file: FileText, line: int, character: int) -> list[CompletionItem]:
        """What may be written at the position."""
        ...

    def symbols(self, file: FileText) -> list[DocumentSymbol]:
        """The document's outline."""
        ...


@functools.cache
def analysis_for(kind: str) -> FileAnalysis | None:
    """The analysis of a non-Puppet kind (None: a Puppet or EPP document, an ``other`` one, or a kind
    whose analysis is not installed).  Imported on first use: a session that opens no Puppetfile loads none of it."""
    if kind == PUPPETFILE:
        from puppet_xpp.server.analysis import puppetfile_editor

        return puppetfile_editor.ANALYSIS
    if kind == METADATA:
        try:  # its module-level ``ANALYSIS`` (as puppetfile_editor's)
            metadata_json = importlib.import_module("puppet_xpp.server.analysis.metadata_json")
        except ModuleNotFoundError as e:
            if e.name != "puppet_xpp.server.analysis.metadata_json":
                raise
            return None  # not installed: a metadata.json gets no analysis (and still no Puppet one)
        found: FileAnalysis | None = getattr(metadata_json, "ANALYSIS", None)
        return found
    return None

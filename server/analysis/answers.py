"""The plain data the editor features answer with (no pygls here): server/lsp/convert.py turns each into
its lsprotocol form at the protocol's edge.  Positions are LSP's (0-based line, column in the
negotiated encoding), as :class:`server.analysis.document.LineIndex` gives them; files are paths."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from puppet_xpp.server.analysis.document import Span
from puppet_xpp.server.analysis.facts import FactValues
from puppet_xpp.server.analysis.hiera import Layer
from puppet_xpp.server.analysis.index import WorkspaceIndex


@dataclass(frozen=True)
class Location:
    path: str | None  # None: the document the question was about (its URI as the client sent it)
    span: Span


@dataclass(frozen=True)
class Hover:
    markdown: str
    span: Span


@dataclass
class DocumentSymbol:
    name: str
    detail: str | None
    kind: int  # LSP's SymbolKind number (server.analysis.features.symbol_kind)
    span: Span
    selection: Span
    children: list[DocumentSymbol] = field(default_factory=list)


@dataclass
class CompletionItem:
    """One completion.  ``kind`` names a member of LSP's CompletionItemKind (``"Variable"``,
    ``"Function"`` ...); ``documentation`` is plain text; ``edit`` replaces the typed prefix (its span
    and the text put there, a snippet when ``snippet``)."""

    label: str
    kind: str
    detail: str | None = None
    documentation: str | None = None
    insert_text: str | None = None
    filter_text: str | None = None
    sort_text: str | None = None
    data: dict[str, str] | None = None  # what completionItem/resolve needs to find the item again
    snippet: bool = False
    edit: tuple[Span, str] | None = None


@dataclass(frozen=True)
class Completions:
    items: list[CompletionItem]


@dataclass(frozen=True)
class SignatureInformation:
    label: str
    parameters: list[tuple[int, int]]  # each parameter's [start, end) in the label
    documentation: str | None  # markdown


@dataclass(frozen=True)
class SignatureHelp:
    signatures: list[SignatureInformation]
    active_signature: int
    active_parameter: int


def no_facts() -> FactValues | None:
    """Knowledge's default: the user's facts are not known."""
    return None


@dataclass(frozen=True)
class Knowledge:
    """What the features know beyond the document: the workspace index, the language level the
    built-ins are taken from (setting puppetVersion), the Hiera layers seen from the document (read
    only when a feature asks), and whether the client takes snippets."""

    index: WorkspaceIndex
    level: str | None
    hiera: Callable[[], Sequence[Layer]]
    snippets: bool = False
    # the user's facts (server/analysis/facts.py: a facts file of the settings, a facter run), read
    # only when a fact's hover asks
    facts: Callable[[], FactValues | None] = no_facts

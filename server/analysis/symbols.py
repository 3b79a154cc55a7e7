"""The entries of the workspace index: what a definition is called, where it is, its docs,
parameters, signatures and attributes.  Plain dataclasses in a module that imports nothing of the
analysis, so that their three producers share them without importing one another: the
Puppet-language indexer (server/analysis/index.py), the Ruby reader (server/analysis/ruby_index.py)
and the built-ins (server/analysis/builtins.py)."""

from __future__ import annotations

from dataclasses import dataclass, field

# ((line, column), (line, column)): a range in LSP coordinates (0-based line, UTF-16 column)
Position = tuple[int, int]
Span = tuple[Position, Position]


@dataclass(slots=True)
class Param:
    name: str
    type: str = ""
    default: str = ""
    doc: str = ""
    # required | optional | repeated | block | optional_block (a Ruby dispatch's param kinds)
    kind: str = "required"


@dataclass(slots=True)
class Signature:
    """One way to call a function (a Ruby dispatch, or a Puppet-language function's parameter list)."""

    params: list[Param]
    return_type: str = ""
    line: int = -1  # 0-based line of the dispatch in its file (-1: none)

    def label(self, name: str) -> str:
        ps = []
        for p in self.params:
            star = "*" if p.kind == "repeated" else "&" if p.kind in ("block", "optional_block") else ""
            ps.append(f"{p.type + ' ' if p.type else ''}{star}${p.name}")
        return f"{name}({', '.join(ps)})" + (f" >> {self.return_type}" if self.return_type else "")


@dataclass(slots=True)
class Attr:
    """A resource type's parameter or property (Ruby-defined and core types)."""

    name: str
    kind: str = "param"  # param | property
    namevar: bool = False
    values: tuple[str, ...] = ()  # allowed values as written (symbols without ':', regexps as /.../)
    default: str = ""
    type: str = ""  # Resource API attributes
    doc: str = ""
    line: int = -1


@dataclass(slots=True)
class Sym:
    name: str  # as written (lower case for classes/defines/functions)
    kind: str  # class | define | function | plan | type | node | resource_type | fact
    path: str
    range: Span
    selection: Span
    doc: str = ""
    params: list[Param] = field(default_factory=list)
    signature: str = ""
    signatures: list[Signature] = field(default_factory=list)  # functions
    attrs: list[Attr] = field(default_factory=list)  # resource types
    origin: str = "puppet"  # puppet | ruby4 | ruby3 | native | resource_api | builtin
    # a resource type whose attribute set may be larger than ``attrs`` (Ruby code the reader cannot
    # follow: a computed name, a helper not found; server/analysis/ruby_mixins.py): no unknown-parameter
    # finding for it
    open_attrs: bool = False

    @property
    def key(self) -> str:
        return self.name.lower().lstrip(":")

"""Static data for completion and hover: Puppet's keywords and data types (our own tables), its core
resource types and built-in functions (from the generated data, see server/analysis/builtins.py).

Computed once -- the generated data's, at first use -- from the default level's data and never changed
after: read-only mappings and tuples, so no session has state to own here.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING

from puppet_xpp.server.analysis import builtins

KEYWORDS = (
    "and",
    "application",
    "attr",
    "case",
    "class",
    "consumes",
    "default",
    "define",
    "else",
    "elsif",
    "false",
    "function",
    "if",
    "import",
    "in",
    "inherits",
    "node",
    "or",
    "private",
    "produces",
    "site",
    "true",
    "type",
    "undef",
    "unless",
    "plan",
    "apply",
)

_META = (
    "alias",
    "audit",
    "before",
    "loglevel",
    "noop",
    "notify",
    "require",
    "schedule",
    "stage",
    "subscribe",
    "tag",
)

# one-line descriptions (our own words) of the core resource types, and of the types Puppet 7 ships
# as vendored modules (cron_core, host_core, mount_core, sshkeys_core, augeas_core) with their
# attributes; the core types' attributes come from the generated data (server/analysis/builtins.py)
_DESCRIPTIONS = {
    "exec": "Executes external commands.",
    "file": "Manages files, directories and symlinks.",
    "filebucket": "A repository for storing and retrieving file content.",
    "group": "Manages groups.",
    "notify": "Sends an arbitrary message to the agent run-time log.",
    "package": "Manages packages.",
    "resources": "Controls which resources of a type are purged.",
    "schedule": "Defines when Puppet may apply resources.",
    "service": "Manages running services.",
    "stage": "A resource type for creating new run stages.",
    "tidy": "Removes unwanted files based on specific criteria.",
    "user": "Manages users.",
}
_VENDORED: dict[str, tuple[str, tuple[str, ...]]] = {
    "cron": (
        "Installs and manages cron jobs.",
        (
            "ensure",
            "command",
            "environment",
            "hour",
            "minute",
            "month",
            "monthday",
            "name",
            "special",
            "target",
            "user",
            "weekday",
        ),
    ),
    "host": ("Installs and manages host entries.", ("ensure", "name", "host_aliases", "ip", "target")),
    "mount": (
        "Manages mounted filesystems.",
        ("ensure", "name", "atboot", "device", "dump", "fstype", "options", "pass", "remounts", "target"),
    ),
    "ssh_authorized_key": (
        "Manages SSH authorized keys.",
        ("ensure", "name", "key", "options", "target", "type", "user"),
    ),
    "augeas": (
        "Applies changes to configuration files through Augeas.",
        ("changes", "context", "incl", "lens", "onlyif", "returns"),
    ),
}

if TYPE_CHECKING:  # (made at first use: :func:`__getattr__`)
    # type -> (one-line description, attributes): the core types, then the vendored ones they lack
    RESOURCE_TYPES: Mapping[str, tuple[str, tuple[str, ...]]]
    META_PARAMETERS: tuple[str, ...]
    # function name -> signature shown in hover/completion (the first of its signatures)
    FUNCTIONS: Mapping[str, str]


def _resource_types() -> Mapping[str, tuple[str, tuple[str, ...]]]:
    return MappingProxyType(
        {
            name: (_DESCRIPTIONS.get(name, "Core resource type."), tuple(a.name for a in sym.attrs))
            for name, sym in builtins.types().items()
        }
        | {name: entry for name, entry in _VENDORED.items() if name not in builtins.types()}
    )


def _meta_parameters() -> tuple[str, ...]:
    return builtins.metaparameters() or _META


def _functions() -> Mapping[str, str]:
    return MappingProxyType(
        {
            name: (sym.signatures[0].label(name) if sym.signatures else f"{name}(...)")
            for name, sym in builtins.functions().items()
        }
    )


_MADE: dict[str, Callable[[], object]] = {
    "RESOURCE_TYPES": _resource_types,
    "META_PARAMETERS": _meta_parameters,
    "FUNCTIONS": _functions,
}


def __getattr__(name: str) -> object:
    """The tables made of the generated data (the core types' and functions'), made at their first use
    and kept as the module's attributes: reading and converting that data (~5 ms) is not part of the
    language server's start, whose first answers (a workspace symbol's hover) do not need it.  The
    same values for every caller: the data never changes after import."""
    make = _MADE.get(name)
    if make is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = globals()[name] = make()
    return value


DATA_TYPES = (
    "Any",
    "Array",
    "Boolean",
    "Callable",
    "CatalogEntry",
    "Class",
    "Collection",
    "Data",
    "Default",
    "Enum",
    "Float",
    "Hash",
    "Integer",
    "Iterable",
    "Iterator",
    "NotUndef",
    "Numeric",
    "Optional",
    "Pattern",
    "Regexp",
    "Resource",
    "RichData",
    "Runtime",
    "Scalar",
    "ScalarData",
    "SemVer",
    "SemVerRange",
    "Sensitive",
    "String",
    "Struct",
    "Timespan",
    "Timestamp",
    "Tuple",
    "Type",
    "Undef",
    "Variant",
    "Error",
    "Init",
    "Object",
    "TypeSet",
    "Deferred",
    "URI",
    "Binary",
)

"""Resolution of names against the world: when a class, type or function name is provably unknown,
the module a missing name belongs to, and what exists that is close to a misspelt name (the quick
fixes' did-you-mean)."""

from __future__ import annotations

from collections.abc import Iterable

from puppet_xpp.server.analysis.deep.finding import Finding, make
from puppet_xpp.server.analysis.deep.world import Answers, key_of

__all__ = ["edit_distance", "missing_module", "suggestions", "unknown_name"]

# classes every environment has (Puppet creates them): `include settings` is valid anywhere
ALWAYS_CLASSES = frozenset({"settings", "main"})

# a finding's kind (what `unknown_name` is asked about) -> the code of its finding
_CODES = {
    "class": "DEEP_UNKNOWN_CLASS",
    "declared_class": "DEEP_UNKNOWN_DECLARED_CLASS",
    "resource_type": "DEEP_UNKNOWN_RESOURCE_TYPE",
    "function": "DEEP_UNKNOWN_FUNCTION",
}


def edit_distance(a: str, b: str, limit: int) -> int:
    """Levenshtein distance of ``a`` and ``b``, or ``limit + 1`` as soon as it exceeds ``limit``."""
    if abs(len(a) - len(b)) > limit:
        return limit + 1
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        for j, cb in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb)))
        if min(cur) > limit:
            return limit + 1
        prev = cur
    return prev[-1]


def suggestions(name: str, candidates: Iterable[str], limit: int = 3) -> list[str]:
    """The names among ``candidates`` within a small edit distance of ``name`` (a third of its length,
    at least 1, at most 3), closest first."""
    key = key_of(name)
    most = max(1, min(3, len(key) // 3))
    scored = []
    for c in candidates:
        if c == key:
            continue
        d = edit_distance(key, c, most)
        if d <= most:
            scored.append((d, c))
    scored.sort()
    return [c for _, c in scored[:limit]]


def missing_module(name: str, answers: Answers) -> str | None:
    """The module ``name`` would be autoloaded from, when that module is not on the module path."""
    key = key_of(name)
    module = key.split("::", 1)[0]
    if not module or answers.module_present(module) is not False:
        return None
    return module


def unknown_name(
    kind: str, name: str, path: str, offset: int, length: int, answers: Answers, complete: bool
) -> Finding | None:
    """The finding for a ``kind`` name (class, resource_type, function) that exists nowhere: a note
    naming its module when that module is missing from the module path (the caller keeps one per
    module), else the unknown-name error with did-you-mean suggestions.  ``complete`` False (the
    index is not built yet): None."""
    if not complete:
        return None
    module = missing_module(name, answers)
    if module is not None and kind not in ("class", "declared_class") and "::" not in key_of(name):
        module = None  # an unqualified function or Ruby type is no module's by its name
    if module is None and kind not in ("class", "declared_class") and "::" not in key_of(name):
        missing = answers.missing_dependencies(path)
        if missing:  # it may come from a dependency that is not there
            module = missing[0]
    if module is not None:
        return make("DEEP_MISSING_MODULE", path, offset, length, {"module": module}, module=module)
    shown = key_of(name)
    near = suggestions(shown, answers.names_of("class" if kind == "declared_class" else kind))
    code = _CODES[kind]
    if kind == "resource_type":
        near = sorted(set(near) | set(suggestions(shown, answers.names_of("define"))))
        shown = name.lstrip(":")
    return make(code, path, offset, length, {"suggestions": near, "name": shown}, name=shown)

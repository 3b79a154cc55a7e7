"""Rename planning and call hierarchy over the reference index (no pygls imports).

A rename is planned as plain data (:class:`Plan`: text edits per file, then file moves) that the
language server turns into a ``WorkspaceEdit`` and the tests apply to disk.  Renaming a class,
defined type, function or type alias that lives in a module moves its file to where Puppet's
autoloader looks for the new name; the module-location rule that decides it is the validator's
(:func:`puppet_xpp.grammar.validator.namespace_for_file`), so a renamed module validates clean.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from puppet_xpp.server.analysis import tables
from puppet_xpp.server.analysis.references import COMPUTED, Owner, Position, Ref, RefIndex, RefKey, norm

# the module path a definition's file is checked against, per file (the rename's caller knows it)
ModulepathOf = Callable[[str], Iterable[str] | None]
# one text edit: (start, end, new text) in LSP positions
TextEdit = tuple[Position, Position, str]

_NAME = re.compile(r"^(?:::)?[a-z][a-z0-9_]*(?:::[a-z][a-z0-9_]*)*$")
_VAR = re.compile(r"^[a-z_][a-z0-9_]*$")
# variables Puppet sets itself: renaming them would change meaning, not names
RESERVED_VARS = frozenset(("facts", "trusted", "server_facts", "title", "name", "module_name", "settings"))
# where the autoloader looks for each kind of definition, inside a module
KIND_DIRS = {
    "class": "manifests",
    "define": "manifests",
    "function": "functions",
    "type": "types",
    "plan": "plans",
}
RENAMEABLE = ("class", "type", "function", "var", "lvar")


class RenameError(Exception):
    """A rename that cannot be done safely: the message says why (shown to the user)."""


@dataclass
class Plan:
    edits: dict[str, list[TextEdit]] = field(default_factory=dict)  # path -> edits
    moves: list[tuple[str, str]] = field(default_factory=list)  # [(old path, new path)]
    what: str = ""
    # places computing a name where this one may be meant (include $x, "${prefix}::x"): not edited,
    # listed to the user so nothing is skipped silently
    computed: list[Ref] = field(default_factory=list)

    def computed_note(self, limit: int = 10) -> str | None:
        """The message that lists :attr:`computed` (None when there is none)."""
        if not self.computed:
            return None
        places = [f"{r.path}:{r.start[0] + 1}:{r.start[1] + 1}: {r.text}" for r in self.computed[:limit]]
        more = len(self.computed) - limit
        tail = f"; and {more} more" if more > 0 else ""
        n = len(self.computed)
        return (
            f"{self.what}: {n} computed name{'s' * (n != 1)} may name it and {'were' if n != 1 else 'was'}"
            f" not edited (check {'them' if n != 1 else 'it'}): " + "; ".join(places) + tail
        )

    def add(self, path: str, start: Position, end: Position, text: str) -> None:
        lst = self.edits.setdefault(path, [])
        if (start, end, text) not in lst:
            lst.append((start, end, text))


def _cased(new: str, like: str) -> str:
    """``new`` spelled the way ``like`` is: ``Foo::Bar`` for a type reference, else lower case."""
    if like[:1].isupper():
        return "::".join(s[:1].upper() + s[1:] for s in new.split("::"))
    return new


def target_range(ref: Ref) -> tuple[Position, Position]:
    """The part of a reference a rename replaces: the last segment of a variable, the whole name else."""
    if ref.key[0] in ("var", "lvar"):
        last = ref.text.rpartition("::")[2]
        return (ref.end[0], ref.end[1] - len(last)), ref.end
    return ref.start, ref.end


def check_renameable(index: RefIndex, ref: Ref) -> list[Ref]:
    """The definitions of the name under the cursor, or RenameError."""
    kind = ref.key[0]
    if kind not in RENAMEABLE:
        raise RenameError(f"{ref.text!r} cannot be renamed")
    if kind in ("var", "lvar"):
        last = ref.text.rpartition("::")[2]
        if last in RESERVED_VARS or last.isdigit():
            raise RenameError(f"${last} is set by Puppet and cannot be renamed")
    defs = declarations(index, ref.key)
    if not defs:
        raise RenameError(f"{ref.text!r} is not defined in the workspace (built-in or unknown): not renamed")
    return defs


def declarations(index: RefIndex, key: RefKey) -> list[Ref]:
    """Where ``key`` is defined: the definition, or for a variable with none (a local or body
    variable: no parameter) its assignments in Puppet code (a Hiera key defines no variable)."""
    defs = index.defs(key)
    if defs or key[0] not in ("var", "lvar"):
        return defs
    writes = [r for r in index.refs(key) if r.role == "write" and r.path.endswith(".pp")]
    if key[0] == "lvar":
        return writes
    # ("var", "owner::x"): assignments inside that class/define (``x => ...`` in a resource body is a
    # parameter's value, no definition); ("var", "::x"): assignments at top level
    scope = key[1].rpartition("::")[0]
    owners = {("class", scope), ("type", scope)} if scope else {None}
    return [r for r in writes if r.owner in owners]


def plan_rename(
    index: RefIndex,
    ref: Ref,
    new_name: str,
    modulepath_of: ModulepathOf,
    can_move_files: bool = True,
    can_leave_module: bool = False,
) -> Plan:
    """Every edit (and file move) that renames what ``ref`` refers to, or RenameError.

    ``modulepath_of(path)`` gives the module path a definition's file is checked against."""
    defs = check_renameable(index, ref)
    if ref.key[0] in ("var", "lvar"):
        return _plan_var(index, ref, defs, new_name)
    return _plan_definition(index, ref, defs, new_name, modulepath_of, can_move_files, can_leave_module)


def _plan_var(index: RefIndex, ref: Ref, defs: list[Ref], new_name: str) -> Plan:
    new = new_name.lstrip("$")
    if not _VAR.match(new):
        raise RenameError(
            f"${new} is not a valid parameter or variable name (lower case letter or _, then \\w)"
        )
    if new in RESERVED_VARS:
        raise RenameError(f"${new} is reserved by Puppet")
    key = ref.key
    new_key: RefKey
    if len(key) == 4:  # ("lvar", path, scope offset, name)
        new_key = (key[0], key[1], key[2], new)
    else:
        owner = key[1].rpartition("::")[0]
        new_key = ("var", f"{owner}::{new}" if owner else f"::{new}")
    if new_key != key and declarations(index, new_key):
        raise RenameError(f"${new} already exists there: not renamed")
    plan = Plan(what=f"${key[-1].rpartition('::')[2]} -> ${new}")
    for r in index.refs(key):
        s, e = target_range(r)
        plan.add(r.path, s, e, new)
    return plan


def _plan_definition(
    index: RefIndex,
    ref: Ref,
    defs: list[Ref],
    new_name: str,
    modulepath_of: ModulepathOf,
    can_move_files: bool,
    can_leave_module: bool,
) -> Plan:
    kind = ref.key[0]
    old = ref.key[1]
    new = norm(new_name)
    if not _NAME.match(new.lower()) or any(seg in tables.KEYWORDS for seg in new.lower().split("::")):
        raise RenameError(
            f"{new_name!r} is not a valid {kind} name (segments: a lower case letter, then a-z 0-9 _)"
        )
    new = new.lower()
    if new == old:
        raise RenameError(f"{new_name!r} is the current name")
    taken_keys: list[RefKey] = [("class", new), ("type", new)] if kind in ("class", "type") else [(kind, new)]
    for k in taken_keys:
        if index.defs(k):
            d = index.defs(k)[0]
            raise RenameError(f"{new} is already defined ({d.path}:{d.start[0] + 1}): not renamed")
    if len(defs) > 1:
        raise RenameError(f"{old} is defined {len(defs)} times in the workspace: fix that first")
    d = defs[0]
    plan = Plan(what=f"{old} -> {new}")
    move = _autoload_move(index, d, kind, old, new, modulepath_of, can_leave_module)
    if move is not None:
        if not can_move_files:
            raise RenameError(
                f"renaming {old} moves {move[0]} to {move[1]}, and this client cannot rename files: not renamed"
            )
        plan.moves.append(move)
    for r in index.refs(ref.key):
        plan.add(r.path, r.start, r.end, _cased(new, r.text))
    plan.computed = computed_names(index, kind, old)
    if kind == "class":  # $old::x and Hiera keys old::x
        for r in index.refs(("varprefix", old)):
            n = len(old)
            plan.add(r.path, r.start, (r.start[0], r.start[1] + n), _cased(new, r.text))
    return plan


_INTERPOLATION = re.compile(r"\$\{[^}]*\}|\$(?:::)?[a-z_][a-z0-9_]*(?:::[a-z0-9_]+)*", re.I)


def computed_names(index: RefIndex, kind: str, name: str) -> list[Ref]:
    """The places computing a class (``kind`` "class") or type ("type") name that may be ``name``: a
    variable or call may be anything; a string with interpolations only when its literal parts fit."""
    whats = {"class": ("class", "any"), "type": ("type", "any")}.get(kind, ())
    out = [r for w in whats for r in index.refs((COMPUTED, w)) if _could_name(r.text, name)]
    return sorted(out, key=lambda r: (r.path, r.start))


def _could_name(text: str, name: str) -> bool:
    if text[:1] != '"' or text[-1:] != '"':
        return True
    parts = _INTERPOLATION.split(text[1:-1])
    pattern = "(?:::)?" + ".*".join(re.escape(p) for p in parts)
    return re.fullmatch(pattern, name, re.I | re.S) is not None


def _autoload_move(
    index: RefIndex,
    d: Ref,
    kind: str,
    old: str,
    new: str,
    modulepath_of: ModulepathOf,
    can_leave_module: bool,
) -> tuple[str, str] | None:
    """(old path, new path) when the definition's file must move for the autoloader, None when it can
    stay, RenameError when no safe place exists."""
    from puppet_xpp.grammar.validator import BAD_MODULE_FILE, NO_NAMESPACE, namespace_for_file
    from puppet_xpp.xpp.environment import file_context, infer_module, inferred_namespace

    mp = tuple(modulepath_of(d.path) or ())
    old_mod, new_mod = old.split("::")[0], new.split("::")[0]
    # a module checked out on its own (``puppet-ntp/`` with metadata.json naming ``ntp``) is judged by the
    # environment model's rule, as Puppet judges it installed under its name; else by the module path
    inferred = infer_module(d.path) if file_context(d.path).namespace is not None else None
    if inferred is not None:
        ns = inferred_namespace(d.path, inferred)
        if ns == NO_NAMESPACE:
            return None  # examples/, tests/...: taken only as an initial manifest, never autoloaded
        if new_mod != old_mod:
            raise RenameError(
                f"{new} is in module {new_mod!r}, not {old_mod!r}: renaming out of a module checked out "
                "on its own is refused"
            )
        module_root = inferred.root
    else:
        ns = namespace_for_file(d.path, mp)
        if ns in (NO_NAMESPACE, BAD_MODULE_FILE):
            return None  # not autoloaded (site manifest, outside the module path): nothing to move
        mod_parent = _module_parent(d.path, mp)
        if new_mod != old_mod:
            if not can_leave_module:
                raise RenameError(
                    f"{new} is in module {new_mod!r}, not {old_mod!r}: renaming out of the module is refused"
                )
            if not os.path.isdir(os.path.join(mod_parent, new_mod)):
                raise RenameError(f"module {new_mod!r} does not exist next to {old_mod!r}: not renamed")
        module_root = os.path.join(mod_parent, new_mod)
    if ns != old and new.startswith(ns):
        return None  # e.g. a nested definition in a file whose namespace still covers the new name
    if ns != old:
        raise RenameError(f"{old} is not in its autoload file ({d.path}): move it there first")
    others = [
        r.key[1]
        for r in index.file_refs(d.path)
        if r.role == "def" and r.key[0] in ("class", "type", "function", "plan") and r.key[1] != old
    ]
    if others:
        raise RenameError(f"{d.path} also defines {', '.join(sorted(set(others)))}: split the file first")
    k = "define" if kind == "type" and not d.text[:1].isupper() else kind
    target = autoload_path(module_root, k, new)
    if target is None:
        raise RenameError(f"a {k} cannot be named {new} (no file the autoloader would load)")
    if os.path.exists(target):
        raise RenameError(f"{target} already exists: not renamed")
    return d.path, target


def _module_parent(path: str, modulepath: Iterable[str]) -> str:
    a = os.path.abspath(path)
    for p in modulepath:
        pre = os.path.normpath(os.path.abspath(os.path.expanduser(str(p)))) + os.sep
        if a.startswith(pre):
            return pre.rstrip(os.sep)
    return os.path.dirname(os.path.dirname(os.path.dirname(a)))


def autoload_path(module_root: str, kind: str, name: str) -> str | None:
    """The file Puppet's autoloader reads for ``name`` of ``kind`` in the module at ``module_root`` (the
    inverse of namespace_for_file)."""
    segs = name.lower().split("::")
    sub = KIND_DIRS.get(kind)
    if sub is None:
        return None
    base = os.path.join(module_root, sub)
    if len(segs) == 1:
        return os.path.join(base, "init.pp") if sub == "manifests" else None
    return os.path.join(base, *segs[1:-1], segs[-1] + ".pp")


# ----------------------------------------------------------------------------------------------- call hierarchy

CALLABLE = ("class", "type", "function", "plan")


def incoming(index: RefIndex, key: RefKey) -> dict[Owner, list[Ref]]:
    """owner -> [refs of ``key`` inside it] (top-level code of a file: owner ("file", path))."""
    out: dict[Owner, list[Ref]] = {}
    for r in index.refs(key):
        if r.role == "def":
            continue
        owner = r.owner if r.owner is not None else ("file", r.path)
        out.setdefault(owner, []).append(r)
    return out


def outgoing(index: RefIndex, key: Owner) -> dict[RefKey, list[Ref]]:
    """callee key -> [refs inside ``key``'s definition] (classes, defined types, functions that are
    defined in the workspace)."""
    out: dict[RefKey, list[Ref]] = {}
    for r in index.owned_by(key):
        if r.role == "def" or r.key[0] not in CALLABLE or r.key == key:
            continue
        out.setdefault(r.key, []).append(r)
    return {k: v for k, v in out.items() if index.defs(k)}

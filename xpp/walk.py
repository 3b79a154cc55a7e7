"""The one directory walk: which files below a directory ``--validate``, ``--lint``, ``--compile`` and
the language server's workspace index look at.

What is skipped (:class:`Ignores`), as a Puppet developer's tools skip it:

* PDK's default ignores (:data:`PDK_IGNORED`: what ``pdk validate`` and ``pdk build`` leave out of a
  module or control repository -- its ``DEFAULT_IGNORED`` list and the ignores of its module template's
  ``.pdkignore`` that name build, test and tool output: ``/pkg/``, ``/spec/fixtures/``, ``/vendor/``,
  ``/.bundle/``, ``/coverage/``, ``/log/``, ``/junit/``, ``/tmp/``...), plus hidden entries (``.*``:
  ``.git/``, ``.xpp/``, editor files), which PDK's validators skip too.  They are anchored at every
  module root (a directory with ``metadata.json``), environment root (``environment.conf``) and at the
  directory walked, so ``site-modules/x/spec/fixtures/`` is skipped in a control repository as
  ``spec/fixtures/`` is in a module.
* the patterns of each ``.pdkignore`` and ``.gitignore`` met on the way (and in the directories above
  the one walked, up to the repository's root), relative to the directory holding the file, with
  gitignore's rules (``pathspec``: negation, ``**``, anchoring, directory-only patterns);
* the caller's patterns (``--exclude``, the project configuration's ``exclude``:
  :mod:`xpp.project`), gitignore-style, relative to the directory they belong to.

A file the user names is never skipped: only what a walk finds is filtered.
"""

from __future__ import annotations

import functools
import os
import re
import sys
from collections.abc import Callable, Container, Iterable, Iterator
from dataclasses import dataclass, field

from puppet_xpp.xpp.sources import read_or_raise


def _import_pathspec() -> None:
    """Import ``pathspec`` without ``typing_extensions`` when nothing has imported that yet.

    pathspec takes its ``@deprecated`` decorator from typing_extensions when it is installed, and that
    decorator imports ``asyncio`` (to tell coroutine functions) for each function it wraps: 20-50 ms of
    every cold ``--compile``/``--validate`` process, a third of its imports, for a decorator on functions
    the walk never calls.  Without typing_extensions pathspec uses its own equivalent (its documented
    fallback for a zero-dependency install), which matches the same patterns.  The module is hidden
    (``sys.modules`` entry ``None``: an import of it raises ImportError) only for the duration of this
    import, and only when it is not loaded already (then there is nothing to save)."""
    if "typing_extensions" in sys.modules or "pathspec" in sys.modules:
        import pathspec  # noqa: F401

        return
    sys.modules["typing_extensions"] = None  # type: ignore[assignment]
    try:
        import pathspec  # noqa: F401
    finally:
        if sys.modules.get("typing_extensions", 0) is None:
            del sys.modules["typing_extensions"]


_import_pathspec()
import pathspec  # noqa: E402  (imported above, without typing_extensions)

__all__ = ["PDK_IGNORED", "IGNORE_FILES", "Ignores", "Found", "Probe", "reached", "walk"]

# PDK's DEFAULT_IGNORED (lib/pdk/module.rb, control_repo.rb) and the template .pdkignore's entries for
# build, test and tool output; '.*' is PDK's dotfile rule for validators
PDK_IGNORED = (
    "/pkg/",
    "~*",
    "/coverage/",
    "/checksums.json",
    "/REVISION",
    "/spec/fixtures/",
    "/vendor/",
    "/.vendor/",
    "/.bundle/",
    "/.git/",
    "/log/",
    "/junit/",
    "/tmp/",
    ".DS_Store",
    ".*",
)
IGNORE_FILES = (".pdkignore", ".gitignore")  # gitignore-style pattern files honoured where found
_ROOT_MARKERS = ("metadata.json", "environment.conf")  # with .git: where PDK's defaults are anchored


@functools.lru_cache(maxsize=256)
def _spec(lines: tuple[str, ...]) -> pathspec.GitIgnoreSpec:
    """The compiled patterns of ``lines`` (a spec matches paths relative to its layer's directory, so
    one compilation serves every directory with the same lines: PDK's defaults at each module root)."""
    return pathspec.GitIgnoreSpec.from_lines(lines)


_DIR_MARK = "(?P<ps_d>"  # the named group pathspec's gitignore patterns mark a directory match with


@functools.lru_cache(maxsize=256)
def _any_of(lines: tuple[str, ...]) -> re.Pattern[str] | None:
    """One regular expression matching what any pattern of ``lines`` matches, when none of them is a
    negation (``!pattern``), else None.  Then gitignore's rules (the last matching pattern decides, a
    directory match ranks below a file match) can only say "skip" or nothing, and one search answers
    for all of them: PDK's fifteen defaults were fifteen searches for every file and directory of a
    module (a third of ``--compile``'s planning)."""
    parts: list[str] = []
    flags = None
    for pattern in _spec(lines).patterns:
        regex = getattr(pattern, "regex", None)
        if pattern.include is None or regex is None:
            continue  # (a comment or blank line: matches nothing)
        source = regex.pattern
        if not pattern.include or not isinstance(source, str) or flags not in (None, regex.flags):
            return None
        flags = regex.flags
        source = source.replace(_DIR_MARK, "(?:")
        if "(?P" in source:  # another named group (or a reference to one): not merged
            return None
        parts.append(f"(?:{source})")
    if not parts or flags is None:
        return None
    return re.compile("|".join(parts), flags)


@dataclass
class _Layer:
    base: str  # patterns are relative to this directory
    spec: pathspec.GitIgnoreSpec
    final: bool = False  # the caller's patterns: a match skips, whatever a pattern file says
    any_of: re.Pattern[str] | None = None  # _any_of: the spec's patterns as one search, when it can be


@dataclass
class Ignores:
    """What a walk skips: layers of gitignore-style patterns, each relative to its own directory."""

    layers: list[_Layer] = field(default_factory=list)

    def add(self, base: str, patterns: Iterable[str], *, final: bool = False) -> None:
        lines = tuple(p for p in patterns if p.strip())
        if lines:
            self.layers.append(_Layer(os.path.abspath(base), _spec(lines), final, _any_of(lines)))

    def add_directory(
        self,
        directory: str,
        *,
        anchor_defaults: bool = False,
        names: Container[str] | None = None,
        probe: Probe | None = None,
    ) -> None:
        """The layers a directory brings: PDK's defaults when it is a module, environment or
        repository root (or ``anchor_defaults``), its ``.pdkignore``/``.gitignore``.  ``names``: the
        directory's entries when the caller listed them already (no further look-ups); ``probe``: the
        look-ups of the walks of one moment (:class:`Probe`).  An unreadable pattern file counts as
        empty (it is the user's file: the walk goes on)."""
        is_root = probe.is_root(directory) if probe is not None and names is None else None
        if anchor_defaults or (is_root if is_root is not None else _is_root(directory, names)):
            self.add(directory, PDK_IGNORED)
        for name in IGNORE_FILES:
            if names is not None and name not in names:
                continue
            path = os.path.join(directory, name)
            if probe.is_file(path) if probe is not None else os.path.isfile(path):
                try:
                    self.add(directory, read_or_raise(path).decode("utf-8", "replace").splitlines())
                except OSError:
                    pass

    def ignored(self, path: str, is_dir: bool) -> bool:
        """Whether ``path`` (absolute) is skipped.  As git decides: of the layers whose directory holds
        it, the deepest one with a matching pattern decides (a ``!pattern`` there re-includes what a
        parent's pattern excluded); a caller's pattern that matches always skips."""
        decision = False
        for layer in self.layers:
            prefix = layer.base.rstrip(os.sep) + os.sep
            if not path.startswith(prefix):
                continue
            rel = path[len(prefix) :].replace(os.sep, "/")
            if is_dir:
                rel += "/"
            if layer.any_of is not None:
                include = True if layer.any_of.search(rel) else None
            else:
                include = layer.spec.check_file(rel).include
            if include is None:
                continue
            if layer.final and include:
                return True
            if not layer.final:
                decision = include
        return decision

    def copy(self) -> Ignores:
        return Ignores(list(self.layers))


def _is_root(directory: str, names: Container[str] | None = None, probe: Probe | None = None) -> bool:
    """A module, environment or repository root: where PDK's defaults are anchored (``names``: the
    directory's entries, when listed already; ``probe``: the look-ups of the walks of one moment)."""
    if names is not None and ".git" not in names and not any(m in names for m in _ROOT_MARKERS):
        return False
    exists = probe.exists if probe is not None else os.path.exists
    is_file = probe.is_file if probe is not None else os.path.isfile
    if exists(os.path.join(directory, ".git")):
        return True
    return any(is_file(os.path.join(directory, m)) for m in _ROOT_MARKERS)


class Probe:
    """The look-ups of the directories above the tops of several walks made at one moment (whether a
    directory holds ``.git``, is a module, environment or repository root, holds a pattern file), each
    made once: ``--compile``'s plan walks up to four directories of each of a hundred modules, whose
    ancestors are mostly the same directories (each walk looked at each of them again, a sixth of the
    plan).  For the walks of one moment only: the answers are not looked at again."""

    def __init__(self) -> None:
        self.known: dict[tuple[str, str], bool] = {}
        # directories the caller listed: entry name -> (exists, is a file), both with links followed
        self.listed: dict[str, dict[str, tuple[bool, bool]]] = {}

    def _look(self, kind: str, path: str, look: Callable[[str], bool]) -> bool:
        key = (kind, path)
        found = self.known.get(key)
        if found is None:
            found = self.known[key] = look(path)
        return found

    def listing(self, directory: str, entries: Iterable[os.DirEntry[str]]) -> None:
        """What the caller's ``os.scandir`` of ``directory`` found: the look-ups of paths in it are
        answered from it (``--compile``'s plan lists each module directory once, where each walk's
        look-ups above its top were six ``stat`` calls there)."""
        kinds: dict[str, tuple[bool, bool]] = {}
        for entry in entries:
            try:
                is_file = entry.is_file()
                exists = is_file or entry.is_dir() or not entry.is_symlink() or os.path.exists(entry.path)
            except OSError:
                continue  # (looked up again if asked: as if not listed)
            kinds[entry.name] = (exists, is_file)
        self.listed[os.path.normpath(directory)] = kinds

    def _listed(self, path: str) -> tuple[bool, bool] | None:
        directory, name = os.path.split(path)
        kinds = self.listed.get(directory)
        if kinds is None:
            return None
        return kinds.get(name, (False, False))

    def exists(self, path: str) -> bool:
        found = self._listed(path)
        return found[0] if found is not None else self._look("exists", path, os.path.exists)

    def is_file(self, path: str) -> bool:
        found = self._listed(path)
        return found[1] if found is not None else self._look("file", path, os.path.isfile)

    def is_root(self, directory: str) -> bool:
        return self._look("root", directory, lambda d: _is_root(d, probe=self))


def _ancestors(top: str, probe: Probe) -> list[str]:
    """The directories above ``top`` whose patterns apply below it, outermost first: up to its
    repository's root (the nearest holding ``.git``), else up to the nearest module or environment
    root; none when there is neither."""
    out: list[str] = []
    root_at = None
    d = os.path.dirname(top)
    for _ in range(64):
        out.append(d)
        if probe.exists(os.path.join(d, ".git")):
            return list(reversed(out))
        if root_at is None and probe.is_root(d):
            root_at = len(out)
        parent = os.path.dirname(d)
        if parent == d:
            break
        d = parent
    return list(reversed(out[:root_at])) if root_at is not None else []


@dataclass(frozen=True)
class Found:
    """One entry of a walk: a file (``problem`` None) or an entry that cannot be used and why."""

    path: str
    problem: str | None = None


def walk(
    top: str,
    suffixes: tuple[str, ...],
    *,
    exclude: Iterable[tuple[str, str]] = (),
    skip_dirs: Iterable[str] = (),
    follow_links: bool = True,
    files_first: bool = False,
    problems: bool = False,
    seen: set[tuple[int, int]] | None = None,
    probe: Probe | None = None,
) -> Iterator[Found]:
    """Files below ``top`` whose name ends with one of ``suffixes``, in sorted order (a subdirectory's
    files in its place, or after the directory's own files with ``files_first``), each directory once.

    ``exclude``: (directory, pattern) pairs -- gitignore-style patterns relative to their directory;
    ``skip_dirs``: absolute directories not entered (``--compile``'s module path entries);
    ``follow_links``: enter symbolic links to directories; ``problems``: also yield the entries that
    cannot be used (unreadable directory, broken link) with the reason; ``seen``: the directories
    walked already (device, inode), shared by the walks of several roots so that each is walked once;
    ``probe``: the look-ups of the directories above ``top`` (:class:`Probe`), shared by the walks of one
    moment."""
    top = os.path.abspath(top)
    ignores, anchor = _initial(top, exclude, probe or Probe())
    skip = {os.path.abspath(d) for d in skip_dirs}
    if seen is None:
        seen = set()
    yield from _walk_dir(top, suffixes, ignores, skip, seen, follow_links, files_first, problems, anchor)


def _initial(top: str, exclude: Iterable[tuple[str, str]], probe: Probe) -> tuple[Ignores, bool]:
    """The layers that apply from above ``top`` (its ancestors' pattern files, the caller's
    patterns), and whether PDK's defaults are anchored at ``top`` itself."""
    ignores = Ignores()
    ancestors = _ancestors(top, probe)
    for ancestor in ancestors:
        ignores.add_directory(ancestor, probe=probe)
    by_base: dict[str, list[str]] = {}
    for base, pattern in exclude:
        by_base.setdefault(os.path.abspath(base), []).append(pattern)
    for base, patterns in by_base.items():
        ignores.add(base, patterns, final=True)
    # a directory the caller names is walked even when a pattern above it ignores it (as a file named
    # on the command line is read): the layers that would skip it are dropped
    ignores.layers = [layer for layer in ignores.layers if not Ignores([layer]).ignored(top, True)]
    # PDK's defaults are anchored at the walk's directory too when no module, environment or
    # repository root holds it (a directory of loose manifests)
    return ignores, not any(probe.is_root(d) for d in [*ancestors, top])


def reached(path: str, top: str, *, exclude: Iterable[tuple[str, str]] = ()) -> bool:
    """Whether :func:`walk` from ``top`` would keep ``path`` (a file below it) as far as what it skips
    goes: the one-file form of the walk's rules (``--compile``'s ``.xpp`` on save)."""
    top = os.path.abspath(top)
    path = os.path.abspath(path)
    if not path.startswith(top.rstrip(os.sep) + os.sep):
        return False
    ignores, anchor = _initial(top, exclude, Probe())
    directory = top
    parts = path[len(top.rstrip(os.sep)) + 1 :].split(os.sep)
    for i, part in enumerate(parts):
        ignores.add_directory(directory, anchor_defaults=anchor and directory == top)
        child = os.path.join(directory, part)
        if ignores.ignored(child, i < len(parts) - 1):
            return False
        directory = child
    return True


def _walk_dir(
    directory: str,
    suffixes: tuple[str, ...],
    ignores: Ignores,
    skip: set[str],
    seen: set[tuple[int, int]],
    follow_links: bool,
    files_first: bool,
    problems: bool,
    anchor_defaults: bool = False,
) -> Iterator[Found]:
    try:
        st = os.stat(directory)
        key = (st.st_dev, st.st_ino)
        if key in seen:  # a symlink cycle, or a directory reached twice through links
            return
        seen.add(key)
        entries = sorted(os.scandir(directory), key=lambda e: e.name)
    except OSError as e:
        if problems:
            yield Found(directory, f"cannot read directory: {e.strerror}")
        return
    layers = ignores.copy()
    layers.add_directory(directory, anchor_defaults=anchor_defaults, names={e.name for e in entries})
    later: list[str] = []
    for entry in entries:
        path = entry.path
        try:
            is_dir = entry.is_dir(follow_symlinks=follow_links)
        except OSError:
            is_dir = False
        if not is_dir and not entry.name.endswith(suffixes):
            continue  # (before the patterns: most entries of a module are not asked for)
        if layers.ignored(path, is_dir):
            continue
        if is_dir:
            if path in skip:
                continue
            if files_first:
                later.append(path)
            else:
                yield from _walk_dir(path, suffixes, layers, skip, seen, follow_links, files_first, problems)
            continue
        if not entry.name.endswith(suffixes):
            continue
        if problems and entry.is_symlink() and not os.path.exists(path):
            yield Found(path, "broken symbolic link")
            continue
        yield Found(path)  # (a broken link, when problems are not asked: its reader says why)
    for path in later:
        yield from _walk_dir(path, suffixes, layers, skip, seen, follow_links, files_first, problems)

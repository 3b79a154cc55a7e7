"""The persistent workspace index cache (issue 31, item 2): what indexing a file produced (its
:class:`Sym` entries and, for a manifest, its references) kept between starts of the language server,
so a second start on the same workspace parses only the files that changed.

Where: one file per workspace (its roots) in ``$PUPPET_XPP_INDEX_CACHE`` when set to a directory
(``off``, ``none``, ``0`` or ``false``: no cache), else ``$XDG_CACHE_HOME/puppet-xpp/index/``, else
``~/.cache/puppet-xpp/index/``.  The directory is made 0700 and must be ours; it is opened without
following a link, and the cache file is opened and replaced relative to it, never through a link
(:func:`xpp.compile.writes.replace_at`: temporary file + rename, 0600), so two servers on one workspace
leave the last writer's complete file and a reader never sees half of one.  Each save removes the
caches of workspaces gone or not indexed for 30 days (:func:`prune`).

What is trusted: a file's entry when its (size, mtime_ns) equal those recorded, else when the digest
of its bytes equals the one recorded (then the file is indexed from those very bytes otherwise).  An
entry recorded within :data:`RACY_NS` of the file's modification is checked by digest even when the
stat matches (a rewrite within the file system's timestamp granularity keeps the stat).  The whole
cache is ignored -- and rebuilt by the next indexing -- when its header is not ours (format, schema,
puppet-xpp version, a fingerprint of the indexing code, the roots), when its body's digest differs
from the header's (damaged, truncated) or when any record does not decode to the expected types:
never a crash, never an answer from a doubtful record.  Resource type files (``lib/puppet/type/``)
are also checked against the providers directory they depend on (:func:`depends`)."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import marshal
import os
import stat
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from puppet_xpp.grammar.gcpause import paused
from puppet_xpp.server.analysis.index import ParsedHook, index_data
from puppet_xpp.server.analysis.references import Ref, RefIndex, encode_refs
from puppet_xpp.server.analysis.symbols import Attr, Param, Signature, Sym

FORMAT = "puppet-xpp-index-cache"
SCHEMA = 3  # bump when what is recorded, or how, changes
ENV = "PUPPET_XPP_INDEX_CACHE"
# an entry recorded this soon after its file's modification is checked by digest at the next start
RACY_NS = 2_000_000_000
# a workspace's cache not written for this long (seconds) is removed by the next save of any
KEEP_S = 30 * 24 * 3600
# the modules whose code decides what is recorded: a change of any (an editable install) voids the cache
# (and every file of the grammar package's own directory: the lexer, the parser, its tables, an accelerator)
PRODUCERS = (
    "puppet_xpp.server.analysis.index",
    "puppet_xpp.server.analysis.index_cache",
    "puppet_xpp.server.analysis.ruby_index",
    "puppet_xpp.server.analysis.ruby_mixins",
    "puppet_xpp.server.analysis.references",
    "puppet_xpp.server.analysis.features",
    "puppet_xpp.server.analysis.symbols",
)


def cache_dir() -> str | None:
    """The directory of the index caches, None when turned off (``PUPPET_XPP_INDEX_CACHE``)."""
    from puppet_xpp import env_cache_dir

    return env_cache_dir(ENV, "index")


def fingerprint() -> str:
    """puppet-xpp's version and the size and modification time of the indexing code's modules (and the
    Ruby grammar's version): a cache written by another build is foreign."""
    from importlib import metadata

    parts = [f"python={sys.version}", f"marshal={marshal.version}"]
    for dist in ("puppet-xpp", "tree-sitter", "tree-sitter-ruby"):
        try:
            parts.append(f"{dist}={metadata.version(dist)}")
        except metadata.PackageNotFoundError:
            parts.append(f"{dist}=?")
    files = []
    for name in PRODUCERS:
        spec = importlib.util.find_spec(name)
        files.append((spec.origin if spec is not None else None) or name)
    grammar = importlib.util.find_spec("puppet_xpp.grammar")
    for d in (grammar.submodule_search_locations or []) if grammar is not None else []:
        try:
            with os.scandir(d) as it:
                files.extend(sorted(e.path for e in it if e.is_file()))
        except OSError:
            files.append(d)
    for f in files:
        try:
            st = os.stat(f)
            parts.append(f"{f}:{st.st_size}:{st.st_mtime_ns}")
        except OSError:
            parts.append(f"{f}:?")
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


def digest(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=20).hexdigest()


def depends(path: str) -> str:
    """What else a file's entries depend on ("" for most files).  A resource type's
    (``lib/puppet/type/``) gain a ``provider`` parameter when ``lib/puppet/provider/<type>/`` holds Ruby
    files (server/analysis/ruby_index.py): the modification times of that providers directory and of
    its subdirectories stand for it (adding or removing a provider file changes its directory's)."""
    if "/lib/puppet/type/" not in path.replace(os.sep, "/"):
        return ""
    d = os.path.join(os.path.dirname(os.path.dirname(path)), "provider")
    try:
        parts = [f".:{os.stat(d).st_mtime_ns}"]
        with os.scandir(d) as it:
            for entry in it:
                if entry.is_dir():
                    parts.append(f"{entry.name}:{entry.stat().st_mtime_ns}")
    except OSError:
        parts = ["-"]
    from puppet_xpp.server.analysis.ruby_index import helper_files

    parts.append(helper_files(path))  # the helper files under its lib/ it may follow (puppet_x/, ...)
    return digest("\n".join(sorted(parts)).encode("utf-8", "surrogateescape"))


@dataclass(slots=True)
class Entry:
    """What indexing one file produced, and which bytes it was produced from."""

    size: int
    mtime_ns: int
    digest: str
    racy: bool
    deps: str  # what else the entries depend on (a resource type: its providers directory), see depends()
    syms: list[Sym]
    # None: indexing gave the reference index nothing (a Ruby file, a parse error); bytes: encoded
    # (references.encode_refs: read from the cache, sent by a worker), decoded by the reference index
    # only when a query needs them
    refs: list[Ref] | bytes | None


# ----------------------------------------------------------------------------------------------- encoding
# Records are tuples of str, int, bool and None written with :mod:`marshal` (no code is ever loaded
# from it, unlike pickle; its format is the running Python's, part of the fingerprint).  Decoding
# builds the dataclasses from them; a record of another shape raises (TypeError, ValueError): the
# whole cache is then ignored.  The body's digest in the header catches damage before any of this.


class Foreign(ValueError):
    """A cache that is not what this version writes."""


def _enc_param(p: Param) -> tuple[Any, ...]:
    return (p.name, p.type, p.default, p.doc, p.kind)


def _enc_sym(s: Sym) -> tuple[Any, ...]:
    return (
        s.name,
        s.kind,
        s.range,
        s.selection,
        s.doc,
        tuple(_enc_param(p) for p in s.params),
        s.signature,
        tuple((tuple(_enc_param(p) for p in g.params), g.return_type, g.line) for g in s.signatures),
        tuple((a.name, a.kind, a.namevar, a.values, a.default, a.type, a.doc, a.line) for a in s.attrs),
        s.origin,
        s.open_attrs,
    )


def _dec_sym(x: tuple[Any, ...], path: str) -> Sym:
    name, kind, rng, sel, doc, params, sig, sigs, attrs, origin, open_attrs = x
    return Sym(
        name,
        kind,
        path,
        rng,
        sel,
        doc,
        [Param(*p) for p in params],
        sig,
        [Signature([Param(*p) for p in ps], rt, line) for ps, rt, line in sigs],
        [Attr(*a) for a in attrs],
        origin,
        bool(open_attrs),
    )


def decode_entry(x: tuple[Any, ...], path: str) -> Entry:
    """An :class:`Entry` of ``path`` from its record (:func:`encode_entry`: the cache file's records, and
    what an indexing worker process sends back, server/analysis/index_pool.py)."""
    size, mtime_ns, dig, racy, deps, syms, refs = x
    if (
        type(size) is not int
        or type(mtime_ns) is not int
        or type(dig) is not str
        or not (refs is None or type(refs) is bytes)
    ):
        raise Foreign("a record of another shape")
    return Entry(size, mtime_ns, dig, bool(racy), deps, [_dec_sym(s, path) for s in syms], refs)


def encode_entry(e: Entry) -> tuple[Any, ...]:
    """The record of an entry: plain tuples, the references one string (references.encode_refs: a
    second start decodes them only when a query needs them); marshal and pickle both carry them."""
    refs = encode_refs(e.refs) if type(e.refs) is list else e.refs
    return (e.size, e.mtime_ns, e.digest, e.racy, e.deps, tuple(_enc_sym(s) for s in e.syms), refs)


def fresh_entry(
    path: str,
    data: bytes,
    st: os.stat_result,
    hooks: Sequence[ParsedHook] = (),
    refs: RefIndex | None = None,
    known: tuple[str, str, bool] | None = None,
) -> Entry:
    """The entry of ``path`` indexed from ``data`` (its bytes, read with the stat ``st``): ``hooks`` get
    the parse; the references recorded are those ``refs`` got from them.  ``known``: the (digest,
    dependencies, racy) already computed."""
    dig, deps, racy = known or (digest(data), depends(path), time.time_ns() - st.st_mtime_ns < RACY_NS)
    before = refs.by_path.get(path) if refs is not None else None
    syms = index_data(path, data, None, hooks)
    got = refs.by_path.get(path) if refs is not None else None
    file_refs = got if got is not None and got is not before else None
    return Entry(st.st_size, st.st_mtime_ns, dig, racy, deps, syms, file_refs)


# ----------------------------------------------------------------------------------------------- the cache


def prune(dfd: int, now: float | None = None) -> None:
    """Remove from the cache directory ``dfd`` the caches of workspaces not indexed for :data:`KEEP_S`
    (a workspace opened once) or whose roots are all gone (a test's temporary directory): regular files
    only, never through a link; only a cache's header line is read."""
    limit = (now if now is not None else time.time()) - KEEP_S
    for name in os.listdir(dfd):
        if not name.endswith(".json"):
            continue
        try:
            fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=dfd)
        except OSError:
            continue
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                continue
            stale = st.st_mtime < limit
            if not stale:
                with os.fdopen(os.dup(fd), "rb") as f:
                    head = f.readline(1 << 20)
                try:
                    header = json.loads(head)
                    roots = header.get("roots") if type(header) is dict else None
                except ValueError:
                    roots = None
                if type(roots) is list and roots:
                    stale = not any(type(r) is str and os.path.isdir(r) for r in roots)
            if stale:
                os.unlink(name, dir_fd=dfd)
        except OSError:
            continue
        finally:
            os.close(fd)


class IndexCache:
    """One workspace's cache: the entries loaded at start (``old``) and those of this indexing
    (``new``, what :meth:`save` writes: a file gone from the workspace leaves the cache)."""

    def __init__(self, roots: Sequence[str], directory: str | None, build: str | None = None) -> None:
        self.roots = [os.path.abspath(r) for r in roots]
        self.directory = directory
        key = hashlib.sha256("\0".join(self.roots).encode("utf-8", "surrogateescape")).hexdigest()[:32]
        self.name = f"{key}.json"
        # (``build``: the fingerprint, when another process of this server computed it just now)
        self.fingerprint = (build if build is not None else fingerprint()) if directory is not None else ""
        self.body_digest = ""  # the loaded body's (its header's, checked), "" when nothing was loaded
        self.old: dict[str, Entry] = {}
        self.new: dict[str, Entry] = {}
        self.hits = 0
        self.misses = 0
        self.ignored = ""  # why the cache found was not used ("" when used or none found)

    @classmethod
    def open(
        cls,
        roots: Sequence[str],
        directory: str | None = None,
        build: str | None = None,
        checked: str = "",
    ) -> IndexCache:
        """The cache of the workspace ``roots`` (in ``directory``, else :func:`cache_dir`), loaded.
        ``build`` and ``checked``: the fingerprint and the body digest another process of this server
        just computed and checked (:func:`survey`): a body whose header names that digest is not
        digested again."""
        cache = cls(roots, directory if directory is not None else cache_dir(), build)
        cache.load(checked)
        return cache

    @property
    def enabled(self) -> bool:
        return self.directory is not None

    def _open_dir(self, create: bool) -> int | None:
        """A descriptor of the cache directory (made 0700 when ``create``), None when it is absent, a
        link, not a directory, or not ours (:func:`puppet_xpp.open_cache_dir`, every cache's rule)."""
        from puppet_xpp import open_cache_dir

        return None if self.directory is None else open_cache_dir(self.directory, create)

    def load(self, checked: str = "") -> None:
        """Read the cache file; anything doubtful leaves ``old`` empty (and says why in ``ignored``)."""
        dfd = self._open_dir(create=False)
        if dfd is None:
            return
        try:
            try:
                fd = os.open(self.name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=dfd)
            except FileNotFoundError:
                return
            except OSError as e:
                self.ignored = f"not readable ({e.strerror})"
                return
            with os.fdopen(fd, "rb") as f:
                if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
                    self.ignored = "not a regular file"
                    return
                data = f.read()
        finally:
            os.close(dfd)
        try:
            # (tens of thousands of records become objects kept for the session, no cycle among them: the
            # collections their allocation would start -- most of the decoding's time -- find nothing)
            with paused():
                self.old = self._decode(data, checked)
        except (ValueError, UnicodeDecodeError, RecursionError) as e:
            self.old = {}
            self.ignored = str(e) or type(e).__name__

    def _decode(self, data: bytes, checked: str = "") -> dict[str, Entry]:
        head, sep, body = data.partition(b"\n")
        if not sep:
            raise Foreign("truncated (no header)")
        header = json.loads(head)
        if type(header) is not dict or header.get("format") != FORMAT:
            raise Foreign("not an index cache")
        if header.get("schema") != SCHEMA or header.get("fingerprint") != self.fingerprint:
            raise Foreign("written by another version of puppet-xpp")
        if header.get("roots") != self.roots:
            raise Foreign("of another workspace")
        named = header.get("digest")
        if not (checked and named == checked) and named != digest(body):
            raise Foreign("damaged (its digest differs)")
        try:
            files = marshal.loads(body)
        except (EOFError, TypeError) as e:
            raise Foreign("damaged") from e
        if type(files) is not dict:
            raise Foreign("not an index cache")
        try:
            out = {p: decode_entry(x, p) for p, x in files.items() if type(p) is str}
        except (TypeError, ValueError) as e:
            raise Foreign("a record of another shape") from e
        self.body_digest = str(named)
        return out

    def save(self) -> bool:
        """Write this indexing's entries (temporary file + rename, 0600); False when not written."""
        from puppet_xpp.xpp.compile.writes import replace_at

        if not self.enabled:
            return False
        if self.unchanged() and self._touch():
            return True
        body = marshal.dumps({p: encode_entry(e) for p, e in sorted(self.new.items())})
        header = {
            "format": FORMAT,
            "schema": SCHEMA,
            "fingerprint": self.fingerprint,
            "roots": self.roots,
            "digest": digest(body),
            "files": len(self.new),
        }
        data = json.dumps(header).encode("utf-8", "surrogateescape") + b"\n" + body
        dfd = self._open_dir(create=True)
        if dfd is None:
            return False
        try:
            replace_at(dfd, self.name, data, lambda fd: os.fchmod(fd, 0o600))
            prune(dfd)
            return True
        except OSError:
            return False
        finally:
            os.close(dfd)

    def unchanged(self) -> bool:
        """Whether this indexing kept exactly the entries loaded (each file found by its stat, none
        added or gone): then the file on disk already holds all of it, and a second start does not
        encode, digest and write its megabytes again while the first requests come in."""
        old = self.old
        return bool(old) and len(self.new) == len(old) and all(self.new.get(p) is e for p, e in old.items())

    def _touch(self) -> bool:
        """Mark the cache file in use (its modification time: :func:`prune` keeps it), without a link
        followed; False when that failed (the caller writes it whole instead)."""
        dfd = self._open_dir(create=False)
        if dfd is None:
            return False
        try:
            os.utime(self.name, dir_fd=dfd, follow_symlinks=False)
            return True
        except (OSError, NotImplementedError):
            return False
        finally:
            os.close(dfd)

    # -- per file ---------------------------------------------------------------------------------------

    def lookup(self, path: str, memo: dict[str, str] | None = None) -> Entry | None:
        """The entry of ``path`` when its stat matches and it is not racy (no read), else None.  ``memo``:
        the dependencies (:func:`depends`) already found for a directory's files in this pass -- every
        resource type of a module has the same, and finding them walks the module's ``lib/``."""
        e = self.old.get(path)
        if e is None or e.racy:
            return None
        try:
            st = os.stat(path)
        except OSError:
            return None
        if not stat.S_ISREG(st.st_mode) or (st.st_size, st.st_mtime_ns) != (e.size, e.mtime_ns):
            return None
        if e.deps:
            if memo is None:
                deps = depends(path)
            else:
                key = os.path.dirname(path)
                found = memo.get(key)
                deps = memo[key] = depends(path) if found is None else found
            if deps != e.deps:
                return None
        self.new[path] = e
        self.hits += 1
        return e

    def adopt(self, path: str) -> Entry:
        """The loaded entry of ``path``, found valid by :meth:`lookup` in another process just now
        (:func:`survey`): kept, as :meth:`lookup` keeps it."""
        e = self.old[path]
        self.new[path] = e
        self.hits += 1
        return e

    def index(
        self,
        path: str,
        hooks: Sequence[ParsedHook] = (),
        refs: RefIndex | None = None,
        refused: list[str] | None = None,
    ) -> tuple[list[Sym], list[Ref] | bytes | None, bool]:
        """(entries, references -- perhaps encoded, see :class:`Entry` --, from the cache) of ``path``: its cached entry when it is still the
        file (stat, else digest of its bytes), else the file indexed from the bytes read (``hooks``
        get the parse; the references recorded are those ``refs`` got from them)."""
        from puppet_xpp.xpp.sources import read_bytes

        hit = self.lookup(path)
        if hit is not None:
            return hit.syms, hit.refs, True
        raw = read_bytes(path)
        if raw.data is None or raw.stat is None:
            if refused is not None and raw.diagnostic is not None:
                refused.append(raw.diagnostic.message)
            return [], None, False
        dig = digest(raw.data)
        deps = depends(path)
        st = raw.stat
        racy = time.time_ns() - st.st_mtime_ns < RACY_NS
        old = self.old.get(path)
        if old is not None and old.digest == dig and old.size == len(raw.data) and old.deps == deps:
            e = Entry(st.st_size, st.st_mtime_ns, dig, racy, deps, old.syms, old.refs)
            self.new[path] = e
            self.hits += 1
            return e.syms, e.refs, True
        self.misses += 1
        e = fresh_entry(path, raw.data, st, hooks, refs, (dig, deps, racy))
        self.new[path] = e
        return e.syms, e.refs, False

    def take(self, path: str, e: Entry) -> bool:
        """Record ``e``, made elsewhere from the file's bytes (an indexing worker process); True when the
        cache had the same (digest, size, dependencies): counted as from the cache, as :meth:`index` does."""
        old = self.old.get(path)
        same = old is not None and (old.digest, old.size, old.deps) == (e.digest, e.size, e.deps)
        self.new[path] = e
        if same:
            self.hits += 1
        else:
            self.misses += 1
        return same

    def forget(self, paths: Iterable[str]) -> None:
        for p in paths:
            self.new.pop(p, None)


# ----------------------------------------------------------------------------------------------- early


@dataclass
class Prepared:
    """A workspace's files and index cache, read and checked before the language server is loaded (the
    start-up front's thread, server/lsp/startup.py): the indexing at ``initialized`` files ``found``
    at once when its roots are these ``roots`` -- the walk, the cache's reading and the stat of every
    file (~0.15 s on issue 31's workspace, mostly waiting on the file system) done while the server's
    modules were imported."""

    roots: list[str]
    files: list[str]
    cache: IndexCache
    found: dict[str, Entry]  # the files whose cached entry is still valid by stat (IndexCache.lookup)


# what :func:`survey` finds: (the fingerprint, the files, those whose cached entry is valid by stat, the
# cache body's digest -- "" when no cache was loaded)
Survey = tuple[str, list[str], list[str], str]


def survey(roots: Sequence[str]) -> Survey:
    """The workspace's files and which of them the index cache still holds by stat: the file-system
    part of :func:`prepare`, for a process of its own (the start-up front's, server/lsp/startup.py:
    another processor than the server's import)."""
    from puppet_xpp.server.analysis.index import workspace_files

    files = workspace_files(roots)
    cache = IndexCache.open(roots)
    memo: dict[str, str] = {}
    found = [p for p in files if cache.lookup(p, memo) is not None]
    return cache.fingerprint, files, found, cache.body_digest


def prepare(
    roots: Sequence[str], surveyed: Survey | None = None, between: Callable[[], None] = lambda: None
) -> Prepared:
    """:class:`Prepared` of the workspace ``roots``: with ``surveyed`` (:func:`survey` in another
    process, of these roots), only the cache is read here, and the entries found valid there are
    taken when it is still the very cache that process checked; else everything is done here
    (``between``: called between the steps -- the front holds this thread there while it analyses a
    document)."""
    from puppet_xpp.server.analysis.index import workspace_files

    if surveyed is not None:
        if type(surveyed) is not tuple or len(surveyed) != 4:
            raise Foreign("not a survey")
        build, files, valid, checked = surveyed
        cache = IndexCache.open(roots, build=build, checked=checked)
        if checked and cache.body_digest == checked:
            return Prepared(list(roots), files, cache, {p: cache.adopt(p) for p in valid})
    else:
        files = workspace_files(roots)
        between()
        cache = IndexCache.open(roots)
    between()
    memo: dict[str, str] = {}
    found = {}
    for path in files:
        e = cache.lookup(path, memo)
        if e is not None:
            found[path] = e
    return Prepared(list(roots), files, cache, found)

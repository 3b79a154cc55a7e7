"""The workspace index's upkeep: the one indexing of the module path (at start, and for folders added
later), with work-done progress; one file again after a save, a close, a rename or a change on disk
(``workspace/didChangeWatchedFiles``, with watchers registered at start); workspace folders added and
removed.  Every manifest the indexing parses also feeds the reference index (the session's hooks).

A manifest open in the editor is not read from disk by the indexing (the editor's text is the file's,
saved or not): its entries are those of its open document's analysis, filed when the indexing ends
(:func:`file_open_manifests`) -- an editor reopens the last session's files at once, before the
indexing has looked at them."""

from __future__ import annotations

import asyncio
import collections
import os
import time
from collections.abc import Callable, Iterable
from concurrent.futures import Future
from typing import Any

from lsprotocol import types

from puppet_xpp.grammar.gcpause import paused
from puppet_xpp.server.analysis import filekinds, index_pool
from puppet_xpp.server.analysis.document import path_of_uri
from puppet_xpp.server.analysis.index import index_file, symbols_of, workspace_files
from puppet_xpp.server.analysis.index_cache import Entry, IndexCache, Prepared, decode_entry
from puppet_xpp.server.analysis.references import Ref
from puppet_xpp.server.analysis.symbols import Sym
from puppet_xpp.server.analysis.workspace import file_context
from puppet_xpp.server.lsp import sync
from puppet_xpp.server.lsp.language_server import PuppetServer
from puppet_xpp.server.lsp.session import DocState, Session
from puppet_xpp.xpp.environment import infer_module

WATCH_GLOBS = ("**/*.pp", "**/*.epp", "**/*.rb", "**/hiera.yaml", "**/data/**/*.yaml", "**/data/**/*.json")


# files looked up in the index cache per call on the worker (their stat only)
CHUNK = 200
# files indexed per call on the worker when indexing in the server (a request waits at most that long)
SERIAL_CHUNK = 8

# how long a request that needs the whole index waits for the indexing before refusing (seconds)
WAIT_COMPLETE = 2.0


async def index_paths(ls: PuppetServer, roots: list[str], title: str = "Indexing Puppet workspace") -> None:
    """Index the files under ``roots`` on the analysis worker (but the open documents: their analysis
    feeds the index), with work-done progress when the client shows it.  The session's index state
    says the index is incomplete from the start of this until its end (an error included)."""
    state = ls.session.index_state
    state.begin(0)
    cache = None
    try:
        cache = await _index_paths(ls, roots, title)
    finally:
        state.end()
    loop = asyncio.get_running_loop()
    if cache is not None and cache.enabled:  # (after the index is complete: no request waits for it)
        if not await loop.run_in_executor(None, cache.save):
            ls.log(
                f"puppet-xpp: index cache not written: {cache.directory} is not a directory of ours"
                " (a link, another owner) or not writable",
                types.MessageType.Log,
            )
    # the references filed encoded (the cache's, the workers'): built now, off the analysis worker, so
    # the first references query does not build them all (it would, were it first: RefIndex's rule)
    await loop.run_in_executor(None, ls.session.refs.decode_pending)


async def _index_paths(ls: PuppetServer, roots: list[str], title: str) -> IndexCache:
    session = ls.session
    state = session.index_state
    loop = asyncio.get_running_loop()
    prepared = await take_prepared(ls, roots)
    if prepared is not None:  # (read while the server was loaded)
        files, cache = prepared.files, prepared.cache
    else:  # the walk and the reading of the index cache overlap (the walk waits on the file system)
        files, cache = await asyncio.gather(
            loop.run_in_executor(None, workspace_files, roots),
            loop.run_in_executor(None, IndexCache.open, roots),
        )
    if cache.ignored:
        ls.log(
            f"puppet-xpp: index cache ignored ({cache.ignored}): indexing every file", types.MessageType.Log
        )
    try:
        first = await ls.on_worker(first_directories, session, roots)
    except Exception:  # the order is a nicety: never cost the indexing itself
        first = []
    files = first_files(files, first)
    if first:  # (what the user is looking at is known early; the log says what came first)
        ls.log(f"puppet-xpp: indexing first: {', '.join(first)}", types.MessageType.Log)
    state.total += len(files)
    token = None
    if session.work_done_progress():
        token = f"puppet-xpp-index-{id(ls)}-{time.monotonic_ns()}"
        try:
            await ls.work_done_progress.create_async(token)
            ls.work_done_progress.begin(
                token,
                types.WorkDoneProgressBegin(
                    title=title, message=f"0/{len(files)} files", percentage=0, cancellable=False
                ),
            )
        except Exception:
            token = None
    t0 = time.perf_counter()
    last = 0.0
    before = state.done

    def report() -> None:
        nonlocal last
        now = time.perf_counter()
        if token and now - last > 0.2:
            last = now
            done = min(state.done - before, len(files))
            ls.work_done_progress.report(
                token,
                types.WorkDoneProgressReport(
                    message=f"{done}/{len(files)} files", percentage=int(100 * done / max(1, len(files)))
                ),
            )

    # the files whose stat matches their cached entry, a chunk at a time; the others are indexed after
    misses: list[str] = []
    memo: dict[str, str] = {}
    for k in range(0, len(files), CHUNK):
        part = files[k : k + CHUNK]
        if prepared is not None:
            found = prepared.found
        else:
            found = await ls.on_worker(lookup_chunk, cache, part, memo)
        opened = open_manifests(session)
        # (filing makes the indexes' lists and dicts, kept for the session, no cycle among them: the
        # collections their allocation would start find nothing -- a third of the filing's time)
        with paused():
            for path in part:
                hit = found.get(path)
                if path in opened:
                    state.done += 1
                elif hit is not None:
                    state.done += 1
                    session.index.set_file(path, hit.syms)
                    if hit.refs is not None:
                        session.refs.set_file(path, hit.refs)
                else:
                    misses.append(path)
        report()
    # the rest: in the server and, when it pays, in worker processes (server/analysis/index_pool.py)
    await index_misses(ls, cache, misses, report)
    # the open manifests, skipped above: their open documents' entries (those opened since included)
    await file_open_manifests(ls, files)
    if token:
        ls.work_done_progress.end(
            token,
            types.WorkDoneProgressEnd(
                message=f"Indexed {len(files)} files in {time.perf_counter() - t0:.1f}s"
            ),
        )
    ls.log(
        f"puppet-xpp: indexed {len(files)} files in {time.perf_counter() - t0:.1f}s"
        f" ({cache.hits} from the index cache)"
    )
    return cache


async def take_prepared(ls: PuppetServer, roots: list[str]) -> Prepared | None:
    """What the start-up front read of the workspace while the server was loaded
    (index_cache.Prepared, once): None when there is none, when it failed, or when it is of other
    roots (the client's configuration, pulled at ``initialized``, changed the module path)."""
    session = ls.session
    early, session.early_index = session.early_index, None
    if early is None:
        return None
    try:
        prepared = await asyncio.wrap_future(early)
    except Exception as e:  # (never the indexing's failure: it reads everything itself)
        ls.log(f"puppet-xpp: the index cache read at start failed ({e!r})", types.MessageType.Log)
        return None
    if prepared is None or prepared.roots != roots:
        return None
    ls.log(
        f"puppet-xpp: workspace files and index cache read while the server loaded"
        f" ({len(prepared.found)} of {len(prepared.files)} files cached)",
        types.MessageType.Log,
    )
    return prepared


async def index_misses(
    ls: PuppetServer, cache: IndexCache, paths: list[str], report: Callable[[], None]
) -> None:
    """Index ``paths`` (not in the index cache).  The server's analysis worker takes chunks from the end
    of the list at once; when it pays (server/analysis/index_pool.py), worker processes take chunks from
    the front as soon as they are up, and a chunk still waiting for them when the server's side is done
    is taken back: the two meet wherever the processes' start-up lets them (a small workspace is done
    before they are up, and then nothing waits for them).  What the workers send is merged as the serial
    indexing files it; a file that failed in a worker, and the chunks a dead worker left, go back to the
    server's side."""
    session = ls.session
    state = session.index_state
    chunks: collections.deque[list[str]] = collections.deque(
        paths[k : k + SERIAL_CHUNK] for k in range(0, len(paths), SERIAL_CHUNK)
    )
    n = index_pool.workers()
    if len(paths) < index_pool.MIN_FILES or len(session.parsed_hooks) != 1:
        n = 0  # (a hook beyond the reference index's needs the parse here)
    pool = index_pool.IndexPool(n) if n else None
    sent: dict[
        asyncio.Future[list[index_pool.Result]], tuple[list[str], Future[list[index_pool.Result]]]
    ] = {}
    here: asyncio.Future[list[tuple[str, list[Sym], list[Ref] | bytes | None, bool, list[str]]]] | None = None
    here_part: list[str] = []
    refused: list[str] = []
    try:
        while chunks or sent or here is not None:
            while pool is not None and not pool.broken and chunks and len(sent) < 2 * n:
                chunk = chunks.popleft()
                future = pool.submit_one(chunk)
                if future is None:
                    chunks.appendleft(chunk)
                    break
                sent[asyncio.wrap_future(future)] = (chunk, future)
            if here is None and not chunks and sent:  # take back what no worker has started
                for waited, (chunk, future) in list(sent.items()):
                    if future.cancel():
                        del sent[waited]
                        chunks.append(chunk)
            if here is None and chunks:
                part = chunks.pop()
                here = asyncio.ensure_future(
                    ls.on_worker(index_several, cache, part, session, set(open_manifests(session)))
                )
                here_part = part
            waiting: set[asyncio.Future[Any]] = {*sent, *([here] if here is not None else [])}
            if not waiting:
                break
            finished: set[asyncio.Future[Any]]
            finished, _ = await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
            for done in finished:
                if done is here:
                    here = None
                    for path, syms, refs, cached, why in done.result():
                        session.index.set_file(path, syms)
                        if cached and refs is not None:
                            session.refs.set_file(path, refs)
                        refused.extend(why)
                    state.done += len(here_part)
                    continue
                chunk, _future = sent.pop(done)
                try:
                    results = done.result()
                except Exception as e:  # BrokenProcessPool: a worker died (killed, out of memory)
                    assert pool is not None
                    pool.broken = pool.broken or str(e) or type(e).__name__
                    chunks.append(chunk)
                    continue
                redo = merge(ls, cache, results, refused)
                if redo:
                    chunks.append(redo)
            report()
    finally:
        if here is not None:
            await asyncio.wait({here})
        if pool is not None:
            pool.close()
    for why in refused:
        ls.log(f"puppet-xpp: not indexed: {why}", types.MessageType.Warning)
    if pool is not None and pool.broken:
        ls.log(
            f"puppet-xpp: an indexing worker stopped ({pool.broken}): the files left were indexed in the server",
            types.MessageType.Warning,
        )


def merge(
    ls: PuppetServer, cache: IndexCache, results: list[index_pool.Result], refused: list[str]
) -> list[str]:
    """File what a worker process sent (as the serial indexing would have); the paths that failed there."""
    session = ls.session
    opened = open_manifests(session)
    failed: list[str] = []
    with paused():  # (as the filing of the cached entries: objects kept, no cycle among them)
        for path, record, why, broke in results:
            if broke:
                failed.append(path)
                continue
            session.index_state.done += 1
            if path in opened:
                continue  # opened meanwhile: its open document's entries are filed at the end
            if record is None:
                if why:
                    refused.append(why)
                continue
            entry = decode_entry(record, path)
            cache.take(path, entry)
            session.index.set_file(path, entry.syms)
            if entry.refs is not None:
                session.refs.set_file(path, entry.refs)
    return failed


def index_several(
    cache: IndexCache, paths: list[str], session: Session, skip: set[str]
) -> list[tuple[str, list[Sym], list[Ref] | bytes | None, bool, list[str]]]:
    """Worker thread: :meth:`IndexCache.index` of each of ``paths`` but those of ``skip`` (the open
    manifests): (path, entries, references, from the cache, why it was not read)."""
    out = []
    for path in paths:
        if path in skip:
            continue
        refused: list[str] = []
        syms, refs, hit = cache.index(path, session.parsed_hooks, session.refs, refused)
        out.append((path, syms, refs, hit, refused))
    return out


def lookup_chunk(cache: IndexCache, paths: list[str], memo: dict[str, str]) -> dict[str, Entry]:
    """Worker thread: the cached entries of ``paths`` still valid by stat (``memo``: IndexCache.lookup's,
    for the whole indexing).  An open manifest's too: the index files its open document's entries
    instead, but the cache keeps the file's (as the start-up front's reading does, index_cache.prepare),
    so the next start need not read it, and an unchanged cache is not written again."""
    out = {}
    for p in paths:
        e = cache.lookup(p, memo)
        if e is not None:
            out[p] = e
    return out


def open_manifests(session: Session) -> dict[str, DocState]:
    """The open documents whose entries the index takes from their open text, by path: the manifests
    (``.pp``, analysed as Puppet manifests).  A Ruby file open in the editor is indexed from disk, as
    on its save (``didChangeWatchedFiles``): nothing analyses its text."""
    out = {}
    for uri, st in list(session.documents.items()):
        path = path_of_uri(uri)
        if path and path.endswith(".pp") and st.kind == filekinds.PUPPET:
            out[path] = st
    return out


def open_entries(session: Session, paths: Iterable[str]) -> list[tuple[str, DocState, list[Sym]]]:
    """Worker thread: the entries of the open manifests among ``paths`` from their open documents'
    current analysis (their queued edits applied first, as every request does)."""
    wanted = set(paths)
    out = []
    for path, st in open_manifests(session).items():
        if path in wanted:
            sync.sync_state(st)
            out.append((path, st, symbols_of(st.doc.analysis(), path)))
    return out


async def file_open_manifests(ls: PuppetServer, paths: Iterable[str]) -> None:
    """File the entries of the open manifests among ``paths`` (those the indexing did not read) from
    their open documents: a manifest opened before the indexing reached it is in the index with its
    open text, as a save of it would file it.  One closed meanwhile is not (its close reads the file
    from disk again: documents.did_close)."""
    session = ls.session
    for path, st, syms in await ls.on_worker(open_entries, session, list(paths)):
        if session.documents.get(st.uri) is st:
            session.index.set_file(path, syms)


def first_directories(session: Session, roots: list[str]) -> list[str]:
    """Worker thread: the directories to index first: the modules of the open documents and the modules
    they name (``include apache`` -> ``<root>/apache``), so what the user is looking at is known early."""
    from puppet_xpp.server.lsp.references import refresh_open_documents

    refresh_open_documents(session)
    out: list[str] = []
    names: set[str] = set()
    modulepath: list[str] = []  # where a named module is looked for: the open files' module paths
    for path in sorted(p for p in session.open_paths() if p):
        module = infer_module(path)
        if module is not None and module.root not in roots:  # a module, not an environment's manifests/
            out.append(module.root)
            names.add(module.name)
        modulepath.extend(file_context(path, session.settings).modulepath)
        for r in session.refs.file_refs(path):
            if r.key[0] in ("class", "type", "function") and r.role != "def":
                names.add(r.key[1].split("::")[0])
    search = list(dict.fromkeys([*modulepath, *roots]))
    for name in sorted(names):
        out.extend(os.path.join(d, name) for d in search if os.path.isdir(os.path.join(d, name)))
    return list(dict.fromkeys(out))


def first_files(files: list[str], first: list[str]) -> list[str]:
    """``files`` with those under the ``first`` directories in front (each part in its order)."""
    if not first:
        return files
    prefixes = tuple(os.path.join(d, "") for d in first)
    return sorted(files, key=lambda f: not f.startswith(prefixes))


async def wait_complete(ls: PuppetServer, timeout: float = WAIT_COMPLETE) -> str | None:
    """Wait (at most ``timeout`` seconds) for the workspace index to be complete: None when it is,
    else why not, for the refusal the caller sends (never an answer from a partial index)."""
    session = ls.session
    state = session.index_state
    if not state.first_done and state.running == 0 and not session.index_roots():
        state.first_done = True  # nothing to index: the (empty) index is complete
    if state.complete():
        return None
    try:
        await asyncio.wait_for(state.event().wait(), timeout)
        return None
    except TimeoutError:
        pass
    if state.total:
        return f"the workspace is still being indexed ({state.done}/{state.total} files): try again shortly"
    return "the workspace is still being indexed: try again shortly"


async def reindex(ls: PuppetServer, path: str, cache: IndexCache | None = None) -> None:
    """The file at ``path`` as it is on disk (parsed on the worker; with ``cache``, its cached entry when
    still valid by digest, and what it gave recorded).  It is read by the one source-reading rule
    (``index_file``): a FIFO, a device or a file over the size limit is skipped, never read, with a log
    line saying why."""
    refused: list[str] = []
    session = ls.session
    if cache is None:
        syms = await ls.on_worker(index_file, path, None, session.parsed_hooks, refused)
    else:
        syms, refs, hit = await ls.on_worker(cache.index, path, session.parsed_hooks, session.refs, refused)
        if hit and refs is not None:
            session.refs.set_file(path, refs)
    session.index.set_file(path, syms)
    for why in refused:
        ls.log(f"puppet-xpp: not indexed: {why}", types.MessageType.Warning)


async def watch_files(ls: PuppetServer) -> None:
    """Ask the client to watch the files the index and Hiera follow (when it can register watchers)."""
    if not ls.session.watches_files():
        return
    opts = types.DidChangeWatchedFilesRegistrationOptions(
        watchers=[types.FileSystemWatcher(glob_pattern=g) for g in WATCH_GLOBS]
    )
    try:
        await asyncio.wait_for(
            ls.client_register_capability_async(
                types.RegistrationParams(
                    registrations=[
                        types.Registration(
                            id="puppet-xpp-watch",
                            method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
                            register_options=opts,
                        )
                    ]
                )
            ),
            5,
        )
    except Exception:
        pass


# ----------------------------------------------------------------------------------------------- handlers


async def did_change_watched_files(ls: PuppetServer, params: types.DidChangeWatchedFilesParams) -> None:
    session = ls.session
    session.hiera.invalidate()
    for ch in params.changes:
        path = path_of_uri(ch.uri)
        if not path or not (path.endswith((".pp", ".rb"))):
            continue
        if ch.type == types.FileChangeType.Deleted:
            session.index.remove_file(path)
        elif ch.uri not in session.documents:
            await reindex(ls, path)


async def did_change_workspace_folders(
    ls: PuppetServer, params: types.DidChangeWorkspaceFoldersParams
) -> None:
    session = ls.session
    before = set(session.index_roots())
    for f in params.event.removed:
        p = path_of_uri(f.uri)
        if p in session.roots:
            session.roots.remove(p)
    for f in params.event.added:
        p = path_of_uri(f.uri)
        if p and p not in session.roots:
            session.roots.append(p)
    after = session.index_roots()
    gone = [r for r in before if r not in after]
    for path in list(session.index.by_path):
        if any(path.startswith(r + os.sep) for r in gone) and not any(
            path.startswith(r + os.sep) for r in after
        ):
            session.index.remove_file(path)
    session.hiera.invalidate()
    new = [r for r in after if r not in before]
    if new:
        await index_paths(ls, new, "Indexing added folders")

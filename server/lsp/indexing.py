"""The workspace index's upkeep: the one indexing of the module path (at start, and for folders added
later), with work-done progress; one file again after a save, a close, a rename or a change on disk
(``workspace/didChangeWatchedFiles``, with watchers registered at start); workspace folders added and
removed.  Every manifest the indexing parses also feeds the reference index (the session's hooks)."""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Callable, Iterable

from lsprotocol import types

from puppet_xpp.server.analysis import index_pool
from puppet_xpp.server.analysis.document import path_of_uri
from puppet_xpp.server.analysis.index import index_file, workspace_files
from puppet_xpp.server.analysis.index_cache import Entry, IndexCache, decode_entry
from puppet_xpp.server.analysis.workspace import file_context
from puppet_xpp.server.lsp.language_server import PuppetServer
from puppet_xpp.server.lsp.session import Session
from puppet_xpp.xpp.environment import infer_module

WATCH_GLOBS = ("**/*.pp", "**/*.epp", "**/*.rb", "**/hiera.yaml", "**/data/**/*.yaml", "**/data/**/*.json")


# files looked up in the index cache per call on the worker (their stat only)
CHUNK = 200

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
    if cache is not None and cache.enabled:  # (after the index is complete: no request waits for it)
        if not await asyncio.get_running_loop().run_in_executor(None, cache.save):
            ls.log(
                f"puppet-xpp: index cache not written: {cache.directory} is not a directory of ours"
                " (a link, another owner) or not writable",
                types.MessageType.Log,
            )


async def _index_paths(ls: PuppetServer, roots: list[str], title: str) -> IndexCache:
    session = ls.session
    state = session.index_state
    loop = asyncio.get_running_loop()
    # the walk and the reading of the index cache overlap (the walk waits on the file system)
    files, cache = await asyncio.gather(
        loop.run_in_executor(None, workspace_files, roots), loop.run_in_executor(None, IndexCache.open, roots)
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
    for k in range(0, len(files), CHUNK):
        part = files[k : k + CHUNK]
        found = await ls.on_worker(lookup_chunk, cache, part, session.open_paths())
        opened = session.open_paths()
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
    # the rest: in worker processes when it pays (server/analysis/index_pool.py), else here
    n = index_pool.workers() if len(misses) >= index_pool.MIN_FILES else 0
    if n and len(session.parsed_hooks) == 1:  # (a hook beyond the reference index's needs the parse here)
        misses = await index_in_pool(ls, cache, misses, n, report)
    for path in misses:
        state.done += 1
        if path not in session.open_paths():
            await reindex(ls, path, cache)
        report()
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


async def index_in_pool(
    ls: PuppetServer, cache: IndexCache, paths: list[str], n: int, report: Callable[[], None]
) -> list[str]:
    """Index ``paths`` in ``n`` worker processes, merging each chunk as it comes (what the reference
    index's hook would have filed is filed the same way); the paths left to index here: a file whose
    indexing failed in a worker, and every file not done when a worker died."""
    session = ls.session
    state = session.index_state
    left: list[str] = []
    refused: list[str] = []
    with index_pool.IndexPool(n) as pool:
        for chunk, future in pool.submit(paths):
            results: list[index_pool.Result] | None = None
            try:
                if future is not None:
                    results = await asyncio.wrap_future(future)
            except Exception as e:  # BrokenProcessPool: a worker died (killed, out of memory)
                pool.broken = pool.broken or str(e) or type(e).__name__
            if results is None:
                left.extend(chunk)
                continue
            opened = session.open_paths()
            for path, record, why, failed in results:
                if failed:
                    left.append(path)
                    continue
                state.done += 1
                if path in opened:
                    continue  # opened meanwhile: its analysis feeds the index
                if record is None:
                    if why:
                        refused.append(why)
                    continue
                entry = decode_entry(record, path)
                cache.take(path, entry)
                session.index.set_file(path, entry.syms)
                if entry.refs is not None:
                    session.refs.set_file(path, entry.refs)
            report()
    for why in refused:
        ls.log(f"puppet-xpp: not indexed: {why}", types.MessageType.Warning)
    if pool.broken:
        ls.log(
            f"puppet-xpp: an indexing worker stopped ({pool.broken}): {len(left)} files indexed in the server",
            types.MessageType.Warning,
        )
    return left


def lookup_chunk(cache: IndexCache, paths: list[str], open_paths: Iterable[str]) -> dict[str, Entry]:
    """Worker thread: the cached entries of ``paths`` (but the open documents) still valid by stat."""
    skip = set(open_paths)
    out = {}
    for p in paths:
        if p not in skip:
            e = cache.lookup(p)
            if e is not None:
                out[p] = e
    return out


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

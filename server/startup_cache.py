"""The start-up cache: what a start of puppet-xpp made once and keeps for the next ones -- the code the
class-making libraries generate, and the language server's ``initialize`` answers.

Where: one private directory (``startup/`` of :func:`puppet_xpp.user_cache_dir`, or the directory
``PUPPET_XPP_STARTUP_CACHE`` names; ``off`` turns it off), its files read and replaced relative to the
directory, never through a link (:func:`puppet_xpp.open_cache_dir`; temporary file + rename, 0600), so two
processes starting at once leave whole files.

**The code cache** (:class:`CodeCache`, :func:`kept_compiled`, :func:`keep_for_process`).  Importing
``lsprotocol.types`` (~1,000 attrs classes) is the largest part of the language server's start, and ~40%
of it is attrs compiling the source it generates for each class's methods (``__init__``, ``__eq__``,
``__repr__``, ...: one ``compile`` per class); our own dataclasses are the same on a smaller scale (Python
3.11 compiles each generated method on its own: ~0.4 ms a class, ~16 ms of the ~55 ms a ``--compile``
spends importing its ~40).  Those sources and their file names are the same at every start of one build,
so the code objects can be kept: for the time of a window the generating modules get a ``compile`` or
``exec`` of their own (a module global, which a module's lookup of the name finds before the builtin;
removed afterwards) that answers a source compiled before from the cache and compiles, and records, the
others.  The language server's window covers its imports and first messages (``attrs-code.marshal``); a
command of the command line keeps its dataclasses' code for the whole process (``cli-<command>-code.marshal``:
each command imports its own set).

What is kept: :mod:`marshal`'s code objects keyed by a digest of (source, file name, mode, compiler
flags).  Like Python's own ``__pycache__``, it is code this interpreter wrote: trusted only under the
interpreter's bytecode magic number (another Python: nothing is used) and the digest of its body (a damaged
file: nothing is used, and it is rewritten).  A source not in it is compiled as the library would; the
answers are the very code objects ``compile`` returns for those arguments.  Rewritten only when a start
compiled something new, holding just what that start used (an upgrade leaves nothing stale behind)."""

from __future__ import annotations

import builtins
import hashlib
import importlib.util
import marshal
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import CodeType
from typing import Any

__all__ = [
    "ENV",
    "cache_dir",
    "read_cached",
    "write_cached",
    "CodeCache",
    "kept_compiled",
    "keep_for_process",
    "DATACLASSES",
]

# the environment variable naming the directory of the start-up cache (off, none, 0, false: none)
ENV = "PUPPET_XPP_STARTUP_CACHE"
CACHE_NAME = "attrs-code.marshal"
MAX_BYTES = 64 * 1024 * 1024
# the compiler flags of future statements (what ``compile`` inherits from its caller's code)
FUTURE_FLAGS = 0
for _name in ("annotations", "generator_stop", "barry_as_FLUFL"):
    _feature = getattr(__import__("__future__"), _name, None)
    FUTURE_FLAGS |= getattr(_feature, "compiler_flag", 0)
# the modules whose generated code is compiled through the cache in the language server's window, and the
# builtin each of them calls for it: attrs compiles, dataclasses executes a source, cattrs compiles the
# converters of the messages' classes
PATCHED = (("attr._make", "compile"), ("dataclasses", "exec"), ("cattrs.gen", "compile"))
# a command line's: its dataclasses only (it imports no attrs class)
DATACLASSES = (("dataclasses", "exec"),)


def cache_dir() -> str | None:
    """Where the start-up cache lives, None when turned off (``PUPPET_XPP_STARTUP_CACHE``)."""
    from puppet_xpp import env_cache_dir

    return env_cache_dir(ENV, "startup")


def read_cached(directory: str | None, name: str, limit: int) -> bytes | None:
    """The start-up cache file ``name`` of ``directory``, opened relative to the directory (which must
    be ours: :func:`puppet_xpp.open_cache_dir`) without following a link; None when absent, unreadable
    or over ``limit`` bytes."""
    from puppet_xpp import open_cache_dir

    if directory is None:
        return None
    dfd = open_cache_dir(directory, create=False)
    if dfd is None:
        return None
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=dfd)
        with os.fdopen(fd, "rb") as f:
            data = f.read(limit + 1)
    except OSError:
        return None
    finally:
        os.close(dfd)
    return data if len(data) <= limit else None


def write_cached(directory: str, name: str, data: bytes) -> bool:
    """Replace the start-up cache file ``name`` of ``directory`` (made 0700) by ``data``: temporary
    file + rename relative to the directory, 0600, so two processes starting at once leave one whole
    file; False when not written."""
    from puppet_xpp import open_cache_dir
    from puppet_xpp.xpp.compile.writes import replace_at

    dfd = open_cache_dir(directory, create=True)
    if dfd is None:
        return False
    try:
        replace_at(dfd, name, data, lambda fd: os.fchmod(fd, 0o600))
        return True
    except OSError:
        return False
    finally:
        os.close(dfd)


def _header() -> bytes:
    return b"puppet-xpp-code 1 " + importlib.util.MAGIC_NUMBER.hex().encode() + b" "


class CodeCache:
    """The code objects of one start: those read (``old``) and those this start used (``used``), in the
    cache file ``name``."""

    def __init__(self, directory: str | None, name: str = CACHE_NAME) -> None:
        self.directory = directory
        self.name = name
        self.old: dict[bytes, CodeType] = {}
        self.used: dict[bytes, CodeType] = {}
        self.compiled = 0  # sources compiled this start (not in the cache)
        # the file names of the code read: a source of one of them that is not in the cache is one that
        # differs at each start (a default's repr with an address in it): compiled, never kept
        self.names: set[str] = set()
        self.volatile = 0

    @classmethod
    def open(cls, directory: str | None, name: str = CACHE_NAME) -> CodeCache:
        cache = cls(directory, name)
        cache.load()
        return cache

    def load(self) -> None:
        data = read_cached(self.directory, self.name, MAX_BYTES)
        if data is None:
            return
        head, sep, body = data.partition(b"\n")
        want = _header()
        if not sep or not head.startswith(want):
            return
        if head[len(want) :] != hashlib.blake2b(body, digest_size=20).hexdigest().encode():
            return  # damaged: nothing of it is used (a damaged code object could crash the interpreter)
        try:
            table = marshal.loads(body)
        except (EOFError, TypeError, ValueError):
            return
        if type(table) is dict:
            self.old = {k: v for k, v in table.items() if type(k) is bytes and type(v) is CodeType}
            self.names = {code.co_filename for code in self.old.values()}

    def compile(self, source: Any, filename: Any, mode: str, flags: int, stable: bool = False) -> CodeType:
        """``compile(source, filename, mode, flags, dont_inherit=True)``, from the cache when it was
        compiled before.  ``stable``: a source that is the same at every start of one build, whatever its
        file name (dataclasses' methods: every one is ``<string>``'s, the values they use passed by
        name, never written into the source): a new one is kept, not taken for one that differs at
        each start."""
        if type(source) is not str or type(filename) is not str:
            code: CodeType = builtins.compile(source, filename, mode, flags, dont_inherit=True)
            return code
        key = hashlib.blake2b(
            f"{mode}\0{flags}\0{filename}\0{source}".encode("utf-8", "surrogatepass"), digest_size=20
        ).digest()
        code = self.old.get(key) or self.used.get(key)  # type: ignore[assignment]
        if code is None:
            code = builtins.compile(source, filename, mode, flags, dont_inherit=True)
            if filename in self.names and not stable:
                self.volatile += 1
                return code
            self.compiled += 1
        self.used[key] = code
        return code

    def save(self) -> bool:
        """Write what this start used, when it compiled anything new; False when not written."""
        if self.directory is None or not self.compiled:
            return False
        body = marshal.dumps(self.used)
        data = _header() + hashlib.blake2b(body, digest_size=20).hexdigest().encode() + b"\n" + body
        return write_cached(self.directory, self.name, data)


def _compile_for(cache: CodeCache) -> Callable[..., CodeType]:
    def compile(  # noqa: A001 (the name attrs' module looks up)
        source: Any, filename: Any, mode: str, flags: int = 0, dont_inherit: bool = False, **rest: Any
    ) -> CodeType:
        if rest:  # (optimize=...: not what attrs asks; compiled as asked)
            code: CodeType = builtins.compile(source, filename, mode, flags, dont_inherit, **rest)
            return code
        if not dont_inherit:  # the future statements of the caller's code, as the builtin inherits them
            flags |= sys._getframe(1).f_code.co_flags & FUTURE_FLAGS
        return cache.compile(source, filename, mode, flags)

    return compile


def _exec_for(cache: CodeCache) -> Callable[..., Any]:
    def exec(source: Any, globals: Any = None, locals: Any = None, /, **rest: Any) -> Any:  # noqa: A001
        caller = sys._getframe(1)
        if globals is None:  # (the builtin's rule: the caller's namespaces)
            globals = caller.f_globals
            if locals is None:
                locals = caller.f_locals
        if type(source) is str and not rest:  # (the future statements of the caller's code, inherited)
            source = cache.compile(source, "<string>", "exec", caller.f_code.co_flags & FUTURE_FLAGS, True)
        return builtins.exec(source, globals, locals, **rest)

    return exec


def _patch(cache: CodeCache, patched: tuple[tuple[str, str], ...]) -> list[tuple[Any, str, Any]]:
    """Give each module of ``patched`` (imported here) the cache's version of its builtin; what was set."""
    import importlib

    done: list[tuple[Any, str, Any]] = []
    makers = {"compile": _compile_for, "exec": _exec_for}
    for name, builtin in patched:
        try:
            module = importlib.import_module(name)
        except ImportError:
            continue
        if builtin not in vars(module):  # (a module with a function of that name of its own is left alone)
            shim = makers[builtin](cache)
            setattr(module, builtin, shim)
            done.append((module, builtin, shim))
    return done


@contextmanager
def kept_compiled(
    directory: str | None, name: str = CACHE_NAME, patched: tuple[tuple[str, str], ...] = PATCHED
) -> Iterator[CodeCache]:
    """For the time of the block, the modules of ``patched`` (default :data:`PATCHED`) compile and execute
    their generated sources through the cache file ``name`` of ``directory`` (None: no cache, the block
    runs as it is): attrs' methods for lsprotocol's ~1,000 classes, and the dataclasses' of our own
    modules (~500 methods, about 20 ms of the language server's start)."""
    cache = CodeCache.open(directory, name)
    if directory is None:
        yield cache
        return
    done = _patch(cache, patched)
    try:
        yield cache
    finally:
        for module, builtin, shim in done:
            if vars(module).get(builtin) is shim:
                delattr(module, builtin)


def keep_for_process(name: str, patched: tuple[tuple[str, str], ...] = DATACLASSES) -> CodeCache | None:
    """The code cache for the rest of this process, a program that ends when its command does (the
    ``puppet-xpp`` command line): ``patched`` compile through the cache file ``name`` from now on, and
    what was compiled anew is written when the process exits (``atexit``: also after ``--compile``'s end
    without the interpreter's teardown; a forked worker, which ends with ``os._exit``, writes nothing).
    None when the start-up cache is turned off."""
    import atexit

    directory = cache_dir()
    if directory is None:
        return None
    cache = CodeCache.open(directory, name)
    _patch(cache, patched)
    atexit.register(cache.save)
    return cache

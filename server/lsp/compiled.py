"""The methods attrs generates for lsprotocol's classes (and dataclasses for ours), compiled once and kept
between starts.

Why: importing ``lsprotocol.types`` (~1,000 attrs classes) is the largest part of the language server's
start, and ~40% of it is attrs compiling the source it generates for each class's methods
(``__init__``, ``__eq__``, ``__repr__``, ...: one ``compile`` per class).  That source and its file name
are the same at every start of one build, so the code objects can be kept: :func:`kept_compiled`
gives attrs' module a ``compile`` of its own for the time of the server's import (a module global,
which a module's lookup of the name finds before the builtin; removed afterwards) that answers a
source it compiled before from the cache and compiles, and records, the others.

What is kept: one file in the user's cache directory (``startup/``, the start-up front's: the same
``PUPPET_XPP_STARTUP_CACHE`` turns it off), read and replaced relative to the directory, never
through a link (:func:`puppet_xpp.open_cache_dir`, temporary file + rename, 0600), holding
:mod:`marshal`'s code objects keyed by a digest of (source, file name, mode, compiler flags).  Like
Python's own ``__pycache__``, it is code this interpreter wrote: trusted only under the interpreter's
bytecode magic number (another Python: nothing is used) and the digest of its body (a damaged file:
nothing is used, and it is rewritten).  A source not in it is compiled as attrs would; the answers are
the very code objects ``compile`` returns for those arguments.  Rewritten only when a start compiled
something new, holding just what that start used (an upgrade of attrs or lsprotocol leaves nothing
stale behind)."""

from __future__ import annotations

import builtins
import hashlib
import importlib.util
import marshal
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import CodeType
from typing import Any

__all__ = ["CodeCache", "kept_compiled"]

CACHE_NAME = "attrs-code.marshal"
MAX_BYTES = 64 * 1024 * 1024
# the compiler flags of future statements (what ``compile`` inherits from its caller's code)
FUTURE_FLAGS = 0
for _name in ("annotations", "generator_stop", "barry_as_FLUFL"):
    _feature = getattr(__import__("__future__"), _name, None)
    FUTURE_FLAGS |= getattr(_feature, "compiler_flag", 0)
# the modules whose generated code is compiled through the cache while the server is imported (and
# handles its first messages), and the builtin each of them calls for it (a module global of that
# name, which the module's lookup finds before the builtin, for that time): attrs compiles, dataclasses
# executes a source, cattrs compiles the converters of the messages' classes
PATCHED = (("attr._make", "compile"), ("dataclasses", "exec"), ("cattrs.gen", "compile"))


def _header() -> bytes:
    return b"puppet-xpp-code 1 " + importlib.util.MAGIC_NUMBER.hex().encode() + b" "


class CodeCache:
    """The code objects of one start: those read (``old``) and those this start used (``used``)."""

    def __init__(self, directory: str | None) -> None:
        self.directory = directory
        self.old: dict[bytes, CodeType] = {}
        self.used: dict[bytes, CodeType] = {}
        self.compiled = 0  # sources compiled this start (not in the cache)
        # the file names of the code read: a source of one of them that is not in the cache is one that
        # differs at each start (a default's repr with an address in it): compiled, never kept
        self.names: set[str] = set()
        self.volatile = 0

    @classmethod
    def open(cls, directory: str | None) -> CodeCache:
        cache = cls(directory)
        cache.load()
        return cache

    def load(self) -> None:
        from puppet_xpp.server.lsp.startup import read_cached

        data = read_cached(self.directory, CACHE_NAME, MAX_BYTES)
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
        from puppet_xpp.server.lsp.startup import write_cached

        if self.directory is None or not self.compiled:
            return False
        body = marshal.dumps(self.used)
        data = _header() + hashlib.blake2b(body, digest_size=20).hexdigest().encode() + b"\n" + body
        return write_cached(self.directory, CACHE_NAME, data)


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


@contextmanager
def kept_compiled(directory: str | None) -> Iterator[CodeCache]:
    """For the time of the block, the modules of :data:`PATCHED` (imported here) compile and execute
    their generated sources through the cache of ``directory`` (None: no cache, the block runs as it
    is): attrs' methods for lsprotocol's ~1,000 classes, and the dataclasses' of our own modules (~500
    methods, about 20 ms of the start)."""
    cache = CodeCache.open(directory)
    if directory is None:
        yield cache
        return
    patched: list[tuple[Any, str, Any]] = []
    makers = {"compile": _compile_for, "exec": _exec_for}
    for name, builtin in PATCHED:
        try:
            module = importlib.import_module(name)
        except ImportError:
            continue
        if builtin not in vars(module):  # (a module with a function of that name of its own is left alone)
            shim = makers[builtin](cache)
            setattr(module, builtin, shim)
            patched.append((module, builtin, shim))
    try:
        yield cache
    finally:
        for module, builtin, shim in patched:
            if vars(module).get(builtin) is shim:
                delattr(module, builtin)

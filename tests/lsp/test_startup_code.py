"""The code attrs generates for lsprotocol's classes and dataclasses for ours, kept between starts
(server/startup_cache.py).

Checked against the real thing: the methods of every lsprotocol class, and of the dataclasses of a module
of ours, imported with the kept code are those a plain import makes (Python's own ``compile`` and
``exec``); a second start compiles
nothing and its server answers as the first's; a damaged cache file is not used, and is rewritten.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import time
from typing import Any

from puppet_xpp.server import startup_cache
from tests.lsp.test_startup import CAPS, DOC, Client

# prints what the methods attrs made for lsprotocol's classes are (a digest of each one's code), and
# how many sources were compiled, how many came from the cache and how many differ at each start (a
# default's repr with an address in it: compiled, never kept) (argv[1]: the cache directory, or
# "plain": the import as it is, without the cache)
PROBE = r"""
import hashlib, json, sys, types
from puppet_xpp.server.startup_cache import kept_compiled

def describe(code):
    parts = [code.co_code, repr(code.co_names), repr(code.co_varnames), code.co_filename,
             str(code.co_firstlineno), str(code.co_flags), code.co_qualname]
    parts += [describe(c) if isinstance(c, types.CodeType) else repr(c) for c in code.co_consts]
    return hashlib.sha256("\0".join(p if isinstance(p, str) else p.hex() for p in parts).encode()).hexdigest()

where = sys.argv[1]
if where == "plain":
    import lsprotocol.types
    import puppet_xpp.server.analysis.deep.types_model as ours
    counts = None
else:
    with kept_compiled(where) as cache:
        import lsprotocol.types
        import puppet_xpp.server.analysis.deep.types_model as ours
    counts = [cache.compiled, len(cache.used) - cache.compiled, cache.volatile]
    cache.save()
methods = {}
for module, made in ((lsprotocol.types, "__attrs_attrs__"), (ours, "__dataclass_fields__")):
    for name, cls in sorted(vars(module).items()):
        if isinstance(cls, type) and made in vars(cls):
            for m in ("__init__", "__eq__", "__repr__", "__hash__", "__setattr__", "__getstate__"):
                f = vars(cls).get(m)
                if isinstance(f, types.FunctionType):
                    methods[f"{module.__name__}.{name}.{m}"] = describe(f.__code__)
print(json.dumps({"counts": counts, "methods": methods}))
"""


def probe(where: str) -> dict[str, Any]:
    out = subprocess.run(
        [sys.executable, "-c", PROBE, where], capture_output=True, text=True, check=True, timeout=120
    )
    result: dict[str, Any] = json.loads(out.stdout)
    return result


def test_kept_code_is_what_compile_gives(tmp_path: Any) -> None:
    directory = str(tmp_path / "cache")
    plain = probe("plain")
    first = probe(directory)
    second = probe(directory)
    assert len(plain["methods"]) > 1000
    assert sum(1 for m in plain["methods"] if m.startswith("puppet_xpp.")) > 40  # (the dataclasses')
    compiled_first, from_cache_first, _volatile = first["counts"]
    assert compiled_first > 500 and from_cache_first == 0
    made, from_cache, volatile = second["counts"]
    assert made == 0 and from_cache + volatile == compiled_first  # everything from the cache
    assert volatile <= 2  # (cattrs' own AttributeOverride repr, whose source names an address)
    assert first["methods"] == plain["methods"]
    assert second["methods"] == plain["methods"]
    path = os.path.join(directory, startup_cache.CACHE_NAME)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(directory).st_mode) == 0o700


def test_a_damaged_code_cache_is_not_used_and_is_rewritten(tmp_path: Any) -> None:
    directory = str(tmp_path / "cache")
    compiled_first = probe(directory)["counts"][0]
    path = os.path.join(directory, startup_cache.CACHE_NAME)
    with open(path, "rb") as f:
        data = bytearray(f.read())
    data[len(data) // 2] ^= 0x55  # (inside a code object: its digest no longer matches)
    with open(path, "wb") as f:
        f.write(bytes(data))
    damaged = probe(directory)
    assert damaged["counts"][:2] == [compiled_first, 0]  # nothing of it used
    assert damaged["methods"] == probe("plain")["methods"]
    made, from_cache, volatile = probe(directory)["counts"]
    assert made == 0 and from_cache + volatile == compiled_first  # rewritten whole


def serve_once(tmp: Any) -> tuple[Any, Any]:
    """One ungated start of the server: its ``initialize`` result and the document symbols of DOC."""
    c = Client(tmp, gated=False)
    try:
        r = c.init(CAPS)
        assert r is not None and "result" in r
        c.notify("initialized", {})
        uri = "file://" + str(tmp / "demo.pp")
        c.notify(
            "textDocument/didOpen",
            {"textDocument": {"uri": uri, "languageId": "puppet", "version": 1, "text": DOC}},
        )
        i = c.request("textDocument/documentSymbol", {"textDocument": {"uri": uri}})
        symbols = c.response(i, timeout=60)
        assert symbols is not None
        s = c.request("shutdown")
        assert c.response(s, timeout=20) is not None
        c.notify("exit", None)
        assert c.p.wait(20) == 0
        return r["result"], symbols["result"]
    finally:
        c.close()


def test_a_second_start_compiles_nothing_and_answers_the_same(tmp_path: Any) -> None:
    first = serve_once(tmp_path)
    path = tmp_path / "cache" / startup_cache.CACHE_NAME
    before = os.stat(path)
    assert stat.S_IMODE(before.st_mode) == 0o600
    second = serve_once(tmp_path)
    assert second == first
    after = os.stat(path)  # nothing compiled: the file is not written again
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)


def test_the_first_messages_converters_are_kept(tmp_path: Any) -> None:
    """The converters cattrs generates for the server's first messages (``initialize``'s params and
    answer, a document's symbols: their structure and unstructure code) are compiled through the code
    cache too -- its window stays open until the first indexing is over or the server leaves -- and
    kept: a second start takes them from it (the file is not written again, as the test above checks)."""
    serve_once(tmp_path)
    cache = startup_cache.CodeCache.open(str(tmp_path / "cache"))
    made = sorted(code.co_filename for code in cache.old.values() if "cattrs" in code.co_filename)
    assert any("InitializeParams" in name for name in made), made
    assert any("DocumentSymbol" in name for name in made), made


def test_the_deep_checks_are_imported_after_the_first_index(tmp_path: Any) -> None:
    """The deep checks' modules, which the server's start no longer imports (tests/lsp/
    test_startup_imports.py), are imported once its first indexing is over -- before the first document
    usually comes -- inside the code cache's window: their dataclasses' methods are kept (a start that
    opens no document, shut down once the cache is written)."""
    from puppet_xpp.server.lsp.deep import DeepCache

    workspace = tmp_path / "ws"
    (workspace / "manifests").mkdir(parents=True)
    (workspace / "manifests" / "init.pp").write_text("class ws {}\n")
    c = Client(tmp_path, gated=False)
    try:
        uri = workspace.as_uri()
        i = c.request(
            "initialize",
            {
                "processId": os.getpid(),
                "rootUri": uri,
                "capabilities": CAPS,
                "workspaceFolders": [{"uri": uri, "name": "ws"}],
                "initializationOptions": {},
            },
        )
        assert c.response(i, timeout=60) is not None
        c.notify("initialized", {})
        path = tmp_path / "cache" / startup_cache.CACHE_NAME
        deadline = time.monotonic() + 60
        while not path.exists() and time.monotonic() < deadline:  # (written after the late imports)
            time.sleep(0.1)
        s = c.request("shutdown")
        assert c.response(s, timeout=20) is not None
        c.notify("exit", None)
        assert c.p.wait(20) == 0
    finally:
        c.close()
    cache = startup_cache.CodeCache.open(str(tmp_path / "cache"))
    kept = {f for code in cache.old.values() for f in _functions(code)}
    assert ("__init__", DeepCache.__init__.__code__.co_varnames) in kept


def _functions(code: Any) -> list[tuple[str, tuple[str, ...]]]:
    """(name, variable names) of every function compiled within ``code`` (its constants, recursively)."""
    import types

    out = []
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            out.append((c.co_name, c.co_varnames))
            out.extend(_functions(c))
    return out


def test_dataclasses_methods_come_from_the_cache(tmp_path: Any) -> None:
    """dataclasses executes a generated source for each method: inside ``kept_compiled`` that source is
    compiled once, kept, and the next start's class gets the kept code, with the same behaviour."""
    import dataclasses

    directory = str(tmp_path / "cache")

    def make() -> Any:
        @dataclasses.dataclass(frozen=True, order=True)
        class Point:
            x: int
            y: int = 2

        return Point

    runs = []
    for _start in range(2):
        with startup_cache.kept_compiled(directory) as cache:
            point = make()
        cache.save()
        runs.append((cache.compiled, len(cache.used) - cache.compiled))
        assert (
            point(1) == point(1, 2) and point(1) < point(2) and repr(point(3, 4)).endswith(".Point(x=3, y=4)")
        )
    assert runs[0][0] >= 5  # (__init__, __repr__, __eq__, the order methods, __hash__, __setattr__ ...)
    assert runs[1] == (0, runs[0][0])  # all from the cache at the second start
    assert "exec" not in vars(dataclasses)  # (the shim is gone after the block)


def test_a_new_dataclass_is_kept_at_once(tmp_path: Any) -> None:
    """A dataclass not in the cache (a module changed since it was written) is compiled and kept by the
    start that meets it: its source is the same at every start, unlike an attrs source of a file name
    the cache knows (every dataclass method is ``<string>``'s)."""
    import dataclasses

    directory = str(tmp_path / "cache")

    def point() -> Any:
        @dataclasses.dataclass
        class Point:
            x: int

        return Point

    def point3() -> Any:
        @dataclasses.dataclass
        class Point3:
            x: int
            y: int = 0
            z: int = 0

        return Point3

    runs = []
    for make in (point, point3, point3):
        with startup_cache.kept_compiled(directory) as cache:
            cls = make()
        cache.save()
        runs.append((cache.compiled, cache.volatile))
        assert cls(1) == cls(1)
    assert runs[1][0] >= 3 and runs[1][1] == 0  # (Point3's: compiled, and taken as new)
    assert runs[2] == (0, 0)  # (kept by the second start: all from the cache at the third)

#!/usr/bin/env python3
"""Find-references latency against a full re-index (issue 17: "references of a class used in 100+
files answers in <= 50 ms").

    python3 bench/bench_references.py [--files N] [--rounds R] [--corpus DIR]

Builds an environment with one class ``bench::common`` used by N generated classes (one file each, with
``include``, ``Class['...']`` and a qualified variable), plus the Debian module corpus when present
(``--corpus ''`` leaves it out) so the index holds realistic other names.  Measures:

* full index: parse every file once and fill the symbol and reference indexes (``references.build``);
* references of ``bench::common`` through the real server (textDocument/references over stdio, p50/max
  of R rounds, the cursor in one of the using files);
* the same query in-process (cursor look-up + index look-up), and re-extracting one changed document.

Prints a human summary and one JSON line.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)
CORPUS = "/usr/share/puppet/modules"


def build_env(root: str, n: int, corpus: str | None) -> str:
    env = os.path.join(root, "production")
    mods = os.path.join(env, "modules")
    os.makedirs(os.path.join(mods, "bench", "manifests", "use"), exist_ok=True)
    with open(os.path.join(env, "environment.conf"), "w") as f:
        f.write("modulepath = modules\n")
    with open(os.path.join(mods, "bench", "manifests", "common.pp"), "w") as f:
        f.write("class bench::common (String $motd = 'hi') {\n  file { '/etc/motd': content => $motd }\n}\n")
    for i in range(n):
        with open(os.path.join(mods, "bench", "manifests", "use", f"u{i}.pp"), "w") as f:
            f.write(
                f"class bench::use::u{i} (Integer $n = {i}) {{\n"
                "  include bench::common\n"
                f"  file {{ '/tmp/u{i}': content => \"${{bench::common::motd}} ${{n}}\" }}\n"
                f"  Class['bench::common'] -> File['/tmp/u{i}']\n"
                "  $list = [1, 2, 3].map |$x| { $x * $n }\n"
                "}\n"
            )
    if corpus and os.path.isdir(corpus):
        for m in sorted(os.listdir(corpus)):
            src = os.path.join(corpus, m)
            if os.path.isdir(src) and m != "bench":
                shutil.copytree(
                    src, os.path.join(mods, m), symlinks=True, ignore=shutil.ignore_patterns("spec")
                )
    return env


async def lsp_rounds(env: str, rounds: int) -> tuple[list[float], int]:
    import pytest_lsp
    from lsprotocol import types
    from pygls.lsp.client import LanguageClient

    c = LanguageClient("bench", "1")
    await c.start_io(sys.executable, "-m", "puppet_xpp")
    uri = "file://" + env
    await c.initialize_async(
        types.InitializeParams(
            capabilities=pytest_lsp.client_capabilities("visual_studio_code"),
            root_uri=uri,
            workspace_folders=[types.WorkspaceFolder(uri=uri, name="production")],
        )
    )
    c.initialized(types.InitializedParams())
    path = os.path.join(env, "modules", "bench", "manifests", "use", "u0.pp")
    text = open(path).read()
    c.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(
                uri="file://" + path, language_id="puppet", version=1, text=text
            )
        )
    )
    params = types.ReferenceParams(
        text_document=types.TextDocumentIdentifier(uri="file://" + path),
        position=types.Position(line=1, character=12),
        context=types.ReferenceContext(include_declaration=True),
    )
    # wait until the workspace is indexed (the count stops growing)
    last, stable = -1, 0
    while stable < 6:
        await asyncio.sleep(0.5)
        n = len(await c.text_document_references_async(params) or [])
        stable = stable + 1 if n == last else 0
        last = n
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        res = await c.text_document_references_async(params)
        times.append(time.perf_counter() - t0)
    await c.shutdown_async(None)
    c.exit(None)
    await c.stop()  # type: ignore[no-untyped-call]
    return times, len(res or [])


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", type=int, default=150)
    ap.add_argument("--rounds", type=int, default=30)
    ap.add_argument("--corpus", default=CORPUS)
    a = ap.parse_args()
    from puppet_xpp.grammar.check import CheckConfig
    from puppet_xpp.server.analysis import references
    from puppet_xpp.server.analysis.document import Document

    with tempfile.TemporaryDirectory() as tmp:
        env = build_env(tmp, a.files, a.corpus or None)
        t0 = time.perf_counter()
        idx, refs = references.build([env])
        t_index = time.perf_counter() - t0
        nfiles = len(refs.by_path)
        path = os.path.join(env, "modules", "bench", "manifests", "use", "u0.pp")
        doc = Document("file://" + path, open(path).read(), 1, CheckConfig(file=path))
        an = doc.analysis()
        t0 = time.perf_counter()
        refs.set_analysis(path, an)
        t_extract = time.perf_counter() - t0
        inproc = []
        for _ in range(a.rounds):
            t0 = time.perf_counter()
            ref = references.ref_at(refs.file_refs(path), 1, 12)
            assert ref is not None
            found = refs.refs(ref.key)
            inproc.append(time.perf_counter() - t0)
        times, n_lsp = asyncio.run(lsp_rounds(env, a.rounds))
    out = {
        "using_files": a.files,
        "indexed_files": nfiles,
        "references": len(found),
        "references_lsp": n_lsp,
        "full_index_s": round(t_index, 3),
        "reextract_one_document_ms": round(t_extract * 1000, 2),
        "references_inprocess_p50_ms": round(statistics.median(inproc) * 1000, 3),
        "references_lsp_p50_ms": round(statistics.median(times) * 1000, 2),
        "references_lsp_max_ms": round(max(times) * 1000, 2),
        "load": os.getloadavg()[0],
    }
    print(
        f"references of bench::common ({out['references']} places in {a.files}+ files; {nfiles} files indexed):\n"
        f"  through the server   p50 {out['references_lsp_p50_ms']} ms, max {out['references_lsp_max_ms']} ms\n"
        f"  in-process           p50 {out['references_inprocess_p50_ms']} ms\n"
        f"  full re-index        {out['full_index_s']} s   (one changed document: {out['reextract_one_document_ms']} ms)\n"
        f"  load average         {out['load']:.2f}"
    )
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())

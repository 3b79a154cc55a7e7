"""Lexer conformance on every corpus file (.pp and .epp): our tokens, warnings and errors equal Puppet's.

Apart because it reads the installed corpus (skipped without it) and is the slowest lexer test.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conformance.corpus import corpus_files
from tests.lexer_helpers import compare

# --------------------------------------------------------------------------------------------------
# the corpus

PP_FILES = corpus_files("pp")
EPP_FILES = corpus_files("epp")


def _read(path: str) -> str:
    return Path(path).read_bytes().decode("utf-8", "surrogateescape")


@pytest.fixture(scope="module")
def corpus_lexed(oracle):
    files = PP_FILES + EPP_FILES
    return dict(zip(files, oracle.call_many("lex", [{"file": f} for f in files])))


@pytest.mark.skipif(not PP_FILES and not EPP_FILES, reason="corpus not installed")
def test_corpus(corpus_lexed):
    bad = {}
    tokens = 0
    for path, res in corpus_lexed.items():
        if res["error"] is not None and not res["error"].get("issue_code"):
            bad[path] = [f"Puppet crashed: {res['error']}"]
            continue
        p = compare(_read(path), res, epp=path.endswith(".epp"))
        tokens += len(res["tokens"])
        if p:
            bad[path] = p
    print(
        f"\ncorpus: {len(corpus_lexed) - len(bad)}/{len(corpus_lexed)} files identical, {tokens} Puppet tokens"
    )
    assert bad == {}

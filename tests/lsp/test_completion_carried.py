"""The deep findings carried over a keystroke (server/lsp/deep.py ``carried``) run on the event loop at
every publish of a big manifest, where a completion request waits to be read (issue 31 item 3): they
are the published positions moved by the edit, not positions made again from a line index of the
whole text.  Random edits (lines added and removed, non-ASCII text, edits at the findings' own lines)
give exactly the positions made from the edited text (``carried_anew``, the rule before)."""

from __future__ import annotations

import os
import random
from typing import Any

from puppet_xpp.server.analysis.document import Document, LineIndex
from puppet_xpp.server.lsp import deep
from puppet_xpp.server.lsp.session import DocState, Session
from tests.lsp.test_references import write_files

FILES = {
    "environment.conf": "modulepath = modules\n",
    "modules/app/manifests/init.pp": "class app {\n}\n",
}

LINES = [
    "  include app::missing{k}\n",
    "  notify {{ 'héllo{k}': message => 'ünïcode 😀 {k}' }}\n",
    "  app::nosuch{k} {{ 'x{k}': }}\n",
    "  $v{k} = 'plain'\n",
]


def _text() -> str:
    return "class app::t {\n" + "".join(LINES[k % 4].format(k=k) for k in range(240)) + "}\n"


def _doc(tmp_path: Any) -> tuple[Session, DocState]:
    env = os.path.join(str(tmp_path), "production")
    write_files(env, FILES)
    session = Session()
    session.roots = [env]
    session.index_state.first_done = True
    uri = "file://" + os.path.join(env, "modules/app/manifests/t.pp")
    return session, DocState(uri, Document(uri, _text(), 1, session.config_for(uri)))


def _shape(found: list[Any]) -> list[tuple[object, ...]]:
    return [(d.start, d.end, d.severity, d.code, d.message, d.source, d.deprecated) for d in found]


def test_carried_positions_equal_those_made_from_the_edited_text(tmp_path: Any) -> None:
    session, st = _doc(tmp_path)
    session.documents[st.uri] = st
    rng = random.Random(31)
    pieces = ["", "x", "\n", "\n\n  ", "é", "😀\n", "  include app::new\n", "'", "{"]
    version = 1
    total = 0
    found = deep.check(session, st, version)
    assert found is not None and len(found) > 100
    for step in range(60):
        cache = st.deep
        assert cache is not None
        data = st.doc.data
        li = LineIndex(data, encoding=st.doc.encoding)
        if cache.findings and rng.random() < 0.5:  # before a finding on its line: its column moves
            at = max(0, rng.choice(cache.findings).offset - rng.randint(0, 2))
            end = at
        else:
            at = rng.randint(0, len(data) - 1)
            while at < len(data) and (data[at] & 0xC0) == 0x80:  # (a character's start)
                at += 1
            end = min(len(data), at + rng.choice([0, 0, 1, 3, 40]))
            while end < len(data) and (data[end] & 0xC0) == 0x80:
                end += 1
        st.doc.apply_change((li.position(at), li.position(end)), rng.choice(pieces))
        new = st.doc.data
        head = deep.common_head(cache.data, new)
        tail = deep.common_head(cache.data[head:][::-1], new[head:][::-1])
        expected = deep.carried_anew(st, cache, head, len(cache.data) - tail)
        got = deep.carried(st)
        assert _shape(got) == _shape(expected), step
        total += len(got)
        if step % 5 == 4:  # a check of the new text now and then: the next edits move its findings
            version += 1
            st.doc.version = version
            assert deep.check(session, st, version) is not None
    assert total > 600  # (findings were carried at most steps)

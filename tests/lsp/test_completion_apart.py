"""A big document's analyses run apart from the server's worker (Document.analyse_apart) on a thread
kept for the next one (server/analysis/document.py ``ApartThreads``): starting a thread per analysis
held the event loop at every keystroke in a 300 KB manifest while the next request (a completion,
issue 31 item 3) waited to be read.  The analyses are the same; two big documents still run at once."""

from __future__ import annotations

import threading

from puppet_xpp.grammar.check import CheckConfig
from puppet_xpp.server.analysis.document import APART_BYTES, Analysis, Document


class Recorded(Document):
    """A document that records the thread each of its analyses ran on."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.threads: list[threading.Thread] = []

    def analysis(self) -> Analysis:
        self.threads.append(threading.current_thread())
        return super().analysis()


def _big(name: str) -> Recorded:
    body = "".join(
        f"  file {{ '/srv/{k}':\n    ensure => file,\n  }}\n" for k in range(APART_BYTES // 40 + 10)
    )
    text = f"class {name} {{\n{body}}}\n"
    assert len(text) > APART_BYTES
    return Recorded(f"file:///w/{name}.pp", text, 1, CheckConfig(file=f"/w/{name}.pp"))


def test_analyses_apart_reuse_a_thread() -> None:
    doc = _big("big")
    for k in range(6):
        doc.apply_change(((5, 4), (5, 4)), "x" if k % 2 == 0 else "")
        job = doc.analyse_apart()
        assert job is not None
        job.result(timeout=120)
        assert doc.cached is not None and doc.cached.version == doc.version
    ran = doc.threads
    assert len(ran) == 6 and all(t.name == "puppet-apart" and t is not threading.main_thread() for t in ran)
    assert all(t is ran[0] for t in ran), {id(t) for t in ran}  # (one thread, kept)
    # the analysis apart is the one the worker then finds made: the same as a fresh document's
    fresh = Document("file:///w/fresh.pp", doc.text, 1, CheckConfig(file="/w/big.pp")).analysis()
    assert [d.message for d in doc.cached.diagnostics] == [d.message for d in fresh.diagnostics]


def test_two_big_documents_are_analysed_at_once() -> None:
    """One waiting for the other would delay it by a whole analysis: each gets a thread when the
    others are busy."""
    first, second = _big("one"), _big("two")
    started = threading.Event()
    release = threading.Event()

    class Slow(Recorded):
        def analysis(self) -> Analysis:
            started.set()
            release.wait(60)
            return super().analysis()

    slow = Slow("file:///w/slow.pp", first.text, 1, CheckConfig(file="/w/slow.pp"))
    held = slow.analyse_apart()
    assert held is not None and started.wait(60)
    job = second.analyse_apart()
    assert job is not None
    job.result(timeout=120)  # (while the slow one still runs)
    assert not held.done()
    release.set()
    held.result(timeout=120)
    assert second.threads[0] is not slow.threads[0]

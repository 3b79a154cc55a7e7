"""The language server's child processes (server/analysis/child_process.py: the lint worker, the index
workers) end quietly when the server is gone: no traceback on the user's stderr (the editor's log).

At the end of tests/lsp/test_huge_document.py the lint child printed a BrokenPipeError traceback: its
answer to the server, which had exited, failed; the child returned, and closing its answer pipe flushed
what was left of that answer into the broken pipe again."""

from __future__ import annotations

import os
import pickle
import struct
import subprocess

from puppet_xpp.server.analysis.child_process import Child


def test_a_child_whose_server_is_gone_exits_quietly() -> None:
    child_requests, requests = os.pipe()
    answers, child_answers = os.pipe()
    proc = subprocess.Popen(
        Child.command(child_requests, child_answers, "", 0),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        pass_fds=(child_requests, child_answers),
    )
    os.close(child_requests)
    os.close(child_answers)
    os.close(answers)  # (the server is gone: nobody reads the answer)
    body = pickle.dumps((bytes, (1 << 20,)), pickle.HIGHEST_PROTOCOL)  # (an answer of 1 MB)
    os.write(requests, struct.pack("!Q", len(body)) + body)
    os.close(requests)
    _out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0
    assert err.decode() == ""

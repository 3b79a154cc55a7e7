"""The temporary names of ``.xpp`` writes (xpp/compile/writes.py): ``.NAME.<pid>.<n>.tmp``, with the id of
the process that writes -- a forked ``--compile`` worker must not reuse its parent's id (were it kept
from before the fork), or two processes could pick the same name."""

from __future__ import annotations

import os

from puppet_xpp.xpp.compile import writes


def test_a_temporary_name_carries_the_writing_process_id_also_after_a_fork() -> None:
    assert writes._temp_name("x.xpp").split(".")[3] == str(os.getpid())
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: its own id, not the parent's
        try:
            os.write(write_end, writes._temp_name("x.xpp").encode())
        finally:
            os._exit(0)
    os.close(write_end)
    name = os.read(read_end, 200).decode()
    os.close(read_end)
    os.waitpid(pid, 0)
    assert name.split(".")[3] == str(pid)

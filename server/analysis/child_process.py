"""Python child processes that run the language server's module-level functions: the lint child
(server/analysis/lint_pool.py) and the indexing workers (server/analysis/index_pool.py).  No pygls here.

Why not :mod:`multiprocessing`: the server has threads, so its children must be started afresh (no
``fork``), and multiprocessing's ``spawn`` also starts its resource tracker -- one more Python process,
~15 MB of RSS for as long as the server runs, for semaphores the server never leaks -- and imports its
own machinery in the server and in every child.  (``--compile``'s pool, xpp/compile/workers.py, forks:
the command line has no threads.)  Here a child is ``python -c`` with the server's module path, two pipes
(requests in, answers out: a length, then a pickle), its standard input and output on /dev/null (the
server's are the LSP stream) and its standard error the server's (its log).

* A call is ``(function, arguments)``, the function pickled by name: the child imports its module, runs
  it and answers ``(True, result)`` or ``(False, the exception)``, which is raised again in the server.
* A child that dies (killed, out of memory) is seen as the end of its answer pipe: the call it held
  raises :class:`ChildDied`.  A child whose server is gone sees the end of its request pipe and exits
  (the server's ends are never inherited by another process).
* :class:`Workers` is ``n`` children serving one queue of calls (each call a
  :class:`concurrent.futures.Future`, cancellable until a child takes it), one thread per child waiting
  on its answers (the pipes release the interpreter lock).
"""

from __future__ import annotations

import importlib
import os
import pickle
import queue
import struct
import sys
import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import subprocess

_HEADER = struct.Struct("!Q")  # a frame: the pickle's length, then the pickle


class ChildDied(OSError):
    """The child process stopped (killed, out of memory, could not start) before it answered."""


def _read_frame(stream: Any) -> bytes | None:
    """One frame's pickle from a binary stream, None at its end (or a frame cut short)."""
    head = stream.read(_HEADER.size)
    if len(head) < _HEADER.size:
        return None
    (size,) = _HEADER.unpack(head)
    body: bytes = stream.read(size)
    return body if len(body) == size else None


def _write_frame(stream: Any, body: bytes) -> None:
    stream.write(_HEADER.pack(len(body)))
    stream.write(body)
    stream.flush()


def _answer(result: tuple[bool, Any]) -> bytes:
    """The pickle of an answer; an exception that does not pickle is sent as its type name and text."""
    try:
        return pickle.dumps(result, pickle.HIGHEST_PROTOCOL)
    except Exception:
        ok, value = result
        why = f"{type(value).__name__}: {value}" if not ok else "the result does not pickle"
        return pickle.dumps((False, RuntimeError(why)), pickle.HIGHEST_PROTOCOL)


def serve(requests_fd: int, answers_fd: int, init: str, nice: int) -> int:
    """The child's loop: ``init`` (a module to import or ``module:function`` to call, "" for none) once,
    then each call answered, until the end of the request pipe (the server closed it, or is gone)."""
    if nice:
        try:
            os.nice(nice)
        except OSError:  # not allowed here: the server's priority
            pass
    if init:  # a module to import, or ``module:function`` to call
        module, _, name = init.partition(":")
        imported = importlib.import_module(module)
        if name:
            getattr(imported, name)()
    requests = os.fdopen(requests_fd, "rb")
    answers = os.fdopen(answers_fd, "wb")
    try:
        while True:
            body = _read_frame(requests)
            if body is None:
                return 0
            try:
                fn, args = pickle.loads(body)
                result: tuple[bool, Any] = (True, fn(*args))
            except Exception as e:
                result = (False, e)
            try:
                _write_frame(answers, _answer(result))
            except OSError:  # (the server is gone)
                return 0
    finally:
        requests.close()
        try:
            answers.close()
        except OSError:  # (the server is gone: what the answer had left in the buffer goes nowhere)
            pass


def child_main() -> None:
    """``python -c``'s entry in the child (see :meth:`Child.command`)."""
    requests_fd, answers_fd, nice = (int(x) for x in sys.argv[1:4])
    sys.exit(serve(requests_fd, answers_fd, sys.argv[4], nice))


class Child:
    """One child process (started at once; ``init``: the module it imports or ``module:function`` it runs
    first, see :func:`serve`; ``nice``: added to its CPU niceness).  :meth:`call` is one call at a time (a lock)."""

    def __init__(self, init: str = "", nice: int = 0) -> None:
        import subprocess  # (here: the child imports this module too, and needs none of it)

        if not sys.executable:
            raise ChildDied("no Python executable to start")
        child_requests, requests = os.pipe()
        answers, child_answers = os.pipe()
        try:
            self.proc: subprocess.Popen[bytes] = subprocess.Popen(
                self.command(child_requests, child_answers, init, nice),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                pass_fds=(child_requests, child_answers),
            )
        except BaseException:
            for fd in (requests, answers):
                os.close(fd)
            raise
        finally:
            os.close(child_requests)
            os.close(child_answers)
        self.requests = os.fdopen(requests, "wb")
        self.answers = os.fdopen(answers, "rb")
        self.lock = threading.Lock()
        self.died = ""  # why the child is gone ("" while it serves)

    @staticmethod
    def command(requests_fd: int, answers_fd: int, init: str, nice: int) -> list[str]:
        """``python -c`` with the server's module path (the server may have been started with a path the
        environment does not give, as multiprocessing's ``spawn`` passes it too)."""
        code = (
            f"import sys; sys.path[:] = {sys.path!r}; "
            "from puppet_xpp.server.analysis.child_process import child_main; child_main()"
        )
        return [sys.executable, "-c", code, str(requests_fd), str(answers_fd), str(nice), init]

    @property
    def pid(self) -> int:
        return self.proc.pid

    def call(self, fn: Callable[..., Any], *args: Any) -> Any:
        """``fn(*args)`` in the child: its result, or its exception raised here; :class:`ChildDied` when
        the child stopped first (it is then closed)."""
        body = pickle.dumps((fn, args), pickle.HIGHEST_PROTOCOL)
        with self.lock:
            if self.died:
                raise ChildDied(self.died)
            try:
                _write_frame(self.requests, body)
                answer = _read_frame(self.answers)
            except (OSError, ValueError):  # (ValueError: a pipe closed by close())
                answer = None
            if answer is None:
                self.died = self.died or self._why()
                self.close()
                raise ChildDied(self.died)
        ok, value = pickle.loads(answer)
        if ok:
            return value
        raise value

    def _why(self) -> str:
        import subprocess

        try:
            status = self.proc.wait(timeout=1.0)
        except subprocess.TimeoutExpired:
            return "the child process stopped answering"
        return f"the child process exited (status {status})"

    def close(self) -> None:
        """Stop the child (killed: it may be in the middle of a call nobody waits for), reap it, and close
        the pipes (after the kill: a thread waiting on the answer pipe holds the pipe until it ends)."""
        import subprocess

        self.died = self.died or "closed"
        if self.proc.poll() is None:
            try:
                self.proc.kill()
                self.proc.wait(timeout=5.0)
            except (OSError, subprocess.TimeoutExpired):
                pass
        for stream in (self.requests, self.answers):
            try:
                stream.close()
            except OSError:
                pass


class Workers:
    """``n`` children serving one queue of calls, in the order submitted."""

    def __init__(self, n: int, init: str = "", nice: int = 0, name: str = "puppet-xpp-child") -> None:
        self.queue: queue.SimpleQueue[tuple[Future[Any], Callable[..., Any], tuple[Any, ...]] | None] = (
            queue.SimpleQueue()
        )
        self.broken = ""  # why the pool stopped (a child died), "" while it works
        self.closed = False
        self.children: list[Child] = []
        try:
            for _ in range(n):
                self.children.append(Child(init, nice))
        except BaseException:
            self.close()
            raise
        for k, child in enumerate(self.children):
            threading.Thread(target=self._serve, args=(child,), name=f"{name}-{k}", daemon=True).start()

    def submit(self, fn: Callable[..., Any], *args: Any) -> Future[Any]:
        """``fn(*args)`` in the first child free; :class:`ChildDied` when the pool is broken or closed."""
        if self.broken or self.closed:
            raise ChildDied(self.broken or "closed")
        future: Future[Any] = Future()
        self.queue.put((future, fn, args))
        return future

    def _serve(self, child: Child) -> None:
        """A child's thread: the queue's calls, until the pool is closed or the child dies (the pool is
        then broken: every call waiting fails with :class:`ChildDied`, the others' children go on)."""
        while True:
            item = self.queue.get()
            if item is None:
                self._fail_waiting()
                return
            future, fn, args = item
            if not future.set_running_or_notify_cancel():
                continue
            if self.closed or self.broken:
                future.set_exception(ChildDied(self.broken or "closed"))
                continue
            try:
                future.set_result(child.call(fn, *args))
            except ChildDied as e:
                self.broken = self.broken or str(e)
                future.set_exception(e)
                self._fail_waiting()
                return
            except BaseException as e:
                future.set_exception(e)

    def _fail_waiting(self) -> None:
        """Every call still queued fails with :class:`ChildDied` (the stop marks found are put back:
        they are the other children's threads')."""
        stops = 0
        while True:
            try:
                item = self.queue.get_nowait()
            except queue.Empty:
                break
            if item is None:
                stops += 1
            elif item[0].set_running_or_notify_cancel():
                item[0].set_exception(ChildDied(self.broken or "closed"))
        for _ in range(stops):
            self.queue.put(None)

    def close(self) -> None:
        """Stop every child; the calls not started fail with :class:`ChildDied`."""
        self.closed = True
        for _ in self.children:
            self.queue.put(None)
        for child in self.children:
            child.close()
        self._fail_waiting()

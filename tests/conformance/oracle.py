"""Python client of the Ruby conformance oracle (``tests/conformance/ruby/oracle.rb``).

The oracle is the real Puppet, running in one long-lived Ruby process per Python process (so every
pytest-xdist worker has its own). It is started lazily on the first request that misses the disk cache,
restarted if it dies, and shared by all threads (requests are serialised by a lock).

    from tests.conformance.oracle import Oracle, OracleError
    oracle = Oracle.get()                        # Puppet 7.23; Oracle.get("8"): OpenVox 8 (tests/conformance/puppets.py)
    oracle.call("pn", source="$a = 1")          # -> {"^": ["=", {"^": ["var", "a"]}, 1]}
    oracle.call("pn", file="/path/x.pp")         # file read by Ruby as UTF-8
    oracle.request("pn", source="$a =")          # -> the whole answer: {"ok": False, "error": ..., ...}
    oracle.call_many("pn", [{"source": s} for s in sources])   # pipelined; errors returned, not raised

Answers are cached on disk under ``$PUPPET_XPP_ORACLE_CACHE`` (default ``<repo>/.cache/oracle``; set it to
``off`` to disable). The key hashes the op, its arguments, the contents of any ``file``/``files`` argument,
the oracle's Ruby sources, which Puppet answers (``7.23`` or ``8``) and that Puppet's version file, so a change
to any of them misses the cache (and the two Puppets never share an answer).
Answers that report a failure of the oracle itself (timeout, crash) are never cached.
"""

from __future__ import annotations

import hashlib
import json
import os
import select
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
RUBY_DIR = Path(__file__).resolve().parent / "ruby"
ORACLE_RB = RUBY_DIR / "oracle.rb"
PUPPET_VERSION_FILE = Path("/usr/lib/ruby/vendor_ruby/puppet/version.rb")

# Per-request time limit (seconds) before the Ruby process is considered hung and killed.
DEFAULT_TIMEOUT = float(os.environ.get("PUPPET_XPP_ORACLE_TIMEOUT", "120"))

# Answer classes that describe a failure of the oracle process rather than Puppet's answer.
_TRANSIENT = {"OracleTimeout", "OracleDied"}


class OracleError(Exception):
    """A request answered with ``ok: false`` (e.g. a Puppet syntax error), or an oracle failure."""

    def __init__(self, response: dict):
        self.response = response
        self.error = response.get("error")
        self.cls = response.get("class")
        self.issue_code = response.get("issue_code")
        self.line = response.get("line")
        self.pos = response.get("pos")
        super().__init__(f"{self.cls}: {self.error}")


class OracleUnavailable(RuntimeError):
    """Ruby or Puppet is missing, or the oracle process cannot be started."""


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _version_file(puppet: str) -> Path | None:
    """The ``puppet/version.rb`` of the given Puppet (None when it is not available)."""
    if puppet == "7.23":
        return PUPPET_VERSION_FILE
    from tests.conformance.puppets import openvox_lib

    lib = openvox_lib()
    return lib / "puppet" / "version.rb" if lib is not None else None


def _code_version(puppet: str = "7.23") -> str:
    h = hashlib.sha256()
    for p in sorted(RUBY_DIR.rglob("*.rb")):
        h.update(str(p.relative_to(RUBY_DIR)).encode())
        h.update(p.read_bytes())
    if puppet != "7.23":  # (7.23's keys stay as they were: its cached answers remain valid)
        h.update(f"puppet={puppet};".encode())
    vf = _version_file(puppet)
    try:
        h.update(vf.read_bytes() if vf is not None else b"(absent)")
    except OSError:
        pass
    return h.hexdigest()


def _file_digest(path: Any) -> str | None:
    try:
        return _sha(Path(str(path)).read_bytes())
    except OSError:
        return None


class _Cache:
    def __init__(self, root: Path | None):
        self.root = root

    def _path(self, key: str) -> Path:
        assert self.root is not None
        return self.root / key[:2] / f"{key}.json"

    def get(self, key: str) -> dict | None:
        if self.root is None:
            return None
        try:
            return json.loads(self._path(key).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None

    def put(self, key: str, answer: dict) -> None:
        if self.root is None or answer.get("class") in _TRANSIENT:
            return
        path = self._path(key)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump(answer, f, ensure_ascii=False)
            os.replace(tmp, path)
        except OSError:
            pass


def default_cache_root() -> Path | None:
    env = os.environ.get("PUPPET_XPP_ORACLE_CACHE")
    if env is not None and env.strip().lower() in ("off", "0", "no", "none", "false"):
        return None
    return Path(env) if env else REPO / ".cache" / "oracle"


class Oracle:
    """One Ruby oracle process (started lazily) plus the disk cache."""

    _instances: dict[str, Oracle] = {}
    _instance_pid: int | None = None
    _instance_lock = threading.Lock()

    @classmethod
    def get(cls, puppet: str = "7.23") -> Oracle:
        """The process-wide oracle of the given Puppet (``"7.23"`` or ``"8"``; new ones after a fork)."""
        with cls._instance_lock:
            if cls._instance_pid != os.getpid():
                cls._instances = {}
                cls._instance_pid = os.getpid()
            if puppet not in cls._instances:
                cls._instances[puppet] = cls(puppet=puppet)
            return cls._instances[puppet]

    def __init__(
        self,
        cache_root: Path | None | str = "default",
        timeout: float = DEFAULT_TIMEOUT,
        puppet: str = "7.23",
    ):
        self.puppet = puppet
        self.cache = _Cache(
            default_cache_root()
            if cache_root == "default"
            else (Path(cache_root) if cache_root is not None else None)
        )
        self.timeout = timeout
        self._lock = threading.RLock()
        self._proc: subprocess.Popen | None = None
        self._stderr = None
        self._buf = b""
        self._next_id = 0
        self._version: str | None = None

    # ------------------------------------------------------------------ public API

    def call(self, op: str, **args: Any) -> Any:
        """The op's result; raises OracleError when the answer is ``ok: false``."""
        answer = self.request(op, **args)
        if not answer.get("ok"):
            raise OracleError(answer)
        return answer["result"]

    def request(self, op: str, **args: Any) -> dict:
        """The whole answer dict (``ok``, ``result`` or ``error``/``class``/...), without ``id``."""
        return self.request_many(op, [args])[0]

    def call_many(self, op: str, args_list: Iterable[dict]) -> list:
        """Pipelined ``call``: one entry per args dict, the result or an OracleError instance (not raised)."""
        return [a["result"] if a.get("ok") else OracleError(a) for a in self.request_many(op, args_list)]

    def request_many(self, op: str, args_list: Iterable[dict]) -> list[dict]:
        """Pipelined ``request``: all cache misses are written to Ruby, then all answers read."""
        args_list = [dict(a) for a in args_list]
        keys = [self._key(op, a) for a in args_list]
        answers: list[dict | None] = [self.cache.get(k) for k in keys]
        missing = [i for i, a in enumerate(answers) if a is None]
        if missing:
            fresh = self._send([(op, args_list[i]) for i in missing])
            for i, a in zip(missing, fresh):
                answers[i] = a
                self.cache.put(keys[i], a)
        return answers  # type: ignore[return-value]

    def close(self) -> None:
        with self._lock:
            self._stop()

    # ------------------------------------------------------------------ cache key

    def _key(self, op: str, args: dict) -> str:
        if self._version is None:
            self._version = _code_version(self.puppet)
        files: dict[str, Any] = {}
        for name in ("file", "files"):
            if name in args and args[name] is not None:
                v = args[name]
                files[name] = (
                    [_file_digest(x) for x in v] if isinstance(v, (list, tuple)) else _file_digest(v)
                )
        rel = any(isinstance(v, str) and not os.path.isabs(v) for v in _paths(args))
        blob = json.dumps(
            {"v": self._version, "op": op, "args": args, "files": files, "cwd": os.getcwd() if rel else None},
            sort_keys=True,
            ensure_ascii=True,
            default=str,
        )
        return _sha(blob.encode())

    # ------------------------------------------------------------------ process

    def _start(self) -> None:
        self._stop()
        from tests.conformance.puppets import ruby_command

        try:
            command = ruby_command(self.puppet) + [str(ORACLE_RB)]
        except RuntimeError as e:
            raise OracleUnavailable(str(e)) from e
        self._stderr = tempfile.TemporaryFile()
        try:
            self._proc = subprocess.Popen(
                command,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=self._stderr,
                cwd=str(REPO),
                bufsize=0,
            )
        except OSError as e:
            raise OracleUnavailable(f"cannot start the Ruby oracle: {e}") from e
        self._buf = b""

    def _stop(self) -> None:
        proc, self._proc = self._proc, None
        if proc is not None:
            try:
                proc.stdin.close()
            except OSError:
                pass
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            proc.stdout.close()
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None

    def _stderr_tail(self) -> str:
        if self._stderr is None:
            return ""
        try:
            self._stderr.seek(0, os.SEEK_END)
            size = self._stderr.tell()
            self._stderr.seek(max(0, size - 2000))
            return self._stderr.read().decode("utf-8", "replace")
        except (OSError, ValueError):
            return ""

    def _send(self, requests: list[tuple[str, dict]]) -> list[dict]:
        with self._lock:
            for attempt in (1, 2):
                if self._proc is None or self._proc.poll() is not None:
                    self._start()
                try:
                    return self._exchange(requests)
                except _Died as e:
                    tail = self._stderr_tail()
                    self._stop()
                    if attempt == 2:
                        return [_failure("OracleDied", f"oracle process died: {e}\n{tail}")] * len(requests)
                except _Timeout as e:
                    self._kill()
                    return e.partial + [_failure("OracleTimeout", f"no answer within {self.timeout}s")] * (
                        len(requests) - len(e.partial)
                    )
            raise AssertionError("unreachable")

    def _kill(self) -> None:
        if self._proc is not None:
            self._proc.kill()
        self._stop()

    def _exchange(self, requests: list[tuple[str, dict]]) -> list[dict]:
        proc = self._proc
        assert proc is not None
        cwd = os.getcwd()
        ids = []
        lines = []
        for op, args in requests:
            self._next_id += 1
            ids.append(self._next_id)
            msg = dict(args)
            msg.update(id=self._next_id, op=op, _cwd=cwd)
            lines.append(json.dumps(msg, ensure_ascii=True) + "\n")
        payload = "".join(lines).encode()
        # Write from a thread so that a large batch cannot deadlock against Ruby's full stdout pipe.
        write_error: list[BaseException] = []

        def writer() -> None:
            try:
                proc.stdin.write(payload)
                proc.stdin.flush()
            except (OSError, ValueError) as exc:
                write_error.append(exc)

        t = threading.Thread(target=writer, daemon=True)
        t.start()
        answers: list[dict] = []
        try:
            for want in ids:
                line = self._readline(proc)
                try:
                    a = json.loads(line)
                except ValueError as exc:
                    raise _Died(f"unreadable answer {line[:200]!r}") from exc
                if a.get("id") != want:
                    raise _Died(f"answer id {a.get('id')} where {want} was expected")
                a.pop("id", None)
                answers.append(a)
        except _Timeout as e:
            e.partial = answers
            raise
        finally:
            t.join(timeout=1)
        if write_error and len(answers) < len(ids):
            raise _Died(str(write_error[0]))
        return answers

    def _readline(self, proc: subprocess.Popen) -> bytes:
        fd = proc.stdout.fileno()
        deadline = time.monotonic() + self.timeout
        while True:
            nl = self._buf.find(b"\n")
            if nl >= 0:
                line, self._buf = self._buf[:nl], self._buf[nl + 1 :]
                return line
            left = deadline - time.monotonic()
            if left <= 0:
                raise _Timeout()
            ready, _, _ = select.select([fd], [], [], left)
            if not ready:
                continue
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                raise _Died(f"end of output (exit status {proc.poll()})")
            self._buf += chunk


class _Died(Exception):
    pass


class _Timeout(Exception):
    partial: list = []


def _failure(cls: str, msg: str) -> dict:
    return {"ok": False, "error": msg, "class": cls}


def _paths(args: dict):
    for name in ("file", "files", "manifest", "modulepath"):
        v = args.get(name)
        if isinstance(v, (list, tuple)):
            yield from v
        elif v is not None:
            yield v


def ruby_available() -> bool:
    """True when the oracle can run here (ruby and Puppet installed)."""
    return ORACLE_RB.exists() and PUPPET_VERSION_FILE.exists() and _which("ruby")


def _which(name: str) -> bool:
    from shutil import which

    return which(name) is not None


def oracle_for(puppet: str) -> Oracle:
    """The oracle of the given Puppet for a test: skips (with the reason) when that Puppet is absent.

    Under CI a missing Puppet 7.23 fails the test; a missing OpenVox tarball skips everywhere (it is test
    data that may not be shipped), but a tarball that is present and does not answer fails."""
    import pytest

    from tests.conformance.puppets import missing_reason

    why = missing_reason(puppet) if ruby_available() else "Ruby/Puppet oracle not available"
    if why is not None:
        if os.environ.get("CI") and (puppet == "7.23" or "tarball" not in why):
            pytest.fail(why)
        pytest.skip(f"Puppet {puppet} oracle: {why}")
    o = Oracle.get(puppet)
    ping = o.request("ping")
    if not ping.get("ok"):
        pytest.fail(f"the Puppet {puppet} oracle does not answer: {ping.get('error')}")
    return o

"""What a source file is allowed to be, how it is read, and what a failure on one file becomes.

Every entry point that reads Puppet sources (``--validate``, ``--dump``, ``--compile`` in both forms, the
language server's ``.xpp`` on save) reads them through :func:`read_source`, and every other reader of the
files of a workspace (``--lint`` and ``--lint --fix``, ``--references``, the workspace index of manifests
and Ruby files, Hiera data) through :func:`read_bytes` or :func:`read_text`, so they all agree on:

* **Only regular files are sources.**  A FIFO, device, socket or directory named ``*.pp`` (or a symbolic
  link to one, e.g. to ``/dev/zero``) is reported with one ``UNREADABLE_FILE`` diagnostic and never read:
  reading a FIFO blocks for ever, ``/dev/zero`` until memory runs out.  The file is opened with
  ``O_NONBLOCK`` and checked again on the open descriptor, so a swap between the check and the open
  cannot make us block either.
* **A size limit**: a source larger than :data:`DEFAULT_MAX_BYTES` (or the ``PUPPET_XPP_MAX_SOURCE_SIZE``
  environment variable, in bytes; ``--max-source-size`` where a command offers it) is refused the same
  way, without reading it.
* **Invalid UTF-8** is Puppet's ``invalid byte sequence in UTF-8`` (Ruby's ArgumentError; Puppet gives
  no position), reported as ``INVALID_ENCODING`` for the whole file, after the byte-order-mark check
  that Puppet makes first (a file starting with a byte order mark goes to the parser, which reports
  ``ILLEGAL_BOM``).
* **Reading as someone else** (``as_user``): when root compiles an environment (``--compile``, the
  language server's save), sources are opened with the environment owner's user, group and
  supplementary groups, so a source the owner cannot read (e.g. a symbolic link to a root-only file) is
  refused instead of being copied into an ``.xpp`` the owner can read; ``--lint --fix`` reads a file as
  the owner of its directory (:func:`directory_owner`).  See :func:`narrowed_mode` for the other half of
  that rule, and :mod:`xpp.compile.writes` for writing (never through a link).

:func:`internal_error` turns any exception raised while handling one file into that file's
``INTERNAL_ERROR`` diagnostic (type and a one-line reason); callers log the traceback only when asked
(``--debug``, the language server's log).  :func:`shown` is the one escaping rule for file names that are
not valid UTF-8.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass

from puppet_xpp.grammar.issues import Diagnostic

DEFAULT_MAX_BYTES = 16 * 1024 * 1024
MAX_BYTES_ENV = "PUPPET_XPP_MAX_SOURCE_SIZE"

_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def max_bytes(value: int | None = None) -> int:
    """The size limit in force: ``value`` when given, else the environment variable, else the default."""
    if value is not None:
        return value
    env = os.environ.get(MAX_BYTES_ENV, "").strip()
    if env:
        try:
            n = int(env)
            if n > 0:
                return n
        except ValueError:
            pass
    return DEFAULT_MAX_BYTES


@dataclass
class Source:
    """A source as read: ``text`` (None when not read) or the one diagnostic that stands for the file.

    ``text`` can be set together with an ``INVALID_ENCODING`` diagnostic (decoded with surrogateescape,
    for a caller that wants to show it anyway); such a text is never parsed."""

    text: str | None
    diagnostic: Diagnostic | None
    stat: os.stat_result | None = None

    @property
    def ok(self) -> bool:
        return self.diagnostic is None


def shown(path: str) -> str:
    """A file name as text that is always valid UTF-8: bytes that are not UTF-8 (which Python keeps as
    lone surrogates, ``os.fsdecode``) become ``\\xNN``.  The one rule for text and JSON output."""
    try:
        path.encode("utf-8")
        return path
    except UnicodeEncodeError:
        pass
    out = []
    for ch in path:
        o = ord(ch)
        if 0xDC80 <= o <= 0xDCFF:
            out.append(f"\\x{o - 0xDC00:02x}")
        elif 0xD800 <= o <= 0xDFFF:
            out.append(f"\\u{o:04x}")
        else:
            out.append(ch)
    return "".join(out)


def _refused(display: str, reason: str, st: os.stat_result | None = None) -> Raw:
    return Raw(
        None,
        Diagnostic.make("UNREADABLE_FILE", None, 0, {"file": display, "reason": reason}, file=display),
        st,
    )


def _kind(mode: int) -> str | None:
    for test, name in _KINDS:
        if test(mode):
            return name
    return None if stat.S_ISREG(mode) else "not a regular file"


def decode(data: bytes, display: str) -> Source:
    """Text of source bytes, or Puppet's invalid-UTF-8 error (after its byte-order-mark check)."""
    try:
        return Source(data.decode("utf-8"), None)
    except UnicodeDecodeError:
        pass
    from puppet_xpp.grammar.lexer_text import byte_order_mark

    text = data.decode("utf-8", "surrogateescape")
    if byte_order_mark(text) is not None:
        return Source(text, None)  # Puppet rejects the byte order mark first: the parser says so
    return Source(text, Diagnostic.make("INVALID_ENCODING", None, 0, {}, file=display))


@dataclass
class Raw:
    """A file as read by :func:`read_bytes`: its bytes (None when not read) or the one diagnostic that
    stands for it, and the stat of what was read (taken on the open descriptor)."""

    data: bytes | None
    diagnostic: Diagnostic | None
    stat: os.stat_result | None = None


def read_bytes(
    path: str,
    display: str | None = None,
    *,
    limit: int | None = None,
    as_user: tuple[int, int] | None = None,
) -> Raw:
    """The bytes at ``path`` by the rules above (a regular file, the size limit, ``as_user``); never
    raises for a problem of the file itself.  The one reader of every file that is Puppet code or data
    for it (manifests, the Ruby and YAML files the workspace index reads), whatever it is decoded as."""
    display = shown(display if display is not None else path)
    limit = max_bytes(limit)
    try:
        with _as(as_user):
            st = os.stat(path)
            kind = _kind(st.st_mode)
            if kind is not None:
                return _refused(display, f"{kind}, not a regular file: not read", st)
            if st.st_size > limit:
                return _refused(display, f"larger than the source size limit ({limit} bytes): not read", st)
            fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    except FileNotFoundError:
        return Raw(
            None, Diagnostic.make("NO_SUCH_FILE_OR_DIRECTORY", None, 0, {"file": display}, file=display)
        )
    except OSError as e:
        return _refused(display, e.strerror or str(e))
    try:
        st = os.fstat(fd)  # what was opened, not what was checked
        kind = _kind(st.st_mode)
        if kind is not None:
            return _refused(display, f"{kind}, not a regular file: not read", st)
        chunks = []
        got = 0
        while got <= limit:
            b = os.read(fd, min(1 << 20, limit + 1 - got))
            if not b:
                break
            chunks.append(b)
            got += len(b)
        if got > limit:
            return _refused(display, f"larger than the source size limit ({limit} bytes): not read", st)
    except OSError as e:
        return _refused(display, e.strerror or str(e))
    finally:
        os.close(fd)
    return Raw(b"".join(chunks), None, st)


def read_source(
    path: str,
    display: str | None = None,
    *,
    limit: int | None = None,
    as_user: tuple[int, int] | None = None,
) -> Source:
    """Read the source at ``path`` by the rules above (:func:`read_bytes`, then :func:`decode`); never
    raises for a problem of the file itself.

    ``display`` names the file in diagnostics (default: ``path``); ``as_user`` is (uid, gid) to open it
    as (root only)."""
    display = shown(display if display is not None else path)
    raw = read_bytes(path, display, limit=limit, as_user=as_user)
    if raw.data is None:
        return Source(None, raw.diagnostic, raw.stat)
    src = decode(raw.data, display)
    src.stat = raw.stat
    return src


def read_text(
    path: str,
    *,
    errors: str = "surrogateescape",
    limit: int | None = None,
    as_user: tuple[int, int] | None = None,
) -> str | None:
    """The text of a file Puppet code or data reads (a Ruby or YAML file, a module's metadata) by the
    rules of :func:`read_bytes`, decoded as UTF-8 with ``errors``; None when it is not read (missing,
    unreadable, not a regular file, over the size limit)."""
    raw = read_bytes(path, limit=limit, as_user=as_user)
    return None if raw.data is None else raw.data.decode("utf-8", errors)


def read_or_raise(path: str, *, limit: int | None = None) -> bytes:
    """The bytes of a file by the rules of :func:`read_bytes`, for readers whose contract is ``OSError``
    (``environment.conf``, the project configuration, ``.gitignore``/``.pdkignore``, an ``.xpp`` read
    back by ``--verify``/``--dump``): a FIFO or device raises instead of blocking or reading for ever."""
    raw = read_bytes(path, limit=limit)
    if raw.data is not None:
        return raw.data
    diagnostic = raw.diagnostic
    if diagnostic is not None and diagnostic.code == "NO_SUCH_FILE_OR_DIRECTORY":
        raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), path)
    reason = str(diagnostic.args.get("reason", "not read")) if diagnostic is not None else "not read"
    raise OSError(errno.EINVAL, reason, path)


def directory_owner(path: str) -> tuple[int, int] | None:
    """As root: (uid, gid) of whoever controls the name ``path`` (the owner of its directory), to read it
    as (``as_user``), so a link they planted to a file they cannot read is refused; None when not root,
    when the directory is root's, or when it cannot be looked at.  The ``--lint --fix`` counterpart of
    the environment owner ``--compile`` reads as."""
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        return None
    try:
        st = os.stat(os.path.dirname(os.path.abspath(path)))
    except OSError:
        return None
    return None if st.st_uid == 0 else (st.st_uid, st.st_gid)


@contextlib.contextmanager
def _as(user: tuple[int, int] | None) -> Iterator[None]:
    """Run the body with effective user/group ``user`` (and that user's supplementary groups)."""
    if user is None or not hasattr(os, "seteuid") or os.geteuid() != 0 or user[0] == 0:
        yield
        return
    uid, gid = user
    groups = os.getgroups()
    egid = os.getegid()
    try:
        import pwd

        name = pwd.getpwuid(uid).pw_name
        extra = os.getgrouplist(name, gid)
    except (KeyError, OSError):
        extra = [gid]
    os.setgroups(extra)
    os.setegid(gid)
    os.seteuid(uid)
    try:
        yield
    finally:
        os.seteuid(0)
        os.setegid(egid)
        os.setgroups(groups)


def narrowed_mode(mode: int, src: os.stat_result | None, gid: int | None = None) -> int:
    """``mode`` for an ``.xpp`` (which embeds its source's text), never wider than the source's own
    permissions: each class keeps only what the source grants it; group permission is kept only for the
    source's own group (for another group ``gid``, only what the source grants everyone)."""
    if src is None:
        return mode
    s = stat.S_IMODE(src.st_mode)
    user = mode & s & 0o700
    other = mode & s & 0o007
    if gid is None or gid == src.st_gid:
        group = mode & s & 0o070
    else:
        group = mode & (s & 0o007) << 3
    return user | group | other


def internal_error(exc: BaseException, display: str) -> Diagnostic:
    """The ``INTERNAL_ERROR`` diagnostic of a failure inside puppet-xpp on one file."""
    reason = (str(exc).strip().splitlines() or [""])[0][:300] or repr(exc)
    display = shown(display)
    return Diagnostic.make(
        "INTERNAL_ERROR", None, 0, {"type": type(exc).__name__, "reason": reason}, file=display
    )


def format_traceback(exc: BaseException) -> str:
    import traceback  # (imported for --debug's tracebacks only: not in every process that reads a file)

    return "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))

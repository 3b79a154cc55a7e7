"""How puppet-xpp writes files: never through a link it did not choose, never over what it does not own.

* :class:`AnchoredTree` - the ``ENVDIR/.xpp`` tree, touched only through directory descriptors opened
  from its root down without following links (``--compile``, the language server's ``.xpp`` on save).
* :func:`write_output` - a file a user names (``-o``, ``--report``): through a symbolic link to its
  target, directly into a FIFO or character device, never over the source or a directory.
* :func:`rewrite_source` - a source rewritten in place (``--lint --fix``): only the regular file that
  was read, with one link, inside the tree; never through a symbolic link; its mode and owner kept.

Regular files are always replaced atomically (temporary file in the same directory + rename), so a
killed run leaves only complete files and temporary files named ``.NAME.<pid>.<n>.tmp``.
"""

from __future__ import annotations

import itertools
import os
import stat
import tempfile
from collections.abc import Callable


class OutputRefused(OSError):
    """:func:`write_output` will not write there (a directory, the source itself, ...)."""


def write_output(path: str, data: bytes, *, mode: int | None = None, sources: tuple[str, ...] = ()) -> None:
    """Write a file the user named (``-o PATH``, a report, a fixed manifest) without replacing what it
    does not own; every command that writes a file a user names goes through here.

    * a new path or a regular file: atomic (temporary file in its directory + rename);
    * a symbolic link: written through to its target (atomically, in the target's directory), the
      link stays;
    * a FIFO or character device (``-o /dev/stdout``): written directly, never replaced;
    * a directory, a block device, a socket, or one of ``sources`` (the input itself): refused with
      :class:`OutputRefused` and a clear message."""

    try:
        st: os.stat_result | None = os.stat(path)  # what the path leads to (links followed)
    except FileNotFoundError:
        st = None
    target = os.path.realpath(path) if os.path.islink(path) else path
    # /dev/stdout, /dev/fd/N, /proc/self/fd/N: an already open file of ours, written in place
    direct = st is not None and (path.startswith("/dev/") or target.startswith("/proc/"))
    if st is not None:
        for src in sources:
            try:
                if os.path.samefile(src, target):
                    raise OutputRefused(f"refusing to write {path}: it is the source {src} itself")
            except FileNotFoundError:
                continue
        if stat.S_ISDIR(st.st_mode):
            raise OutputRefused(f"refusing to write {path}: it is a directory")
        if stat.S_ISFIFO(st.st_mode) or stat.S_ISCHR(st.st_mode) or (direct and stat.S_ISREG(st.st_mode)):
            append = os.O_APPEND if stat.S_ISREG(st.st_mode) else 0
            fd = os.open(path, os.O_WRONLY | os.O_NOCTTY | os.O_CLOEXEC | append)
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view) :]
            finally:
                os.close(fd)
            return
        if not stat.S_ISREG(st.st_mode):
            raise OutputRefused(f"refusing to write {path}: not a regular file, FIFO or character device")
    d = os.path.dirname(target) or "."
    if not os.path.isdir(d):
        raise OutputRefused(f"cannot write {path}: no such directory {d}")

    def set_mode(fd: int) -> None:
        if mode is not None:
            os.fchmod(fd, mode)
        elif st is not None:
            os.fchmod(fd, stat.S_IMODE(st.st_mode))
        else:
            mask = os.umask(0o022)
            os.umask(mask)
            os.fchmod(fd, 0o666 & ~mask)

    _replace(target, data, set_mode)


def rewrite_source(path: str, data: bytes, read: os.stat_result, *, within: str | None = None) -> None:
    """Replace the source ``path`` (``read``: the stat of what was read, on its descriptor) by ``data``:
    a temporary file created exclusively in its directory (through that directory's descriptor), given
    the original's mode and owner, then renamed over the name.  Refused (:class:`OutputRefused`) when the
    name is now a symbolic link, not a regular file, a file with another hard link, not the file that
    was read, or (``within``) when its directory is outside that tree: run as root over a tree someone
    else can write, a planted link never gets root to write, re-own or re-mode a file elsewhere."""
    d = os.path.dirname(os.path.abspath(path))
    name = os.path.basename(path)
    dfd = os.open(d, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        if within is not None:  # where the descriptor is (a component swapped for a link since is seen)
            opened = f"/proc/self/fd/{dfd}"
            real = os.readlink(opened) if os.path.islink(opened) else os.path.realpath(d)
            top = os.path.realpath(within)
            if real != top and not real.startswith(top.rstrip(os.sep) + os.sep):
                raise OutputRefused(f"refusing to write {path}: it is outside {within}")
        st = os.stat(name, dir_fd=dfd, follow_symlinks=False)
        if stat.S_ISLNK(st.st_mode):
            raise OutputRefused(f"refusing to write {path}: it is a symbolic link (not written through)")
        if not stat.S_ISREG(st.st_mode):
            raise OutputRefused(f"refusing to write {path}: not a regular file")
        if st.st_nlink != 1:
            raise OutputRefused(f"refusing to write {path}: it has {st.st_nlink} hard links")
        if (st.st_dev, st.st_ino) != (read.st_dev, read.st_ino):
            raise OutputRefused(f"refusing to write {path}: it was replaced since it was read")

        def keep_owner_and_mode(fd: int) -> None:
            mine = os.fstat(fd)
            if (mine.st_uid, mine.st_gid) != (st.st_uid, st.st_gid):
                try:
                    os.fchown(fd, st.st_uid, st.st_gid)
                except PermissionError:
                    if os.geteuid() == 0:
                        raise
            os.fchmod(fd, stat.S_IMODE(st.st_mode))

        replace_at(dfd, name, data, keep_owner_and_mode)
    finally:
        os.close(dfd)


def write_atomic(
    path: str, data: bytes, mode: int | None = None, owner: tuple[int, int] | None = None
) -> None:
    """Write ``data`` to ``path`` atomically (creating directories); raises OSError on failure.
    ``mode`` (e.g. 0o644) and ``owner`` ((uid, gid)) are applied to the temporary file before the rename.
    A plain write for tools that make a tree by hand (``--compile`` writes through :class:`AnchoredTree`)."""
    d = os.path.dirname(path) or "."
    if not os.path.isdir(d):  # (a failing mkdir costs more than a stat)
        os.makedirs(d, exist_ok=True)

    def set_owner_and_mode(fd: int) -> None:
        if owner is not None:
            os.fchown(fd, *owner)
        if mode is not None:
            os.fchmod(fd, mode)

    _replace(path, data, set_owner_and_mode)


def _replace(path: str, data: bytes, prepare: Callable[[int], None]) -> None:
    """Replace ``path`` by ``data`` atomically: a temporary file in its directory (``prepare`` gets its
    descriptor after the data is written), then a rename; the temporary file goes on any failure."""
    fd, tmp = tempfile.mkstemp(
        prefix="." + os.path.basename(path) + ".", suffix=".tmp", dir=os.path.dirname(path) or "."
    )
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            prepare(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


_COUNT = itertools.count()


def _temp_name(name: str) -> str:
    """``.NAME.<pid>.<n>.tmp``: a new name per call, distinct between processes (a name left by a killed
    run whose pid was ours is skipped by the caller's exclusive create)."""
    return f".{name}.{os.getpid()}.{next(_COUNT)}.tmp"


def replace_at(dfd: int, name: str, data: bytes, prepare: Callable[[int], None]) -> os.stat_result:
    """Replace ``name`` in the directory ``dfd`` by ``data``: a temporary file created exclusively there
    (never through a link), ``prepare`` given its descriptor after the data is written (owner, mode),
    then renamed over ``name``; the temporary file goes on any failure.  Returns the stat of the file
    written (taken on its descriptor: the rename keeps inode, size and modification time)."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    while True:
        tmp = _temp_name(name)
        try:
            fd = os.open(tmp, flags, 0o600, dir_fd=dfd)
            break
        except FileExistsError:  # left by a killed run of a process with our pid: another name
            continue
    try:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            prepare(fd)
            st = os.fstat(fd)
        finally:
            os.close(fd)
        os.replace(tmp, name, src_dir_fd=dfd, dst_dir_fd=dfd)
    except BaseException:
        try:
            os.unlink(tmp, dir_fd=dfd)
        except OSError:
            pass
        raise
    return st


_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


class UnsafePath(OSError):
    """A component of a path below an anchored tree is a symbolic link or not a directory."""


class AnchoredTree:
    """A directory tree (``ENVDIR/.xpp``) that is only ever touched through directory descriptors opened
    from its root down without following symbolic links (``openat``-style, ``dir_fd=``).

    Checking a path and writing it later is a race: whoever can write the tree can swap a directory for
    a symbolic link in between and redirect a (root) compile's writes anywhere.  Here each component is
    opened with ``O_DIRECTORY | O_NOFOLLOW`` relative to its parent's descriptor, and files are created,
    renamed, read and removed relative to the descriptor of their directory, so a swapped link makes that
    one operation fail (:class:`UnsafePath`) and never escape.  Paths are relative to the root, with
    ``/`` separators.  Descriptors of recently used directories are kept (at most ``keep``)."""

    def __init__(
        self, root: str, *, dir_mode: int = 0o755, owner: tuple[int, int] | None = None, keep: int = 32
    ):
        self.root = root
        self.dir_mode = dir_mode
        self.owner = owner
        self.keep = keep
        self._fds: dict[str, int] = {}
        self.created: set[str] = set()  # directories (relative) this object created
        self._made = False
        parent, name = os.path.split(os.path.abspath(root))
        pfd = os.open(parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)  # the environment may be a link
        try:
            self.root_fd = self._open_child(pfd, name, create=True, where=root)
        finally:
            os.close(pfd)

    def _open_child(self, parent_fd: int, name: str, *, create: bool, where: str) -> int:
        if name in ("", ".", "..") or "/" in name:
            raise UnsafePath(f"refusing to use {where}: bad path component {name!r}")
        try:
            return os.open(name, _DIR_FLAGS, dir_fd=parent_fd)
        except FileNotFoundError:
            if not create:
                raise
        except OSError as e:
            raise self._why(parent_fd, name, where, e) from None
        try:
            os.mkdir(name, self.dir_mode, dir_fd=parent_fd)
            made = True
        except FileExistsError:
            made = False
        try:
            fd = os.open(name, _DIR_FLAGS, dir_fd=parent_fd)
        except OSError as e:
            raise self._why(parent_fd, name, where, e) from None
        self._made = made
        if made:
            if self.owner is not None:
                os.fchown(fd, *self.owner)
            os.fchmod(fd, self.dir_mode)  # not subject to the umask
        return fd

    @staticmethod
    def _why(parent_fd: int, name: str, where: str, e: OSError) -> OSError:
        try:
            st = os.stat(name, dir_fd=parent_fd, follow_symlinks=False)
        except OSError:
            return e

        if stat.S_ISLNK(st.st_mode):
            return UnsafePath(f"refusing to write below {where}: it is a symbolic link")
        if not stat.S_ISDIR(st.st_mode):
            return UnsafePath(f"refusing to write below {where}: not a directory")
        return e

    def dir_fd(self, rel_dir: str, *, create: bool = False) -> int:
        """Descriptor of directory ``rel_dir`` ('' for the root), created (with parents) when asked."""
        rel_dir = rel_dir.strip("/")
        if not rel_dir:
            return self.root_fd
        fd = self._fds.get(rel_dir)
        if fd is not None:
            return fd
        head, _, name = rel_dir.rpartition("/")
        parent = self.dir_fd(head, create=create)
        self._made = False
        fd = self._open_child(parent, name, create=create, where=os.path.join(self.root, rel_dir))
        if self._made:
            self.created.add(rel_dir)
        if len(self._fds) >= self.keep:
            old = next(iter(self._fds))
            os.close(self._fds.pop(old))
        self._fds[rel_dir] = fd
        return fd

    def _split(self, rel: str, create: bool = False) -> tuple[int, str]:
        head, _, name = rel.strip("/").rpartition("/")
        return self.dir_fd(head, create=create), name

    def write(
        self, rel: str, data: bytes, mode: int | None = None, owner: tuple[int, int] | None = None
    ) -> os.stat_result:
        """Atomically replace file ``rel`` with ``data`` (temporary file in its directory + rename).
        Returns the stat of the file written (taken on its descriptor: the rename keeps inode, size and
        modification time), so the caller needs no second look-up."""
        dfd, name = self._split(rel, create=True)

        def set_owner_and_mode(fd: int) -> None:
            if owner is not None:
                os.fchown(fd, *owner)
            if mode is not None:
                os.fchmod(fd, mode)

        return replace_at(dfd, name, data, set_owner_and_mode)

    def read(self, rel: str) -> bytes | None:
        """Contents of regular file ``rel`` (None when missing, a link or unreadable)."""
        try:
            dfd, name = self._split(rel)
            fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=dfd)
        except OSError:
            return None
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                return None
            with os.fdopen(fd, "rb", closefd=False) as f:
                return f.read()
        except OSError:
            return None
        finally:
            os.close(fd)

    def stat(self, rel: str) -> os.stat_result:
        dfd, name = self._split(rel)
        return os.stat(name, dir_fd=dfd, follow_symlinks=False)

    def chmod(self, rel: str, mode: int) -> None:
        dfd, name = self._split(rel)
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=dfd)
        try:
            os.fchmod(fd, mode)
        finally:
            os.close(fd)

    def unlink(self, rel: str) -> None:
        dfd, name = self._split(rel)
        os.unlink(name, dir_fd=dfd)

    def forget(self) -> None:
        """Close the cached directory descriptors (kept: the root)."""
        for fd in self._fds.values():
            os.close(fd)
        self._fds.clear()

    def close(self) -> None:
        self.forget()
        if self.root_fd >= 0:
            os.close(self.root_fd)
            self.root_fd = -1

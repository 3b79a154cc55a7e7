"""The ``ENVDIR/.xpp`` tree of an environment: its safety checks, owner, lock and sweep.

Safety: nothing is written outside ``ENVDIR/.xpp`` or inside a module directory.  ``.xpp`` itself and
every directory below it must be real directories (a symbolic link there is refused with a message),
and every write goes through directory descriptors opened from ``.xpp`` down without following links
(:class:`xpp.compile.writes.AnchoredTree`), so a link swapped in during the run cannot redirect it.

One compile per environment at a time (:func:`lock`, ``.xpp/compile.lock``, created exclusively and never
re-owned: :func:`open_lock`); the lock holder is the only
writer, so it may remove every temporary file a killed run left (:func:`sweep`).
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterable

from puppet_xpp.xpp.compile import layout, writes
from puppet_xpp.xpp.compile.model import CompileError, Events, Options
from puppet_xpp.xpp.environment import MODULE_NAME, Environment

__all__ = [
    "OutputTree",
    "LOCK_FILE",
    "MODULES_FRESH",
    "cannot_create",
    "make_dir",
    "lock",
    "open_lock",
    "sweep",
    "owner_for",
    "module_dirs",
]

LOCK_FILE = "compile.lock"
# ``.xpp/modules`` relative to ``.xpp``: when a run creates it (a cold compile), nothing below it exists
MODULES_FRESH = "modules"
_TMP_NAME = re.compile(r"\..+\.xpp\..+\.tmp\Z")


def _is_within(path: str, parent: str) -> bool:
    return path == parent or path.startswith(parent.rstrip(os.sep) + os.sep)


def owner_for(env: Environment, opts: Options) -> tuple[int, int] | None:
    """(uid, gid) to give the files (root: ENVDIR's owner), or None (ours; nothing to change)."""
    chown = opts.chown if opts.chown is not None else (hasattr(os, "geteuid") and os.geteuid() == 0)
    if not chown:
        return None
    st = os.stat(env.root)
    if (st.st_uid, st.st_gid) == (os.geteuid(), os.getegid()):
        return None  # already ours: no chown, no change of user to read sources
    return st.st_uid, st.st_gid


def module_dirs(env: Environment) -> list[str]:
    """The module directories of the environment's module path (one listing per modulepath entry)."""
    out: list[str] = []
    for d in env.modulepath:
        try:
            out.extend(e.path for e in os.scandir(d) if e.is_dir() and MODULE_NAME.match(e.name))
        except OSError:
            continue
    return out


class OutputTree:
    """The ``.xpp`` tree of an environment, written only through directory descriptors
    (:class:`xpp.compile.writes.AnchoredTree`: no component is followed if it is a symbolic link, so a
    directory swapped for a link during a run makes that file fail, never escape the tree)."""

    def __init__(self, env: Environment, opts: Options, owner: tuple[int, int] | None) -> None:
        self.env = env
        self.dir_mode = opts.dir_mode
        self.owner = owner
        self.anchored: writes.AnchoredTree | None = None

    def check_root(self, module_dirs: Iterable[str]) -> None:
        root = self.env.xpp_root
        if os.path.islink(root):
            raise CompileError(
                f"refusing to write: {root} is a symbolic link (to {os.readlink(root)}); the "
                ".xpp tree must be a real directory of the environment"
            )
        if os.path.lexists(root) and not os.path.isdir(root):
            raise CompileError(f"refusing to write: {root} exists and is not a directory")
        # a module directory that is .xpp or one of the directories above it (the real ones: links
        # resolved).  Told by identity (device, inode) rather than by resolving each module's path: the
        # directories above .xpp are a handful, the modules of a module path hundreds (their realpath was
        # a tenth of the compiling process's time before its plan)
        real_root = os.path.join(os.path.realpath(self.env.root), layout.XPP_DIR)
        above: set[tuple[int, int]] = set()
        d = real_root
        while True:
            try:
                st = os.stat(d)
                above.add((st.st_dev, st.st_ino))
            except OSError:
                pass  # (.xpp before the first compile: no module can be it)
            parent = os.path.dirname(d)
            if parent == d:
                break
            d = parent
        for m in module_dirs:
            try:
                st = os.stat(m)
            except OSError:
                continue  # (gone since it was listed: nothing is written into it)
            if (st.st_dev, st.st_ino) in above:
                raise CompileError(f"refusing to write: {root} would be inside the module directory {m}")

    def open(self) -> writes.AnchoredTree:
        """The anchored tree (``.xpp`` created when missing); CompileError when it is unsafe."""
        if self.anchored is None:
            try:
                self.anchored = writes.AnchoredTree(
                    self.env.xpp_root, dir_mode=self.dir_mode, owner=self.owner
                )
            except writes.UnsafePath as e:
                raise CompileError(str(e)) from None
            except OSError as e:
                raise CompileError(f"cannot open {self.env.xpp_root}: {e.strerror or e}") from None
        return self.anchored

    def rel(self, path: str) -> str:
        """``path`` (below the .xpp root) relative to it, '/'-separated; CompileError outside."""
        root = self.env.xpp_root
        rel = os.path.relpath(path, root)
        if rel == "." or not _is_within(path, root) or ".." in rel.split(os.sep):
            raise CompileError(f"refusing to write outside {root}: {path}")
        return rel.replace(os.sep, "/")

    def ensure_dir(self, d: str) -> None:
        """Create directory ``d`` (below the .xpp root) and its parents; OSError/CompileError."""
        tree = self.open()
        if d == self.env.xpp_root:
            return
        try:
            tree.dir_fd(self.rel(d), create=True)
        except writes.UnsafePath as e:
            raise CompileError(str(e)) from None

    def close(self) -> None:
        if self.anchored is not None:
            self.anchored.close()
            self.anchored = None


def cannot_create(d: str, e: OSError) -> str:
    """What the compile reports for each file below a directory it could not create."""
    return f"cannot create {d}: {e.strerror or e}"


def make_dir(anchored: writes.AnchoredTree, rel_dir: str, shown: str) -> str | None:
    """Create ``rel_dir`` (below the anchored ``.xpp`` tree, '/'-separated) and its parents, as
    :meth:`OutputTree.ensure_dir` does (a worker of a cold compile, for the directory of the file it
    writes): None, or why not (``shown``: the directory's path in the message)."""
    try:
        anchored.dir_fd(rel_dir, create=True)
    except writes.UnsafePath as e:
        return str(e)
    except OSError as e:
        return cannot_create(shown, e)
    return None


def lock(tree: OutputTree, opts: Options, events: Events) -> int:
    """Take the environment's compile lock (``.xpp/compile.lock``, ``flock``): one compile per environment
    at a time.  Busy: wait (telling ``events.waiting`` once) or, with ``wait=False``, CompileError.
    Returns the lock's descriptor (closing it releases the lock)."""
    import fcntl

    env = tree.env
    try:
        env_owner = os.stat(env.root).st_uid
    except OSError:
        env_owner = os.geteuid()
    fd = open_lock(
        tree.open(), os.path.join(env.xpp_root, LOCK_FILE), opts.file_mode & 0o666, {env_owner, os.geteuid()}
    )
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return fd
    except BlockingIOError:
        pass
    if not opts.wait:
        os.close(fd)
        raise CompileError(
            f"{env.display}: another compile of this environment is running (lock "
            f"{os.path.join(env.xpp_root, LOCK_FILE)} held); not waiting (--no-wait)"
        )
    events.waiting(env)
    fcntl.flock(fd, fcntl.LOCK_EX)
    return fd


_LOCK_FLAGS = os.O_RDWR | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC


def open_lock(anchored: writes.AnchoredTree, shown: str, mode: int, expected: set[int]) -> int:
    """The descriptor of the lock file in the tree's root, created exclusively (the tree's owner and
    ``mode`` set on the file we just made), or, when it exists, opened only when it is a regular file
    with one link owned by one of the ``expected`` users (the environment's owner, us): never re-owned or
    re-moded once it exists.  Anything else is refused with :class:`CompileError` (exit 2): a hard link
    planted as ``compile.lock`` would otherwise have root change the owner and mode of whatever file it
    links to."""
    root_fd = anchored.root_fd
    owner = anchored.owner
    for _attempt in range(5):
        try:
            fd = os.open(LOCK_FILE, _LOCK_FLAGS | os.O_CREAT | os.O_EXCL, 0o600, dir_fd=root_fd)
        except FileExistsError:
            pass
        except OSError as e:
            raise CompileError(f"cannot create {shown}: {e.strerror or e}") from None
        else:
            try:
                if owner is not None:
                    os.fchown(fd, *owner)
                os.fchmod(fd, mode)  # holds nothing: the tree's file mode
            except OSError as e:
                os.close(fd)
                raise CompileError(f"cannot set the owner and mode of {shown}: {e.strerror or e}") from None
            return fd
        try:
            before = os.stat(LOCK_FILE, dir_fd=root_fd, follow_symlinks=False)
        except FileNotFoundError:
            continue  # removed since: create it
        except OSError as e:
            raise CompileError(f"cannot open {shown}: {e.strerror or e}") from None
        _check_lock(before, shown, expected)  # before opening: never open a device or a FIFO
        try:
            fd = os.open(LOCK_FILE, _LOCK_FLAGS, dir_fd=root_fd)
        except FileNotFoundError:
            continue
        except OSError as e:
            raise CompileError(f"cannot open {shown}: {e.strerror or e}") from None
        try:
            st = os.fstat(fd)
            if (st.st_dev, st.st_ino) != (before.st_dev, before.st_ino):
                raise CompileError(f"refusing to use {shown}: it was replaced while being opened")
            _check_lock(st, shown, expected)
        except BaseException:
            os.close(fd)
            raise
        return fd
    raise CompileError(f"cannot open {shown}: it keeps appearing and disappearing")


def _check_lock(st: os.stat_result, shown: str, expected: set[int]) -> None:
    if stat.S_ISLNK(st.st_mode):
        raise CompileError(f"refusing to use {shown}: it is a symbolic link")
    if not stat.S_ISREG(st.st_mode):
        raise CompileError(f"refusing to use {shown}: not a regular file")
    if st.st_nlink != 1:
        raise CompileError(
            f"refusing to use {shown}: it has {st.st_nlink} hard links (a lock file has one); remove it"
        )
    if st.st_uid not in expected:
        raise CompileError(
            f"refusing to use {shown}: owned by uid {st.st_uid}, not by the environment's owner; remove it"
        )


def sweep(tree: writes.AnchoredTree, env: Environment, expected: set[str], events: Events) -> list[str]:
    """Remove .xpp files no source maps to, every temporary file (the caller holds the lock, so none is
    being written) and directories left empty, below ``.xpp/modules``, through directory descriptors
    (``os.fwalk`` does not follow links)."""
    removed: list[str] = []
    try:
        base_fd = tree.dir_fd("modules")
    except OSError:
        return removed
    for d, dirs, files, dfd in os.fwalk(".", dir_fd=base_fd, topdown=False, follow_symlinks=False):
        rel_d = "" if d == "." else d[2:]
        for f in files:
            rel = f"{rel_d}/{f}" if rel_d else f
            if f.endswith(".xpp") and rel not in expected:
                try:
                    st = os.stat(f, dir_fd=dfd, follow_symlinks=False)
                    if not stat.S_ISREG(st.st_mode) and not stat.S_ISLNK(st.st_mode):
                        continue
                    os.unlink(f, dir_fd=dfd)
                except OSError:
                    continue
                p = os.path.join(env.out_base, rel)
                removed.append(p)
                events.removed(p)
            elif _TMP_NAME.match(f):
                try:
                    os.unlink(f, dir_fd=dfd)
                except OSError:
                    pass
        for sub in dirs:
            try:
                os.rmdir(sub, dir_fd=dfd)  # fails unless empty
            except OSError:
                pass
    return removed

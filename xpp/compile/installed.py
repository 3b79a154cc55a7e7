"""The Puppet that will read the tree: ``--compile --puppet-version auto`` (the default).

An ``.xpp`` records the language level it was validated at when its result depends on it, and a Puppet
uses only files of its own level (``runtime/xpp``), so a tree compiled at another level than the
installed Puppet's is parsed again file by file.  ``auto`` asks the ``puppet`` on ``PATH`` for its
version (``puppet --version``) and compiles at the level :func:`grammar.levels.level_of_puppet` gives;
with no ``puppet`` there (or one that does not answer with a version), the default level with a note.

``puppet --version`` starts Ruby and loads Puppet (about a second), and a deploy hook compiles several
environments in separate processes, so the answer is cached in
``$XDG_CACHE_HOME/puppet-xpp/puppet-version.json`` (``~/.cache`` by default) under a key made of the
command's resolved path, its file's identity (inode, size, times: a package upgrade replaces it) and the
environment variables that change which Puppet Ruby loads (``RUBYLIB``, ``RUBYOPT``, ``GEM_HOME``,
``GEM_PATH``, ``BUNDLE_GEMFILE``); an entry older than a day is asked again (a gem upgraded under an
unchanged wrapper).  A cache that cannot be read or written is only not used.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from dataclasses import dataclass
from typing import Any

from puppet_xpp.grammar import levels

__all__ = ["Detection", "detect", "cache_path"]

MAX_AGE = 24 * 3600.0  # seconds a cached answer is trusted
TIMEOUT = 120.0  # seconds ``puppet --version`` may take (a loaded machine, a cold disk)
RUBY_ENV = ("RUBYLIB", "RUBYOPT", "GEM_HOME", "GEM_PATH", "BUNDLE_GEMFILE")


@dataclass(frozen=True)
class Detection:
    """What ``auto`` decided (recorded in the compile report)."""

    level: str  # the language level to compile at
    command: str | None  # the puppet found on PATH (resolved), None when there is none
    version: str | None  # its ``puppet --version``
    cached: bool  # the version came from the cache
    note: str | None  # why the default level is used (no puppet, no version, an unknown release)

    def report(self) -> dict[str, Any]:
        return {
            "level": self.level,
            "source": "auto",
            "command": self.command,
            "version": self.version,
            "cached": self.cached,
            "note": self.note,
        }


def cache_path() -> str:
    from puppet_xpp import user_cache_dir

    return user_cache_dir("puppet-version.json")


def _key(command: str) -> str:
    st = os.stat(command)
    env = "|".join(f"{name}={os.environ.get(name, '')}" for name in RUBY_ENV)
    return f"{command}|{st.st_ino}|{st.st_size}|{st.st_mtime_ns}|{st.st_ctime_ns}|{env}"


def _read_cache(path: str) -> dict[str, Any]:
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _write_cache(path: str, data: dict[str, Any]) -> None:
    """Temporary file + rename: a concurrent compile reads the old or the new cache, never half of one."""
    import tempfile  # (imported when the cache is written: not in every --compile process)

    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".puppet-version.", dir=os.path.dirname(path))
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump(data, f)
            os.replace(tmp, path)
        except BaseException:
            os.unlink(tmp)
            raise
    except OSError:
        pass


def _ask(command: str) -> str | None:
    """``command --version``'s version (its last line that looks like one), None when it gives none."""
    import subprocess  # (imported when Puppet is asked: not in every --compile process)

    try:
        out = subprocess.run(
            [command, "--version"],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            errors="replace",
            timeout=TIMEOUT,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    for line in reversed(out.stdout.splitlines()):
        line = line.strip()
        if line[:1].isdigit() and "." in line:
            return line
    return None


_detected: Detection | None = None


def detect(*, use_cache: bool = True) -> Detection:
    """The level of the ``puppet`` on ``PATH`` (once per process; see the module docstring)."""
    global _detected
    if _detected is not None:
        return _detected
    default = levels.DEFAULT_LEVEL
    found = shutil.which("puppet")
    if found is None:
        _detected = Detection(default, None, None, False, f"no puppet on PATH: language level {default}")
        return _detected
    command = os.path.realpath(found)
    cache = cache_path()
    now = time.time()
    version: str | None = None
    cached = False
    try:
        key: str | None = _key(command)
    except OSError:
        key = None
    entries = _read_cache(cache) if use_cache and key is not None else {}
    entry = entries.get(key) if key is not None else None
    if isinstance(entry, dict) and isinstance(entry.get("version"), str):
        age = now - float(entry.get("time", 0))
        if 0 <= age < MAX_AGE:
            version, cached = entry["version"], True
    if version is None:
        version = _ask(found)
        if version is not None and use_cache and key is not None:
            fresh = {
                k: v for k, v in entries.items() if isinstance(v, dict) and now - v.get("time", 0) < MAX_AGE
            }
            fresh[key] = {"version": version, "time": now}
            _write_cache(cache, fresh)
    if version is None:
        note = f"{found} --version gave no version: language level {default}"
        _detected = Detection(default, command, None, False, note)
        return _detected
    lv = levels.level_of_puppet(version)
    if lv is None:
        note = f"{found} is Puppet {version}, which no language level answers like: language level {default}"
        _detected = Detection(default, command, version, cached, note)
        return _detected
    _detected = Detection(lv.name, command, version, cached, None)
    return _detected

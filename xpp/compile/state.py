"""The incremental state of ``--compile``: ``ENVDIR/.xpp/compile-state.json`` and the fingerprints.

The state records, per output (its path below ``.xpp/modules``), the stat of the source and of the
``.xpp`` written and the file's diagnostics, plus a fingerprint of the settings and of the compiler's own
code (:func:`settings_fingerprint`).  A file whose two stats match is up to date without being read; the
state's diagnostics are its report.  With other settings (or other code) the state is not used.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from puppet_xpp.xpp.compile.model import DiagnosticRow, FileResult, Validation

if TYPE_CHECKING:
    from puppet_xpp.xpp.compile.model import Options
    from puppet_xpp.xpp.compile.writes import AnchoredTree
    from puppet_xpp.xpp.environment import Environment

__all__ = [
    "STATE_FILE",
    "STATE_VERSION",
    "State",
    "Entry",
    "source_signature",
    "xpp_signature",
    "code_fingerprint",
    "settings_fingerprint",
]

STATE_FILE = "compile-state.json"
STATE_VERSION = 1


def source_signature(st: os.stat_result) -> list[int]:
    """What must stay equal for a source to be taken as unchanged without reading it."""
    return [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev]


def xpp_signature(st: os.stat_result) -> list[int]:
    """What must stay equal for an ``.xpp`` to be taken as the one this compile wrote."""
    return [st.st_size, st.st_mtime_ns, st.st_ino]


@dataclass(frozen=True)
class Entry:
    """One output's record in the state file."""

    src: str
    recorded: str
    source_stat: list[int]
    xpp_stat: list[int]
    diagnostics: list[DiagnosticRow]

    @classmethod
    def load(cls, value: Any) -> Entry | None:
        """The entry of a JSON value (None when it is not one)."""
        try:
            return cls(
                value["src"],
                value["recorded"],
                list(value["s"]),
                list(value["x"]),
                [DiagnosticRow(*row) for row in value.get("diags") or []],
            )
        except (TypeError, KeyError, ValueError):
            return None

    def dump(self) -> dict[str, Any]:
        return _record(self.src, self.recorded, self.source_stat, self.xpp_stat, self.diagnostics)


def _record(
    src: str, recorded: str, source_stat: list[int], xpp_stat: list[int], diagnostics: list[DiagnosticRow]
) -> dict[str, Any]:
    """An entry as the state file stores it (:meth:`Entry.load` reads it back)."""
    return {"src": src, "recorded": recorded, "s": source_stat, "x": xpp_stat, "diags": diagnostics}


@dataclass
class State:
    fingerprint: str | None = None
    files: dict[str, dict[str, Any]] = field(default_factory=dict)  # out path -> entry, as stored
    raw: bytes | None = None  # the file as read (rewritten only when it changes)

    @classmethod
    def read(cls, tree: AnchoredTree) -> State:
        """The state file, read through the anchored tree (a link there is not followed)."""
        try:
            data = tree.read(STATE_FILE)
            value = json.loads(data) if data is not None else None
            if (
                type(value) is dict
                and value.get("version") == STATE_VERSION
                and type(value.get("files")) is dict
            ):
                fingerprint = value.get("fingerprint")
                return cls(fingerprint if isinstance(fingerprint, str) else None, value["files"], data)
        except (OSError, ValueError):
            pass
        return cls()

    def entry(self, rel: str) -> Entry | None:
        value = self.files.get(rel)
        return Entry.load(value) if value is not None else None

    @staticmethod
    def encode(fingerprint: str, results: list[FileResult]) -> bytes:
        """The state file recording ``results`` (files compiled or up to date, with both stats)."""
        # (no Entry object per file: this runs for every file of every compile, in the compiling process)
        files: dict[str, dict[str, Any]] = {
            r.job.rel: _record(r.job.src, r.job.recorded, r.src_stat, r.xpp_stat, r.diagnostics)
            for r in results
            if r.status in ("compiled", "up to date") and r.src_stat and r.xpp_stat
        }
        value = {"version": STATE_VERSION, "fingerprint": fingerprint, "files": files}
        # (no circular-reference check: plain lists, dicts and scalars made just above; ~a fifth of it)
        return json.dumps(value, separators=(",", ":"), check_circular=False).encode()


_CODE_FINGERPRINT: list[str] = []  # computed once per process


def code_fingerprint() -> str:
    """Changes whenever the compiler's code (``grammar/``, ``xpp/``, their subpackages) changes."""
    if not _CODE_FINGERPRINT:
        digest = hashlib.sha256()
        # this file is puppet_xpp/xpp/compile/state.py: the packages are beside puppet_xpp/xpp
        base = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        for package in ("grammar", "xpp"):
            top = os.path.join(base, package)
            for directory, subdirs, names in os.walk(top):
                subdirs[:] = sorted(d for d in subdirs if d != "__pycache__")
                rel_dir = os.path.relpath(directory, base).replace(os.sep, "/")
                for name in sorted(n for n in names if n.endswith((".py", ".lark"))):
                    try:
                        st = os.stat(os.path.join(directory, name))
                    except OSError:
                        continue
                    digest.update(f"{rel_dir}/{name}:{st.st_size}:{st.st_mtime_ns};".encode())
        _CODE_FINGERPRINT.append(digest.hexdigest()[:32])
    return _CODE_FINGERPRINT[0]


def settings_fingerprint(env: Environment, opts: Options, validation: Validation | None = None) -> str:
    """Changes whenever something that changes an ``.xpp``'s bytes changes (code or settings)."""
    validation = validation or opts.validation()
    blob = json.dumps(
        {
            "code": code_fingerprint(),
            "fmt": opts.fmt,
            "strict": validation.strict,
            "puppet_version": validation.level,
            "modulepath": list(env.modulepath),
            "manifest": env.manifest,
            "runtime_root": opts.runtime_root,
        },
        sort_keys=True,
    )
    return hashlib.sha256(blob.encode()).hexdigest()[:32]

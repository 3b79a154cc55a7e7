"""The compiler: ``.xpp`` files (PRFC-23) for a whole Puppet environment, incrementally, or for one file.

This is the engine behind ``puppet-xpp --compile [ENVDIR...]`` (the command line, progress display and
report are in :mod:`server.cli.compile`) and the language server's ``.xpp`` on save.  By concern:

=============  ======================================================================================
``model``      options, the level in effect, jobs, results, events (dataclasses that cross processes)
``layout``     where each ``.xpp`` lives and the name it records
``planning``   the environment, what is compiled in it (:func:`plan`), one file's job (:func:`plan_file`)
``document``   the bytes of one ``.xpp``: :func:`grammar.check.check`, then :mod:`xpp.result`
``current``    whether an existing ``.xpp`` is current (shared with :mod:`xpp.runtime`)
``state``      the incremental state file and the fingerprints of code and settings
``tree``       the ``.xpp`` tree's safety checks, owner, lock and sweep
``writes``     anchored writes below ``.xpp``; ``-o``/``--report`` outputs
``workers``    the process pool that notices dying workers
``work``       the per-file work (in the workers) and how the jobs are run
``run``        :func:`compile_environment`
``single``     one file of an environment: :func:`write_job`, :func:`compile_saved`
=============  ======================================================================================

Incremental: ``ENVDIR/.xpp/compile-state.json`` records, per output, the stat of the source and of the
``.xpp`` written, plus a fingerprint of the settings and of the compiler's own code.  A file whose two
stats match is up to date without being read.  Otherwise, unless ``force``, the existing ``.xpp`` is
kept when its envelope records this source's digest and the settings in effect (the source is the
authority, not the time stamps).  A recompiled file whose bytes equal the existing ``.xpp`` is not
rewritten.  ``.xpp`` files that no source maps to any more are removed (and directories left empty), as
are all temporary files left by killed runs (the lock holder is the only writer).  A failure on one file
(internal error, a worker process that died) is that file's result; the others go on.

The names below are importable from this package; each is loaded with its module on first use, so that
:mod:`xpp.environment` can take :data:`layout.XPP_DIR` from here without a cycle.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from puppet_xpp.xpp.compile.current import Currency, currency, is_current
    from puppet_xpp.xpp.compile.document import compile_file, compile_text, source_document
    from puppet_xpp.xpp.compile.layout import ENV_MODULE, XPP_DIR, XppTarget, xpp_target
    from puppet_xpp.xpp.compile.model import (
        CompileError,
        DiagnosticRow,
        EnvResult,
        Events,
        FileResult,
        Job,
        NoEvents,
        Options,
        SourceRefused,
        Validation,
    )
    from puppet_xpp.xpp.compile.planning import ENV_DIRS, detect_environment, plan, plan_file
    from puppet_xpp.xpp.compile.run import compile_environment
    from puppet_xpp.xpp.compile.single import compile_saved, write_job
    from puppet_xpp.xpp.compile.state import STATE_FILE, code_fingerprint, settings_fingerprint
    from puppet_xpp.xpp.compile.tree import LOCK_FILE

_HOME = {
    "Currency": "current",
    "currency": "current",
    "is_current": "current",
    "compile_file": "document",
    "compile_text": "document",
    "source_document": "document",
    "ENV_MODULE": "layout",
    "XPP_DIR": "layout",
    "XppTarget": "layout",
    "xpp_target": "layout",
    "CompileError": "model",
    "DiagnosticRow": "model",
    "EnvResult": "model",
    "Events": "model",
    "FileResult": "model",
    "Job": "model",
    "NoEvents": "model",
    "Options": "model",
    "SourceRefused": "model",
    "Validation": "model",
    "ENV_DIRS": "planning",
    "detect_environment": "planning",
    "plan": "planning",
    "plan_file": "planning",
    "compile_environment": "run",
    "compile_saved": "single",
    "write_job": "single",
    "STATE_FILE": "state",
    "code_fingerprint": "state",
    "settings_fingerprint": "state",
    "LOCK_FILE": "tree",
}

__all__ = [
    "Currency",
    "currency",
    "is_current",
    "compile_file",
    "compile_text",
    "source_document",
    "ENV_MODULE",
    "XPP_DIR",
    "XppTarget",
    "xpp_target",
    "CompileError",
    "DiagnosticRow",
    "EnvResult",
    "Events",
    "FileResult",
    "Job",
    "NoEvents",
    "Options",
    "SourceRefused",
    "Validation",
    "ENV_DIRS",
    "detect_environment",
    "plan",
    "plan_file",
    "compile_environment",
    "compile_saved",
    "write_job",
    "STATE_FILE",
    "code_fingerprint",
    "settings_fingerprint",
    "LOCK_FILE",
]


def __getattr__(name: str) -> Any:
    module = _HOME.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_HOME})

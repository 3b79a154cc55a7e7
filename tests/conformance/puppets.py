"""The Puppet implementations the tests ask: Debian's Puppet 7.23 and OpenVox 8.28.1 (Puppet 8).

Puppet 7.23 is Debian's ``puppet`` package (its Ruby code under ``/usr/lib/ruby/vendor_ruby``). OpenVox 8 is
the ``lib/`` tarball in ``../shared/oracle/`` (see its README): it runs on Debian's Ruby with the gems the
``puppet`` package pulls in, by putting its ``lib/`` first on Ruby's load path. This module is the one place
that knows where each lives; the oracle, the runtime tests and the benchmarks ask it.

    from tests.conformance.puppets import openvox_lib, ruby_command
    lib = openvox_lib()                 # Path of OpenVox's lib/, extracted under .cache/ once; None if absent
    ruby_command("8") + ["script.rb"]    # ["ruby", "-I", ".../lib", "script.rb"]; "7.23" -> ["ruby"]
"""

from __future__ import annotations

import os
import shutil
import tarfile
import threading
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
TARBALL = Path(
    os.environ.get("PUPPET_XPP_OPENVOX_TARBALL", REPO.parent / "shared/oracle/openvox-8.28.1-lib.tar.gz")
)
CACHE = REPO / ".cache" / "openvox"
OPENVOX_VERSION = "8.28.1"
PUPPET7_LIB = Path("/usr/lib/ruby/vendor_ruby")

_lock = threading.Lock()


def openvox_lib() -> Path | None:
    """OpenVox's ``lib/`` directory, extracted from the shared tarball on first use (atomically: a
    concurrent test worker sees either nothing or the complete tree); ``None`` when the tarball is absent."""
    lib = CACHE / f"openvox-{OPENVOX_VERSION}" / "lib"
    if (lib / "puppet.rb").is_file():
        return lib
    if not TARBALL.is_file():
        return None
    with _lock:
        if (lib / "puppet.rb").is_file():
            return lib
        CACHE.mkdir(parents=True, exist_ok=True)
        tmp = CACHE / f".extract.{os.getpid()}.{threading.get_ident()}"
        with tarfile.open(TARBALL) as tf:
            tf.extractall(tmp, filter="data")
        src = next(tmp.glob("*/lib/puppet.rb")).parent.parent
        try:
            os.rename(src, lib.parent)
        except OSError:  # another worker won the race
            pass

        shutil.rmtree(tmp, ignore_errors=True)
    return lib if (lib / "puppet.rb").is_file() else None


def missing_reason(puppet: str) -> str | None:
    """Why the given Puppet (``"7.23"`` or ``"8"``) cannot run here, or ``None`` when it can."""
    if not (PUPPET7_LIB / "puppet" / "version.rb").is_file():
        return "Debian's puppet package is not installed (bash .ci/install)"
    if puppet != "7.23" and openvox_lib() is None:
        return f"the OpenVox 8 tarball {TARBALL} is absent"
    return None


def ruby_command(puppet: str) -> list[str]:
    """The ``ruby`` command line that loads the given Puppet (``"7.23"`` or ``"8"``) on ``require 'puppet'``."""
    if puppet == "7.23":
        return ["ruby"]
    lib = openvox_lib()
    if lib is None:
        raise RuntimeError(missing_reason(puppet))
    return ["ruby", "-I", str(lib)]

"""``puppet-xpp --runtime-path``: print the directory of the Puppet runtime module ``xpp`` installed with
puppet-xpp.

The runtime module (the repository's ``runtime/xpp``: Ruby code that makes Puppet load the ``.xpp`` files
``--compile`` writes) travels inside the ``puppet_xpp`` package as data, at ``puppet_xpp/runtime/xpp``
(in a checkout, the link ``puppet_xpp/runtime -> ../runtime``).  Puppet is pointed at it by this path:
``RUBYLIB="$(puppet-xpp --runtime-path)/lib" RUBYOPT=-rpuppet_x/xpp/boot puppet apply --xpp …``, or a
Puppetfile's ``mod 'xpp', :local => true`` after copying it into the control repository's ``modules/``.
The path is printed alone on one line so that a shell can take it as it is.

Exit status: 0 printed; 2 the module is not where the package says it is (a damaged installation).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TextIO

__all__ = ["add_arguments", "module_directory", "run"]

# what makes the directory the runtime module (the Forge's metadata and the file Puppet is started with)
REQUIRED_FILES = ("metadata.json", "lib/puppet_x/xpp/boot.rb")


def module_directory() -> Path:
    """The runtime module's directory, as installed with this ``puppet_xpp`` (symbolic links resolved)."""
    import puppet_xpp

    return (Path(puppet_xpp.__file__).parent / "runtime" / "xpp").resolve()


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument_group("runtime path", (__doc__ or "").split("\n\n")[0])


def run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    directory = module_directory()
    missing = [name for name in REQUIRED_FILES if not (directory / name).is_file()]
    if missing:
        err.write(
            f"puppet-xpp --runtime-path: the runtime module is incomplete at {directory}: "
            f"{', '.join(missing)} missing (reinstall puppet-xpp)\n"
        )
        return 2
    out.write(f"{directory}\n")
    out.flush()
    return 0

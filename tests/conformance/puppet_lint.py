"""puppet-lint's command line (Debian's puppet-lint 3.0.1), run on a scratch directory, answers cached.

    run_puppet_lint({"foo/manifests/init.pp": "class foo {}\n"}, ["foo"])
    # -> {"stdout": ..., "stderr": ..., "status": 1, "files": {path: text after the run}}

The directory holds only the given files; it is the working directory and HOME of the run (so only an
rc file among the given files applies); the user's cache directory (``XDG_CACHE_HOME``, where puppet-xpp
keeps its parser tables and start-up code) is another scratch directory, as a user's is outside the
project. ``run_in_scratch`` runs any command the same way, so that our own
command line is compared under identical conditions. Answers are cached next to the oracle's
(``$PUPPET_XPP_ORACLE_CACHE``, default ``<repo>/.cache/oracle``, ``off`` disables), keyed by the files,
the arguments and puppet-lint's installed version.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from tests.conformance.oracle import default_cache_root

VERSION_FILE = Path("/usr/share/rubygems-integration/all/gems/puppet-lint-3.0.1/lib/puppet-lint/version.rb")


def available() -> bool:
    return VERSION_FILE.is_file()


def run_in_scratch(files: dict[str, str], argv: list[str], timeout: float = 120) -> dict[str, Any]:
    with (
        tempfile.TemporaryDirectory(prefix="puppet-xpp-lint-") as d,
        tempfile.TemporaryDirectory(prefix="puppet-xpp-lint-cache-") as cache,
    ):
        for name, text in files.items():
            p = Path(d, name)
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_bytes(text.encode("utf-8", "surrogateescape"))
        env = dict(os.environ, HOME=d, PWD=d, XDG_CACHE_HOME=cache)
        env.pop("GITHUB_ACTION", None)
        proc = subprocess.run(
            argv, cwd=d, env=env, capture_output=True, timeout=timeout, stdin=subprocess.DEVNULL
        )
        after = {
            str(p.relative_to(d)): p.read_bytes().decode("utf-8", "surrogateescape")
            for p in sorted(Path(d).rglob("*"))
            if p.is_file()
        }
    return {
        "stdout": proc.stdout.decode("utf-8", "replace"),
        "stderr": proc.stderr.decode("utf-8", "replace"),
        "status": proc.returncode,
        "files": after,
    }


def run_puppet_lint(files: dict[str, str], args: list[str]) -> dict[str, Any]:
    """puppet-lint ARGS in a scratch directory holding ``files`` (cached)."""
    key = hashlib.sha256(
        json.dumps([files, args, VERSION_FILE.read_text()], sort_keys=True).encode("utf-8", "surrogateescape")
    ).hexdigest()
    root = default_cache_root()
    path = None if root is None else root / "puppet-lint" / key[:2] / f"{key}.json"
    if path is not None:
        try:
            cached: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
            return cached
        except (OSError, ValueError):
            pass
    answer = run_in_scratch(files, ["puppet-lint", *args])
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(answer, f)
        os.replace(tmp, path)
    return answer

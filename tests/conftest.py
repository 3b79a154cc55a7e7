"""Shared pytest fixtures.

``oracle``: the process-wide Ruby oracle (real Puppet), see ``tests/conformance/oracle.py``.
Without Ruby/Puppet the fixture skips the test, except under CI (``CI`` set), where it fails.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

_REPO = str(Path(__file__).resolve().parents[1])
if _REPO not in sys.path:
    # so that `tests.conformance...` imports work however pytest was started
    sys.path.insert(0, _REPO)

from tests.conformance.oracle import Oracle, ruby_available  # noqa: E402


@pytest.fixture(scope="session")
def oracle() -> Oracle:
    if not ruby_available():
        msg = "Ruby/Puppet oracle not available (apt-get install puppet ruby-msgpack)"
        if os.environ.get("CI"):
            pytest.fail(msg)
        pytest.skip(msg)
    return Oracle.get()

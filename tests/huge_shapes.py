"""bench/bench_huge.py's input shapes (valid Puppet throughout, of any size) for the tests of huge input:
the one generator the benchmark and the tests share."""

from __future__ import annotations

import importlib.util
import os
from typing import Any

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def bench_huge() -> Any:
    """The bench/bench_huge.py module (its ``SHAPES``: name -> function of a size in characters)."""
    spec = importlib.util.spec_from_file_location("bench_huge", os.path.join(REPO, "bench", "bench_huge.py"))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module

"""The installed distribution is one import package, ``puppet_xpp``, and nothing else.

Builds the wheel as ``pip`` would for a user, then checks what it holds and that, unpacked on its own, it
parses and compiles while the repository's folder names (``grammar``, ``xpp``, ``server``) are not
importable: another distribution's ``server`` package can never collide with ours.
"""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    p = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "-q",
            "-w",
            str(out),
            str(REPO),
        ],
        capture_output=True,
        text=True,
    )
    if p.returncode != 0:
        pytest.fail(f"pip wheel failed:\n{p.stdout}\n{p.stderr}")
    (whl,) = out.glob("puppet_xpp-*.whl")
    return whl


def test_wheel_holds_one_package(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    tops = {n.split("/")[0] for n in names}
    assert tops == {"puppet_xpp", wheel.name.split("-")[0] + "-" + wheel.name.split("-")[1] + ".dist-info"}
    assert "puppet_xpp/py.typed" in names
    assert "puppet_xpp/grammar/puppet.lark" in names
    assert "puppet_xpp/server/analysis/data/builtins-8.json" in names
    assert "puppet_xpp/lint/run.py" in names
    assert any(n.startswith("puppet_xpp/xpp/_fastload.") and n.endswith(".so") for n in names)
    entry = zipfile.ZipFile(wheel).read(next(n for n in names if n.endswith("entry_points.txt"))).decode()
    assert "puppet-xpp = puppet_xpp.server.cli:main" in entry


def test_unpacked_wheel_works_alone(wheel, tmp_path):
    site = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(site)
    code = (
        "import sys, importlib.util\n"
        f"sys.path.insert(0, {str(site)!r})\n"
        "import puppet_xpp\n"
        f"assert puppet_xpp.__file__.startswith({str(site)!r}), puppet_xpp.__file__\n"
        "from puppet_xpp.grammar.parser import parse\n"
        "from puppet_xpp.xpp import pcore\n"
        "print(pcore.MSGPACK_LOADER)\n"
        "p = parse('$a = 1', 'x.pp')\n"
        "assert pcore.loads(pcore.dumps(p.program)) == p.program\n"
        "print([n for n in ('grammar', 'xpp', 'server') if importlib.util.find_spec(n) is not None])\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    loader, leaked = out.stdout.splitlines()
    assert loader.startswith("C ")
    assert leaked == "[]"

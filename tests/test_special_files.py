"""Special files refused by every reader of sources (issue 26 item 6), and the campaign of links, FIFOs
and hard links as root (item 6 of "what must be true").

A FIFO named ``*.pp`` (or ``*.rb``, or a Hiera data file), a link to ``/dev/zero`` and a file over the
size limit in a module: ``--lint``, ``--lint --fix``, ``--references`` and the language server's
workspace symbols and references (a real client, pytest-lsp) answer within a timeout, say what they
skipped, and still answer for the other files.  Each of these tests failed (hung, or read the device) on
7354be1.

The campaign (seeded: ``XPP_CAMPAIGN_SEED``; at most ~45 s) builds random arrangements of symbolic links,
hard links, FIFOs, device links and oversized files in an environment owned by a second user, then runs
``--compile``, ``--lint --fix`` and ``--references`` on it as root: each must end within its timeout, no
file outside the environment may change (content, owner, mode, or a new file), and no ``.xpp`` may hold
the root-only secret.
"""

from __future__ import annotations

import os
import random
import shutil
import stat
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

from tests.test_root_io import give, second_user, start_on, write

REPO = Path(__file__).resolve().parents[1]
CLI = [sys.executable, "-m", "puppet_xpp"]
SERVER = [sys.executable, "-c", "import sys; from puppet_xpp.server.cli.main import main; sys.exit(main())"]
LIMIT = 100_000  # the size limit the tests set (PUPPET_XPP_MAX_SOURCE_SIZE)
TIMEOUT = 30  # seconds a command may take on this small tree (it takes ~1 s)
SECRET = "hunter2"

FILES = {
    "environment.conf": "modulepath = modules\n",
    "manifests/site.pp": "node default {\n  include mymod\n}\n",
    "modules/mymod/manifests/init.pp": "class mymod {\n  include mymod::app\n}\n",
    "modules/mymod/manifests/app.pp": 'class mymod::app {\n  $x = "plain"\n}\n',
    "modules/mymod/lib/puppet/functions/mymod/double.rb": (
        "Puppet::Functions.create_function(:'mymod::double') do\n  def double(x)\n    x * 2\n  end\nend\n"
    ),
    "hiera.yaml": "---\nversion: 5\nhierarchy:\n  - name: common\n    path: common.yaml\n",
    "data/common.yaml": "---\nmymod::app::port: 8080\n",
}


def hostile(env: Path) -> None:
    """The special files of the issue, next to the good ones."""
    m = env / "modules/mymod"
    os.mkfifo(m / "manifests/fifo.pp")
    (m / "manifests/zero.pp").symlink_to("/dev/zero")
    (m / "manifests/huge.pp").write_text("class mymod::huge {\n" + "#" * (2 * LIMIT) + "\n}\n")
    os.mkfifo(m / "lib/puppet/functions/mymod/fifo.rb")
    (m / "lib/puppet/functions/mymod/zero.rb").symlink_to("/dev/zero")
    os.mkfifo(env / "data/fifo.yaml")
    (env / "data/zero.yaml").symlink_to("/dev/zero")


def run(*argv: str, cwd: Path, timeout: float = TIMEOUT) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [*CLI, *argv],
        capture_output=True,
        timeout=timeout,
        cwd=cwd,
        env=dict(os.environ, PYTHONPATH=str(REPO), PUPPET_XPP_MAX_SOURCE_SIZE=str(LIMIT)),
        check=False,
    )


@pytest.fixture
def env(tmp_path):
    e = tmp_path / "production"
    write(e, FILES)
    hostile(e)
    return e


def test_lint_refuses_special_files(env):
    mods = env / "modules/mymod"
    for fix in ([], ["--fix"]):
        p = run("--lint", "--no-config", *fix, str(mods), cwd=env)
        out = p.stdout.decode()
        assert "fifo.pp': a FIFO, not a regular file: not read" in out, out
        assert "zero.pp': a character device, not a regular file: not read" in out, out
        assert f"huge.pp': larger than the source size limit ({LIMIT} bytes): not read" in out, out
        assert "app.pp - WARNING: double quoted string" in out or "app.pp - FIXED: double quoted" in out
        assert p.returncode == 1
    # --fix fixed the good file and left the FIFO a FIFO
    assert (mods / "manifests/app.pp").read_text() == "class mymod::app {\n  $x = 'plain'\n}\n"
    assert stat.S_ISFIFO(os.lstat(mods / "manifests/fifo.pp").st_mode)


def test_lint_skips_a_fifo_rc_file(env):
    os.mkfifo(env / ".puppet-lint.rc")  # read from the working directory, as puppet-lint does
    p = run("--lint", str(env / "modules/mymod/manifests/app.pp"), cwd=env)
    assert "WARNING: double quoted string containing no variables on line 2" in p.stdout.decode()


def test_references_skips_special_files(env):
    p = run("--references", "mymod::app", str(env), cwd=env)
    assert p.returncode == 0, p.stderr
    out, err = p.stdout.decode(), p.stderr.decode()
    assert "modules/mymod/manifests/app.pp:1:7: class def mymod::app" in out, out
    assert "modules/mymod/manifests/init.pp:2:11: class ref mymod::app" in out, out
    for name, kind in (
        ("manifests/fifo.pp", "a FIFO"),
        ("manifests/zero.pp", "a character device"),
        ("mymod/fifo.rb", "a FIFO"),
        ("mymod/zero.rb", "a character device"),
        ("data/fifo.yaml", "a FIFO"),
        ("data/zero.yaml", "a character device"),
    ):
        assert f"{name}': {kind}, not a regular file: not read" in err, err
    assert "huge.pp': larger than the source size limit" in err


# ------------------------------------------------------------------------------------------------------
# the language server


@pytest_lsp.fixture(
    config=ClientServerConfig(
        server_command=SERVER,
        server_env={"PYTHONPATH": str(REPO), "PUPPET_XPP_MAX_SOURCE_SIZE": str(LIMIT)},
    )
)
async def server(lsp_client: LanguageClient, env):
    await start_on(lsp_client, env)
    yield
    await lsp_client.shutdown_session()


@pytest.mark.asyncio
async def test_language_server_answers_with_special_files(server: LanguageClient, env: Path):
    import asyncio

    wanted = {"mymod", "mymod::app", "mymod::double"}
    deadline = time.monotonic() + TIMEOUT
    names: set[str] = set()
    while time.monotonic() < deadline:
        found = await asyncio.wait_for(
            server.workspace_symbol_async(types.WorkspaceSymbolParams(query="")), TIMEOUT
        )
        names = {s.name for s in found or []}
        if wanted <= names:
            break
        await asyncio.sleep(0.1)
    assert wanted <= names, names
    init = env / "modules/mymod/manifests/init.pp"
    text = init.read_text()
    server.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(
                uri=init.as_uri(), language_id="puppet", version=1, text=text
            )
        )
    )
    refs = await asyncio.wait_for(
        server.text_document_references_async(
            types.ReferenceParams(
                text_document=types.TextDocumentIdentifier(uri=init.as_uri()),
                position=types.Position(line=1, character=12),  # include mymod::app
                context=types.ReferenceContext(include_declaration=True),
            )
        ),
        TIMEOUT,
    )
    assert {(Path(r.uri[len("file://") :]).name, r.range.start.line) for r in refs or []} == {
        ("app.pp", 0),
        ("init.pp", 1),
    }
    logged = [m.message for m in server.log_messages]
    assert any("not indexed" in m and "fifo.pp': a FIFO" in m for m in logged), logged
    assert any("not indexed" in m and "zero.rb': a character device" in m for m in logged), logged


# ------------------------------------------------------------------------------------------------------
# the campaign: random arrangements of links and special files, as root

SEED = int(os.environ.get("XPP_CAMPAIGN_SEED", "26"))
BUDGET = 45.0  # seconds of rounds (each round: compile, lint --fix, references)
MAX_ROUNDS = 12


def snapshot(root: Path) -> dict[str, tuple[int, int, int, bytes | str]]:
    """Every entry below ``root``: (uid, gid, mode, content or link target)."""
    out: dict[str, tuple[int, int, int, bytes | str]] = {}
    for p in [root, *root.rglob("*")]:
        st = os.lstat(p)
        if stat.S_ISLNK(st.st_mode):
            what: bytes | str = os.readlink(p)
        elif stat.S_ISREG(st.st_mode):
            what = p.read_bytes()
        else:
            what = ""
        out[str(p)] = (st.st_uid, st.st_gid, st.st_mode, what)
    return out


def arrange(rng: random.Random, env: Path, outside: Path) -> list[str]:
    """Random hostile entries in ``env`` (before it is given to its owner); returns what was made."""
    made: list[str] = []
    targets = [p for p in outside.rglob("*") if p.is_file()]
    places = [
        "modules/mymod/manifests",
        "modules/mymod/manifests/sub",
        "modules/mymod/lib/puppet/functions/mymod",
        "data",
        "manifests",
    ]
    for k in range(rng.randint(3, 9)):
        d = env / rng.choice(places)
        d.mkdir(parents=True, exist_ok=True)
        ext = ".rb" if "functions" in str(d) else ".yaml" if d.name == "data" else ".pp"
        p = d / f"x{k}{ext}"
        kind = rng.choice(["symlink", "hardlink", "fifo", "zero", "dangling", "dirlink", "huge", "plain"])
        target = rng.choice(targets)
        if kind == "symlink":
            p.symlink_to(target)
        elif kind == "hardlink":
            os.link(target, p)
        elif kind == "fifo":
            os.mkfifo(p)
        elif kind == "zero":
            p.symlink_to("/dev/zero")
        elif kind == "dangling":
            p.symlink_to(outside / "nowhere")
        elif kind == "dirlink":
            p = d / f"dir{k}"
            p.symlink_to(rng.choice([outside, target.parent]))
        elif kind == "huge":
            p.write_text("class mymod::huge {\n" + "#" * (LIMIT + 10) + "\n}\n")
        else:
            p.write_text(f'class mymod::x{k} {{\n  $y = "plain"\n}}\n' if ext == ".pp" else "---\n")
        made.append(f"{kind} {p.relative_to(env)}")
    xpp = env / ".xpp"
    lock = rng.choice(["none", "hardlink", "symlink", "fifo", "foreign", "dirlink"])
    if lock != "none":
        xpp.mkdir(exist_ok=True)
        if lock == "hardlink":
            os.link(rng.choice(targets), xpp / "compile.lock")
        elif lock == "symlink":
            (xpp / "compile.lock").symlink_to(rng.choice(targets))
        elif lock == "fifo":
            os.mkfifo(xpp / "compile.lock")
        elif lock == "foreign":
            (xpp / "compile.lock").write_text("")
        else:
            (xpp / "modules").symlink_to(outside)
        made.append(f"lock {lock}")
    return made


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="the campaign runs as root")
def test_campaign_links_and_special_files_as_root():
    owner = second_user()
    rng = random.Random(SEED)
    start = time.monotonic()
    rounds = 0
    while rounds < MAX_ROUNDS and time.monotonic() - start < BUDGET:
        rounds += 1
        base = Path(tempfile.mkdtemp(prefix="xpp-campaign-"))
        try:
            os.chmod(base, 0o755)
            outside = base / "outside"
            (outside / "rootonly").mkdir(parents=True)
            os.chmod(outside / "rootonly", 0o700)
            (outside / "rootonly/secret.pp").write_text(f"class mymod::secret {{ $p = '{SECRET}' }}\n")
            os.chmod(outside / "rootonly/secret.pp", 0o600)
            (outside / "readable.pp").write_text('class mymod::readable {\n  $y = "plain"\n}\n')
            (outside / "passwd").write_text("root:x:0:0::/root:/bin/sh\n")
            os.chmod(outside / "passwd", 0o644)
            env = base / "production"
            write(env, FILES)
            made = arrange(rng, env, outside)
            give(env, owner)
            if (env / ".xpp/compile.lock").exists() and "lock foreign" in made:
                os.chown(env / ".xpp/compile.lock", owner[0] + 1, owner[1] + 1)
            before = snapshot(outside)
            where = f"seed {SEED} round {rounds}: {made}"
            for argv in (
                ("--compile", str(env), "-j1"),
                ("--lint", "--no-config", "--fix", str(env / "modules/mymod")),
                ("--references", "mymod::app", str(env)),
            ):
                try:
                    p = run(*argv, cwd=base)
                except subprocess.TimeoutExpired:
                    pytest.fail(f"{argv[0]} did not end within {TIMEOUT} s ({where})")
                assert b"Traceback" not in p.stderr, (argv, where, p.stderr.decode())
            assert snapshot(outside) == before, where
            planted = {(os.lstat(p).st_dev, os.lstat(p).st_ino) for p in outside.rglob("*")}
            for p in env.joinpath(".xpp").rglob("*") if env.joinpath(".xpp").is_dir() else []:
                st = os.lstat(p)
                if stat.S_ISREG(st.st_mode) and (st.st_dev, st.st_ino) not in planted:  # ours, not a link
                    assert SECRET.encode() not in p.read_bytes(), (str(p), where)
        finally:
            shutil.rmtree(base, ignore_errors=True)
    assert rounds >= 3  # the budget allows several rounds on this machine

"""Root never tricked through links (issue 26 items 1, 2 and 7): the attacks run as root against an
environment (or a tree to lint) owned by a second user, who plants the links.

* item 1: a hard link planted as ``.xpp/compile.lock`` -- the victim keeps its owner and mode, the compile
  refuses with a message and exit status 2; an existing lock is never re-owned or re-moded;
* item 2: the language server's ``.xpp`` on save (a real client, pytest-lsp) of a module file that is a
  link to a root-only manifest writes nothing holding the secret, as ``--compile`` refuses it;
* item 7: ``--lint --fix`` through a symbolic link or a hard link leaves the target untouched; a fixed
  file keeps its owner and mode.

Each test failed on 7354be1 (before the one rule for reading and writing as root).  The tests need root
and create the second user when it is missing; they are skipped (with the reason) otherwise.
"""

from __future__ import annotations

import asyncio
import io
import os
import pwd
import shutil
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

from puppet_xpp.server.cli import compile as cmd_compile

REPO = Path(__file__).resolve().parents[1]
CLI = [sys.executable, "-m", "puppet_xpp"]
SERVER = [sys.executable, "-c", "import sys; from puppet_xpp.server.cli.main import main; sys.exit(main())"]
OWNER = "xpp-env-owner"  # the second user: owns the environment, plants the links
SECRET = "hunter2"

needs_root = pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() != 0, reason="the attacks run as root (with a second user)"
)
pytestmark = needs_root


def second_user() -> tuple[int, int]:
    """(uid, gid) of the environment's owner, created (a system user, no home) when missing."""
    try:
        pw = pwd.getpwnam(OWNER)
    except KeyError:
        if shutil.which("useradd") is None:
            pytest.skip("no useradd to create the second user")
        subprocess.run(
            ["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", OWNER],
            check=True,
            capture_output=True,
        )
        pw = pwd.getpwnam(OWNER)
    return pw.pw_uid, pw.pw_gid


@pytest.fixture
def owner() -> tuple[int, int]:
    return second_user()


@pytest.fixture
def base():
    """A directory the second user can traverse (pytest's tmp_path is root's 0700)."""
    d = tempfile.mkdtemp(prefix="xpp-root-io-")
    os.chmod(d, 0o755)
    yield Path(d)
    shutil.rmtree(d, ignore_errors=True)


def write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)


def give(root: Path, who: tuple[int, int]) -> None:
    """``root`` and everything below it (links themselves, not their targets) to ``who``; a hard link
    planted there stays its target's (changing it would change the target)."""
    for p in [root, *root.rglob("*")]:
        st = os.lstat(p)
        if stat.S_ISREG(st.st_mode) and st.st_nlink > 1:
            continue
        os.lchown(p, *who)


def compile_(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    rc = cmd_compile.main(list(argv), out=out, err=err)
    return rc, out.getvalue(), err.getvalue()


def lint(*argv: str, cwd: Path) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [*CLI, "--lint", "--no-config", *argv],
        capture_output=True,
        timeout=60,
        cwd=cwd,
        env=dict(os.environ, PYTHONPATH=str(REPO)),
        check=False,
    )


def owner_and_mode(p: Path) -> tuple[int, int, int]:
    st = os.lstat(p)
    return st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode)


def victim(base: Path, text: str = "root's own file\n", mode: int = 0o600) -> Path:
    v = base / "rootonly" / "victim"
    v.parent.mkdir(mode=0o755, exist_ok=True)
    v.write_text(text)
    os.chmod(v, mode)
    return v


# ------------------------------------------------------------------------------------------------------
# item 1: the lock file


def test_hard_linked_lock_is_refused_and_the_victim_keeps_its_owner(base, owner):
    target = victim(base)
    env = base / "env"
    write(env, {"modules/a/manifests/init.pp": "class a { }\n"})
    (env / ".xpp").mkdir()
    give(env, owner)
    os.link(target, env / ".xpp/compile.lock")  # what the owner plants (root's file, their directory)
    rc, out, err = compile_(str(env), "-j1")
    assert owner_and_mode(target) == (0, 0, 0o600)
    assert target.read_text() == "root's own file\n"
    assert rc == 2, out + err
    assert "compile.lock: it has 2 hard links" in err
    assert not (env / ".xpp/modules").exists()


def test_lock_owned_by_someone_else_or_not_a_file_is_refused(base, owner):
    env = base / "env"
    write(env, {"modules/a/manifests/init.pp": "class a { }\n"})
    (env / ".xpp").mkdir()
    give(env, owner)
    lock = env / ".xpp/compile.lock"
    lock.write_text("")
    os.chown(lock, owner[0] + 1, owner[1] + 1)  # a third user's file
    rc, out, err = compile_(str(env), "-j1")
    assert rc == 2 and "compile.lock: owned by uid" in err, out + err
    assert owner_and_mode(lock)[:2] == (owner[0] + 1, owner[1] + 1)
    lock.unlink()
    os.mkfifo(lock)
    rc, out, err = compile_(str(env), "-j1")
    assert rc == 2 and "compile.lock: not a regular file" in err, out + err


def test_lock_created_for_the_owner_and_never_re_moded(base, owner):
    env = base / "env"
    write(env, {"modules/a/manifests/init.pp": "class a { }\n"})
    give(env, owner)
    assert compile_(str(env), "-j1")[0] == 0
    lock = env / ".xpp/compile.lock"
    assert owner_and_mode(lock) == (*owner, 0o644)
    os.chmod(lock, 0o600)  # the owner's choice: kept
    assert compile_(str(env), "-j1", "--force")[0] == 0
    assert owner_and_mode(lock) == (*owner, 0o600)


# ------------------------------------------------------------------------------------------------------
# item 2: the language server's save as root


@pytest.fixture
def save_env(base, owner):
    secret = victim(base, f"class a::secret {{ $password = '{SECRET}' }}\n", 0o600)
    os.chmod(secret.parent, 0o700)
    env = base / "env"
    write(
        env,
        {
            "environment.conf": "modulepath = modules\n",
            "modules/a/manifests/init.pp": "class a { }\n",
        },
    )
    (env / "modules/a/manifests/secret.pp").symlink_to(secret)
    give(env, owner)
    return env


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER, server_env={"PYTHONPATH": str(REPO)}))
async def saver(lsp_client: LanguageClient, save_env):
    await start_on(lsp_client, save_env)
    yield
    await lsp_client.shutdown_session()


async def start_on(client: LanguageClient, env: Path) -> None:
    """Initialize the server on ``env`` as VS Code does (it takes the file watchers)."""

    @client.feature(types.CLIENT_REGISTER_CAPABILITY)
    def register(params: types.RegistrationParams) -> None:
        return None

    uri = env.as_uri()
    await client.initialize_session(
        types.InitializeParams(
            capabilities=pytest_lsp.client_capabilities("visual_studio_code"),
            root_uri=uri,
            workspace_folders=[types.WorkspaceFolder(uri=uri, name="production")],
        )
    )


def save(client: LanguageClient, path: Path) -> None:
    uri = "file://" + str(path)
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(
                uri=uri, language_id="puppet", version=1, text=path.read_text()
            )
        )
    )
    client.text_document_did_save(
        types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )


async def logged(client: LanguageClient, *words: str, timeout: float = 30.0) -> str:
    for _ in range(int(timeout / 0.05)):
        for m in client.log_messages:
            if all(w in m.message for w in words):
                return m.message
        await asyncio.sleep(0.05)
    raise AssertionError(f"no log line with {words}: {[m.message for m in client.log_messages]}")


@pytest.mark.asyncio
async def test_save_as_root_of_a_link_to_a_root_only_manifest(saver: LanguageClient, save_env: Path):
    manifests = save_env / "modules/a/manifests"
    save(saver, manifests / "init.pp")  # the control: a file the owner can read gets its .xpp
    await logged(saver, "wrote", "init.xpp")
    assert (save_env / ".xpp/modules/a/manifests/init.xpp").exists()
    stale = save_env / ".xpp/modules/a/manifests/secret.xpp"
    stale.write_bytes(b"an earlier .xpp")  # removed, as --compile removes it: it cannot be checked
    save(saver, manifests / "secret.pp")
    message = await logged(saver, "secret.pp", "Permission denied")
    assert "wrote" not in message
    assert not (save_env / ".xpp/modules/a/manifests/secret.xpp").exists()
    for p in (save_env / ".xpp").rglob("*"):
        assert p.is_dir() or SECRET.encode() not in p.read_bytes(), p
    # --compile refuses the same file the same way
    rc, out, _err = compile_(str(save_env), "-j1")
    assert rc == 2 and "secret.pp': Permission denied" in out


# ------------------------------------------------------------------------------------------------------
# item 7: --lint --fix as root

FIXABLE = 'class a {\n  $x = "plain"\n}\n'  # double_quoted_strings: fixed to 'plain'


def test_lint_fix_never_writes_through_a_symbolic_link(base, owner):
    readable = victim(base, FIXABLE, 0o644)  # root's, readable by the owner: the read succeeds
    hidden = base / "rootonly" / "hidden.pp"
    hidden.write_text(FIXABLE)
    os.chmod(hidden, 0o600)
    tree = base / "a"
    write(tree, {"manifests/init.pp": FIXABLE})
    (tree / "manifests/link.pp").symlink_to(readable)
    (tree / "manifests/hidden.pp").symlink_to(hidden)
    give(tree, owner)
    p = lint("--fix", str(tree), cwd=base)
    assert readable.read_text() == FIXABLE and owner_and_mode(readable) == (0, 0, 0o644)
    assert hidden.read_text() == FIXABLE and owner_and_mode(hidden) == (0, 0, 0o600)
    assert (tree / "manifests/link.pp").is_symlink() and (tree / "manifests/hidden.pp").is_symlink()
    err = p.stderr.decode()
    assert "link.pp: it is a symbolic link" in err, err
    assert "hidden.pp': Permission denied" in p.stdout.decode()  # read as the owner: not read at all
    assert p.returncode == 1
    # the regular file next to them is fixed, and stays the owner's with its mode
    assert (tree / "manifests/init.pp").read_text() == "class a {\n  $x = 'plain'\n}\n"
    assert owner_and_mode(tree / "manifests/init.pp") == (*owner, 0o644)


def test_lint_fix_never_writes_into_a_hard_linked_file(base, owner):
    target = victim(base, FIXABLE, 0o644)
    tree = base / "a"
    write(tree, {"manifests/init.pp": "class a { }\n"})
    give(tree, owner)
    os.link(target, tree / "manifests/linked.pp")
    p = lint("--fix", str(tree), cwd=base)
    assert target.read_text() == FIXABLE and owner_and_mode(target) == (0, 0, 0o644)
    assert os.path.samefile(target, tree / "manifests/linked.pp")  # the name still the victim's: untouched
    assert "linked.pp: it has 2 hard links" in p.stderr.decode()
    assert p.returncode == 1


def test_lint_fix_keeps_owner_and_mode(base, owner):
    tree = base / "a"
    write(tree, {"manifests/init.pp": FIXABLE})
    os.chmod(tree / "manifests/init.pp", 0o640)
    give(tree, owner)
    p = lint("--fix", "--no-documentation-check", str(tree / "manifests/init.pp"), cwd=base)
    assert p.returncode == 0, p.stdout + p.stderr
    assert (tree / "manifests/init.pp").read_text() == "class a {\n  $x = 'plain'\n}\n"
    assert owner_and_mode(tree / "manifests/init.pp") == (*owner, 0o640)

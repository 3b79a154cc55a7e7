"""The container image: ``Dockerfile``, ``.dockerignore`` and ``scripts/docker/build.sh``.

Without a Docker engine (none runs on this project's machines) the image is not built; what can be
checked without one is:

- the Dockerfile, read instruction by instruction, against the rules hadolint applies (its rule ids
  are named) and the ones the issue asks for (a Debian-slim Python base, an unprivileged user,
  ``puppet-xpp`` as the exec-form entry point);
- the build context: the files ``.dockerignore`` lets through (Docker's matching rules, implemented
  here) build the same wheel as the whole checkout does (``python -m build``, as the Dockerfile runs it);
- the build script, with a stand-in ``docker`` on ``PATH`` recording what it is asked.

The real build runs when ``docker info`` answers and the base image can be pulled; otherwise that test
is skipped with the reason (``pytest -rs`` shows it).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.test_precommit_hooks import snapshot_working_tree

ROOT = Path(__file__).resolve().parents[1]
BUILD_SCRIPT = ROOT / "scripts" / "docker" / "build.sh"


def instructions(text: str) -> list[tuple[str, str]]:
    """The Dockerfile's instructions as (KEYWORD, arguments): comments and blank lines dropped,
    continuation lines joined."""
    result: list[tuple[str, str]] = []
    pending = ""
    for raw in text.splitlines():
        line = raw.strip()
        if not pending and (not line or line.startswith("#")):
            continue
        if pending and line.startswith("#"):
            continue  # a comment inside a continued instruction
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        whole = pending + line
        pending = ""
        keyword, _, arguments = whole.partition(" ")
        result.append((keyword.upper(), arguments.strip()))
    assert not pending, "the Dockerfile ends inside a continued instruction"
    return result


DOCKERFILE = (ROOT / "Dockerfile").read_text()
INSTRUCTIONS = instructions(DOCKERFILE)


def stages() -> list[list[tuple[str, str]]]:
    """The instructions of each build stage (a FROM starts one); ARGs before the first FROM left out."""
    found: list[list[tuple[str, str]]] = []
    for keyword, arguments in INSTRUCTIONS:
        if keyword == "FROM":
            found.append([])
        if found:
            found[-1].append((keyword, arguments))
    return found


def global_args() -> dict[str, str]:
    args = {}
    for keyword, arguments in INSTRUCTIONS:
        if keyword == "FROM":
            break
        if keyword == "ARG":
            name, _, default = arguments.partition("=")
            args[name] = default
    return args


def base_image(from_arguments: str) -> str:
    image = from_arguments.split()[0]
    return re.sub(r"\$\{(\w+)\}", lambda m: global_args()[m.group(1)], image)


# ------------------------------------------------------------------------------- the Dockerfile


def test_debian_slim_python_base_with_a_tag() -> None:
    """DL3006/DL3007: every base image has an explicit tag, never ``latest``; the issue's Debian-slim
    Python, at a version the package supports (requires-python)."""
    import tomllib

    requires = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["requires-python"]
    minimum = tuple(int(p) for p in requires.removeprefix(">=").split("."))
    names = set()
    for stage in stages():
        keyword, arguments = stage[0]
        image = base_image(arguments)
        if image in names:
            continue  # FROM an earlier stage
        match = re.fullmatch(r"python:(\d+)\.(\d+)-slim-(bookworm|trixie)", image)
        assert match, image
        assert (int(match.group(1)), int(match.group(2))) >= minimum
        parts = arguments.split()
        if "AS" in (p.upper() for p in parts):
            names.add(parts[-1])


def test_final_stage_runs_puppet_xpp_as_an_unprivileged_user() -> None:
    final = stages()[-1]
    keywords = [k for k, _ in final]
    users = [a for k, a in final if k == "USER"]
    assert users, "no USER: the image would run as root"
    user = users[-1].split(":")[0]
    assert user not in ("root", "0")
    # DL3002: the last USER is not root, and nothing runs after it as root
    assert keywords.index("USER") > max(i for i, k in enumerate(keywords) if k == "RUN")
    [entrypoint] = [a for k, a in final if k == "ENTRYPOINT"]
    assert json.loads(entrypoint) == ["puppet-xpp"]  # exec form (DL3025 for ENTRYPOINT too)
    for keyword, arguments in final:
        if keyword == "CMD":
            json.loads(arguments)  # exec form


def test_hadolint_rules() -> None:
    """The rules of hadolint that apply to this file, checked by reading it."""
    for keyword, arguments in INSTRUCTIONS:
        assert keyword != "ADD", "DL3020: COPY, not ADD"
        assert keyword != "MAINTAINER", "DL4000: MAINTAINER is deprecated"
        if keyword == "WORKDIR":
            assert arguments.startswith("/"), "DL3000: absolute WORKDIR"
        if keyword != "RUN":
            continue
        assert "sudo " not in arguments, "DL3004"
        assert not re.search(r"(^|&&|;)\s*cd\s", arguments), "DL3003: WORKDIR, not cd"
        if "apt-get install" in arguments:
            assert "apt-get update" in arguments, "DL3009: update and install in one RUN"
            assert "--no-install-recommends" in arguments, "DL3015"
            assert re.search(r"\s-y\s", arguments), "DL3014: -y"
            assert "rm -rf /var/lib/apt/lists/*" in arguments, "DL3009: the lists removed in the same RUN"
        assert "apt-get upgrade" not in arguments and "apt-get dist-upgrade" not in arguments, "DL3005"
        for command in re.split(r"&&|;", arguments):
            if re.search(r"\bpip install\b", command):
                assert "--no-cache-dir" in command, f"DL3042: {command.strip()}"
        if "|" in arguments.replace("||", ""):
            assert any(k == "SHELL" and "pipefail" in a for k, a in INSTRUCTIONS), "DL4006"
    # COPY --from names a stage of this file (DL3022)
    named = {a.split()[-1] for k, a in INSTRUCTIONS if k == "FROM" and " AS " in f" {a.upper()} "}
    for keyword, arguments in INSTRUCTIONS:
        if keyword == "COPY" and arguments.startswith("--from="):
            assert arguments.split()[0].removeprefix("--from=") in named


# ------------------------------------------------------------------------------ the build context


def dockerignore_pattern(pattern: str) -> re.Pattern[str]:
    """Docker's pattern syntax (Go's filepath.Match per path element, ``**`` any number of elements)
    as a regular expression over a slash-separated path."""
    out = ""
    i = 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out += "(?:.*/)?"
            i += 3
        elif pattern.startswith("**", i):
            out += ".*"
            i += 2
        elif pattern[i] == "*":
            out += "[^/]*"
            i += 1
        elif pattern[i] == "?":
            out += "[^/]"
            i += 1
        else:
            out += re.escape(pattern[i])
            i += 1
    return re.compile(out)


def in_context(path: str, rules: list[tuple[bool, re.Pattern[str]]]) -> bool:
    """Whether Docker sends ``path``: the last rule matching the path or one of its parent directories
    decides (``!`` rules include)."""
    parts = path.split("/")
    prefixes = ["/".join(parts[: n + 1]) for n in range(len(parts))]
    included = True
    for include, pattern in rules:
        if any(pattern.fullmatch(p) for p in prefixes):
            included = include
    return included


def context_files(tree: Path) -> list[str]:
    rules = []
    for line in (ROOT / ".dockerignore").read_text().splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        include = line.startswith("!")
        rules.append((include, dockerignore_pattern(os.path.normpath(line.lstrip("!")))))
    found = []
    for directory, directories, files in os.walk(tree):
        links = [d for d in directories if os.path.islink(os.path.join(directory, d))]
        for name in files + links:  # a link to a directory is sent as the link
            relative = os.path.relpath(os.path.join(directory, name), tree)
            if not relative.startswith(".git/") and in_context(relative, rules):
                found.append(relative)
    return sorted(found)


def build_wheel(source: Path, out: Path) -> list[str]:
    """``python -m build --wheel`` of ``source`` (as the Dockerfile's build stage runs it): the names in
    the wheel, its dist-info directory's name aside."""
    proc = subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--outdir", str(out), str(source)],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    [wheel] = out.glob("*.whl")
    with zipfile.ZipFile(wheel) as archive:
        return sorted(n for n in archive.namelist() if ".dist-info/RECORD" not in n)


def test_context_builds_the_same_wheel(tmp_path: Path) -> None:
    pytest.importorskip("build", reason="build not installed (pip install -e '.[test]')")
    tree = snapshot_working_tree(tmp_path / "tree")
    files = context_files(tree)
    assert "pyproject.toml" in files and "server/cli/main.py" in files
    assert not any(f.startswith(("tests/", "editors/", "bench/", "docs/")) for f in files)
    assert not any("__pycache__" in f or f.endswith(".so") for f in files)
    context = tmp_path / "context"
    for name in files:
        source, target = tree / name, context / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if source.is_symlink():
            target.symlink_to(os.readlink(source))
        else:
            shutil.copy2(source, target)
    for link in ("grammar", "lint", "xpp", "server", "runtime"):  # the package's links, kept as links
        assert (context / "puppet_xpp" / link).is_symlink()
    from_context = build_wheel(context, tmp_path / "from-context")
    from_tree = build_wheel(tree, tmp_path / "from-tree")
    assert from_context == from_tree
    # what the image needs beyond Python modules: the grammar, the runtime module, the C reader
    assert any(n.startswith("puppet_xpp/grammar/") and n.endswith(".lark") for n in from_context)
    assert "puppet_xpp/runtime/xpp/metadata.json" in from_context
    assert any(n.startswith("puppet_xpp/xpp/_fastload") for n in from_context)


# ------------------------------------------------------------------------------ the build script


FAKE_DOCKER = """#!/bin/sh
# a stand-in for docker: records its arguments, answers `run`
printf '%s\\n' "$*" >>"$DOCKER_LOG"
case "$1" in
  build) exit "${FAKE_BUILD_STATUS:-0}" ;;
  run)
    case "$*" in
      *"--entrypoint id"*) echo "${FAKE_USER:-10001}" ;;
      *--version*) echo "${FAKE_VERSION}" ;;
    esac ;;
esac
"""


def run_build_script(
    tmp_path: Path, *args: str, **env: str
) -> tuple[subprocess.CompletedProcess[str], list[str]]:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    docker = bin_dir / "docker"
    docker.write_text(FAKE_DOCKER)
    docker.chmod(0o755)
    log = tmp_path / "docker.log"
    log.write_text("")
    from puppet_xpp import __version__

    environment = dict(
        os.environ,
        PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
        DOCKER_LOG=str(log),
        FAKE_VERSION=f"puppet-xpp {__version__}",
    )
    environment.update(env)
    proc = subprocess.run(
        ["bash", str(BUILD_SCRIPT), *args], cwd=tmp_path, env=environment, capture_output=True, text=True
    )
    return proc, log.read_text().splitlines()


def test_build_script_builds_and_checks_the_image(tmp_path: Path) -> None:
    from puppet_xpp import __version__

    proc, calls = run_build_script(tmp_path)
    assert proc.returncode == 0, proc.stderr
    image = f"puppet-xpp:{__version__}"
    build = shlex.split(calls[0])
    assert build[0] == "build" and build[-1] == "."  # the repository root is the context
    assert build[build.index("--tag") + 1] == image and f"VERSION={__version__}" in build
    assert "--pull" in build  # the base image's security updates
    assert calls[1:] == [f"run --rm {image} --version", f"run --rm --entrypoint id {image} -u"]
    proc, calls = run_build_script(tmp_path, "example/puppet-xpp:test")
    assert "example/puppet-xpp:test" in shlex.split(calls[0])


@pytest.mark.parametrize(
    ("env", "reason"),
    [
        ({"FAKE_BUILD_STATUS": "1"}, ""),
        ({"FAKE_VERSION": "puppet-xpp 0.0.0"}, "the image says"),
        ({"FAKE_USER": "0"}, "runs as root"),
    ],
    ids=["build fails", "wrong version", "root"],
)
def test_build_script_fails_when_the_image_is_wrong(tmp_path: Path, env: dict[str, str], reason: str) -> None:
    proc, _ = run_build_script(tmp_path, **env)
    assert proc.returncode != 0
    assert reason in proc.stderr


def test_build_script_passes_shellcheck() -> None:
    if shutil.which("shellcheck") is None:
        pytest.skip("shellcheck not installed (Debian's shellcheck)")
    proc = subprocess.run(["shellcheck", str(BUILD_SCRIPT)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout


# ------------------------------------------------------------------------------- the real build


def docker_unavailable() -> str | None:
    """Why the image cannot be built here (None: it can)."""
    if shutil.which("docker") is None:
        return "no docker command"
    info = subprocess.run(["docker", "info"], capture_output=True, text=True, timeout=60)
    if info.returncode != 0:
        lines = [line for line in (info.stdout + info.stderr).splitlines() if line.strip()]
        return f"no Docker engine: {lines[-1].strip() if lines else 'docker info failed'}"
    image = base_image(stages()[0][0][1])
    pull = subprocess.run(["docker", "pull", image], capture_output=True, text=True, timeout=600)
    if pull.returncode != 0:
        return f"the base image {image} cannot be pulled: {pull.stderr.strip()[-200:]}"
    return None


def test_image_builds_and_runs(tmp_path: Path, oracle) -> None:
    reason = docker_unavailable()
    if reason is not None:
        pytest.skip(f"image not built: {reason}")
    from puppet_xpp import __version__

    image = f"puppet-xpp-test:{__version__}"
    proc = subprocess.run(["bash", str(BUILD_SCRIPT), image], capture_output=True, text=True, timeout=1800)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    try:
        (tmp_path / "bad.pp").write_text("class bad {\n  notice($x\n}\n")
        tmp_path.chmod(0o755)
        run = subprocess.run(
            ["docker", "run", "--rm", "-v", f"{tmp_path}:/work:ro", image, "validate", "bad.pp"],
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert run.returncode == 1
        [want] = oracle.call("validate", file=str(tmp_path / "bad.pp"))
        assert (
            f"Error: {want['message']} (file: bad.pp, line: {want['line']}, column: {want['pos']})"
            in run.stdout
        )
    finally:
        subprocess.run(["docker", "rmi", "-f", image], capture_output=True)

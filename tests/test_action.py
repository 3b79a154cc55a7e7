"""The composite GitHub Action (``action.yml``) run here, as a runner would run it.

:func:`run_action` plays GitHub's part for a composite action: each step in order, ``${{ inputs.* }}``,
``${{ steps.*.outputs.* }}`` and ``${{ github.action_path }}`` evaluated, ``run:`` steps with
``bash --noprofile --norc -eo pipefail`` (GitHub's ``shell: bash``), a fresh ``$GITHUB_OUTPUT`` file per
step read back as the step's outputs, the action's own outputs evaluated at the end.  The one ``uses:``
step, actions/setup-python, is answered with this Python (the machine reaches no GitHub).  Any other
expression or step fails the test, so the action cannot grow a part this runner does not play.

The install step installs puppet-xpp from a snapshot of this working tree into a virtual environment
(once for the module: pip fetches the dependencies from PyPI).  Expected annotations come from Puppet
(the oracle: position and message of the syntax error) and from puppet-lint 3.0.1's ``--json``.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conformance import puppet_lint
from tests.test_precommit_hooks import snapshot_working_tree, write_tree

ROOT = Path(__file__).resolve().parents[1]
ACTION = yaml.safe_load((ROOT / "action.yml").read_text())
EXPRESSION = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")
ANNOTATION = re.compile(r"^::(error|warning|notice) (?P<properties>[^:]*)::(?P<message>.*)$")

BROKEN = "class m {\n  notice($x\n}\n"
WARNED = '# doc\nclass m::w {\n  $a = "x"\n  notice($a)\n}\n'
CLEAN = "# doc\nclass m::clean {\n  notice('hello')\n}\n"


def evaluate(text: str, context: dict[str, Any]) -> str:
    """``text`` with its ``${{ ... }}`` expressions replaced, as far as this action uses them."""

    def one(match: re.Match[str]) -> str:
        expression = match.group(1)
        parts = expression.split(".")
        if parts[0] == "inputs" and len(parts) == 2:
            return str(context["inputs"][parts[1]])
        if parts[0] == "steps" and len(parts) == 4 and parts[2] == "outputs":
            return str(context["steps"].get(parts[1], {}).get(parts[3], ""))  # a step not run: ""
        if expression == "github.action_path":
            return str(context["action_path"])
        raise AssertionError(f"an expression the test runner does not play: {expression}")

    return EXPRESSION.sub(one, text)


def run_action(
    action_path: Path,
    workspace: Path,
    temp: Path,
    inputs: dict[str, str],
    *,
    steps: list[str] | None = None,
    outputs: dict[str, dict[str, str]] | None = None,
) -> tuple[subprocess.CompletedProcess[str] | None, dict[str, Any]]:
    """Run action.yml's steps (``steps``: only these ids; ``outputs``: earlier steps' outputs) with
    ``inputs`` over the defaults; the last run step's process and the context (step outputs, the
    action's outputs, the job summary)."""
    declared = ACTION["inputs"]
    unknown = set(inputs) - set(declared)
    assert not unknown, f"inputs action.yml does not declare: {unknown}"
    context: dict[str, Any] = {
        "inputs": {name: inputs.get(name, spec.get("default", "")) for name, spec in declared.items()},
        "steps": dict(outputs or {}),
        "action_path": action_path,
    }
    summary = temp / "summary.md"
    summary.touch()
    last = None
    for number, step in enumerate(ACTION["runs"]["steps"]):
        step_id = step.get("id", f"step{number}")
        if steps is not None and step_id not in steps:
            continue
        if "uses" in step:
            assert step["uses"].startswith("actions/setup-python@"), step["uses"]
            settings = {k: evaluate(str(v), context) for k, v in step.get("with", {}).items()}
            assert settings["update-environment"] == "false"  # the workflow's own Python stays as it was
            context["steps"][step_id] = {"python-path": sys.executable}
            continue
        assert step["shell"] == "bash"
        output = temp / f"output-{step_id}"
        output.write_text("")
        script = temp / f"step-{step_id}.sh"
        script.write_text(evaluate(step["run"], context))
        env = {
            "PATH": os.environ["PATH"],
            "HOME": str(temp),
            "LANG": "C.UTF-8",
            "CI": "true",
            "GITHUB_ACTIONS": "true",
            "GITHUB_ACTION_PATH": str(action_path),
            "GITHUB_WORKSPACE": str(workspace),
            "GITHUB_OUTPUT": str(output),
            "GITHUB_STEP_SUMMARY": str(summary),
            "RUNNER_TEMP": str(temp),
        }
        env.update({k: evaluate(str(v), context) for k, v in step.get("env", {}).items()})
        last = subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)],
            cwd=workspace,
            env=env,
            capture_output=True,
            text=True,
            timeout=900,
        )
        context["steps"][step_id] = dict(
            line.split("=", 1) for line in output.read_text().splitlines() if "=" in line
        )
        if last.returncode != 0:
            break
    context["outputs"] = {name: evaluate(spec["value"], context) for name, spec in ACTION["outputs"].items()}
    context["summary"] = summary.read_text()
    return last, context


def annotations(stdout: str) -> list[tuple[str, str, int, int, str]]:
    """(command, file, line, column, message) of each workflow command that places an annotation."""
    found = []
    for line in stdout.splitlines():
        match = ANNOTATION.match(line)
        if match is None:
            continue
        properties = dict(p.split("=", 1) for p in match.group("properties").split(","))
        found.append(
            (
                match.group(1),
                properties["file"],
                int(properties["line"]),
                int(properties["col"]),
                match.group("message"),
            )
        )
    return found


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, dict[str, str]]]:
    """The action's checkout (a snapshot of this working tree) and the outputs of its set-up and install
    steps, run once."""
    action_path = snapshot_working_tree(tmp_path_factory.mktemp("action"))
    temp = tmp_path_factory.mktemp("runner-temp")
    proc, context = run_action(action_path, temp, temp, {}, steps=["python", "install"])
    assert proc is not None and proc.returncode == 0, proc and proc.stdout + proc.stderr
    command = context["steps"]["install"]["command"]
    assert Path(command).is_file() and Path(command).is_relative_to(temp)
    probe = subprocess.run(
        [command, "validate", "--format", "github", os.devnull], capture_output=True, text=True
    )
    if "invalid choice: 'github'" in probe.stderr:
        pytest.skip("puppet-xpp validate has no --format github yet (issue 28, item 1)")
    return action_path, {k: context["steps"][k] for k in ("python", "install")}


def workspace_with(tmp_path: Path, files: dict[str, str]) -> Path:
    return write_tree(tmp_path / "workspace", files)


def check(
    installed: tuple[Path, dict[str, dict[str, str]]], tmp_path: Path, workspace: Path, **inputs: str
) -> tuple[subprocess.CompletedProcess[str], dict[str, Any]]:
    action_path, outputs = installed
    temp = tmp_path / "temp"
    temp.mkdir(parents=True)
    proc, context = run_action(action_path, workspace, temp, inputs, steps=["check"], outputs=outputs)
    assert proc is not None
    return proc, context


needs_puppet_lint = pytest.mark.skipif(
    not puppet_lint.available() and not os.environ.get("CI"), reason="puppet-lint not installed"
)


@needs_puppet_lint
def test_annotations_and_status(installed, tmp_path: Path, oracle) -> None:
    files = {"site/m/manifests/init.pp": BROKEN, "site/m/manifests/w.pp": WARNED}
    workspace = workspace_with(tmp_path, files)
    proc, context = check(installed, tmp_path, workspace)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    found = annotations(proc.stdout)
    # validate: Puppet's syntax error, at Puppet's position, on the file relative to the workspace
    [want] = oracle.call("validate", file=str(workspace / "site/m/manifests/init.pp"))
    assert ("error", "site/m/manifests/init.pp", want["line"], want["pos"], want["message"]) in found
    # lint: what puppet-lint --json reports for the same tree
    theirs = puppet_lint.run_puppet_lint(files, ["--json", "."])
    expected = [
        (p["kind"], p["path"].removeprefix("./"), p["line"], p["column"], p["message"])
        for per_file in json.loads(theirs["stdout"])
        for p in per_file
    ]
    assert expected and all(e in found for e in expected), (expected, found)
    assert len(found) == 1 + len(expected)
    assert context["outputs"] == {
        "errors": str(sum(f[0] == "error" for f in found)),
        "warnings": str(sum(f[0] == "warning" for f in found)),
    }
    assert context["summary"].startswith("puppet-xpp: 1 error(s), ")
    # each command's annotations inside a group of the log
    assert proc.stdout.count("::group::") == 2 == proc.stdout.count("::endgroup::")


def test_clean_tree_passes(installed, tmp_path: Path) -> None:
    workspace = workspace_with(tmp_path, {"site/m/manifests/clean.pp": CLEAN})
    proc, context = check(installed, tmp_path, workspace, paths="site", **{"puppet-version": "7.23"})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert annotations(proc.stdout) == []
    assert context["outputs"] == {"errors": "0", "warnings": "0"}


@needs_puppet_lint
def test_warnings_fail_only_when_asked(installed, tmp_path: Path) -> None:
    files = {"site/m/manifests/w.pp": WARNED}
    assert puppet_lint.run_puppet_lint(files, ["site"])["status"] == 0  # puppet-lint passes warnings
    workspace = workspace_with(tmp_path, files)
    proc, _ = check(installed, tmp_path / "a", workspace)
    assert proc.returncode == 0 and [f[0] for f in annotations(proc.stdout)] == ["warning"]
    proc, _ = check(installed, tmp_path / "b", workspace, **{"fail-on-warnings": "true"})
    assert proc.returncode == 1
    proc, context = check(installed, tmp_path / "c", workspace, lint="false", **{"fail-on-warnings": "true"})
    assert proc.returncode == 0 and annotations(proc.stdout) == [] and "lint" not in proc.stdout
    proc, _ = check(
        installed, tmp_path / "d", workspace, **{"lint-options": "--no-double_quoted_strings-check"}
    )
    assert proc.returncode == 0 and annotations(proc.stdout) == []


def test_bad_input_is_refused(installed, tmp_path: Path) -> None:
    workspace = workspace_with(tmp_path, {"site/m/manifests/clean.pp": CLEAN})
    proc, _ = check(installed, tmp_path, workspace, lint="maybe")
    assert proc.returncode == 2 and "not a boolean: 'maybe'" in proc.stdout


def test_scripts_pass_shellcheck() -> None:
    if shutil.which("shellcheck") is None:
        pytest.skip("shellcheck not installed (Debian's shellcheck)")
    scripts = sorted(str(p) for p in (ROOT / "scripts" / "action").glob("*.sh"))
    assert scripts
    proc = subprocess.run(["shellcheck", "--shell=bash", *scripts], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout


def test_every_input_reaches_a_step() -> None:
    """An input nothing reads would be a promise the action does not keep."""
    text = yaml.safe_dump(ACTION["runs"])
    for name in ACTION["inputs"]:
        assert f"inputs.{name} " in text.replace("}}", " }}"), name

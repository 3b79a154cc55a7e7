"""One model of an environment (xpp/environment.py) and one plan rule, used alike by every entry point.

* the model reads an environment as Puppet does: for each layout below, the module path and main manifest
  equal what Puppet's own Directories environment loader gives (oracle op ``environment``);
* every entry point (``--validate``, ``--dump``, ``--compile FILE -o X``, ``--compile ENVDIR``, the language
  server's analysis and its ``.xpp`` on save) treats each file of a control repository alike: the same tasks
  mode and the same diagnostics, which equal Puppet's for that environment (oracle op ``validate`` with
  Puppet's module path and manifest, tasks where Bolt loads plans: a module's ``plans/`` directory).
"""

from __future__ import annotations

import io
import json
import os
import sys
from pathlib import Path

import pytest

from puppet_xpp.xpp.environment import file_context, infer_module, is_plan_file, load_environment

# ------------------------------------------------------------------------------------------------ the model

LAYOUTS = {
    "no-conf": {"modules/": ""},
    "conf-without-modulepath": {
        "environment.conf": "config_version = x\n",
        "site-modules/": "",
        "modules/": "",
    },
    "control-repo": {
        "environment.conf": "modulepath = site-modules:modules:$basemodulepath\nmanifest = site.pp\n",
        "site-modules/": "",
    },
    "relative-and-environment": {
        "environment.conf": "modulepath=./mods:../shared/$environment:/abs/dir\nmanifest=manifests/init.pp\n",
    },
    "quoted-and-sections": {
        "environment.conf": '[main]\nmodulepath = "site:modules"\n# comment\n[agent]\nmanifest = x.pp\n',
    },
    "no-base": {"environment.conf": "modulepath = modules\n"},
    "glob": {"environment.conf": "modulepath = dist/*:modules\n", "dist/a/": "", "dist/b/": ""},
}


def _make(root: Path, files: dict) -> None:
    root.mkdir(parents=True)
    for rel, text in files.items():
        p = root / rel
        if rel.endswith("/"):
            p.mkdir(parents=True, exist_ok=True)
        else:
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text(text)


@pytest.mark.parametrize("name", list(LAYOUTS))
def test_environment_model_equals_puppets(name, tmp_path, oracle):
    env_dir = tmp_path / "environments" / "production"
    _make(env_dir, LAYOUTS[name])
    base = [str(tmp_path / "base1"), str(tmp_path / "base2")]
    theirs = oracle.call("environment", dir=str(env_dir), basemodulepath=base)
    env = load_environment(str(env_dir), basemodulepath=os.pathsep.join(base))
    assert list(env.modulepath) == theirs["modulepath"], name
    assert env.manifest == theirs["manifest"], name


# ------------------------------------------------------------------------------------------------ entry points

# a control repository whose environment.conf has no modulepath: site-modules/ is not on the module path
# (Puppet knows no such default), so its files get no module-location checks, but a plan there is a plan
TREE = {
    "environment.conf": "config_version = x\n",
    "manifests/site.pp": "node default { include m }\n",
    "modules/m/manifests/init.pp": "class m { }\n",
    "modules/m/manifests/wrong.pp": "class m::other { }\n",
    "modules/m/manifests/plans/x.pp": "class m::plans::x { }\n",
    "modules/m/plans/deploy.pp": "plan m::deploy() { run_task('x', 'h') }\n",
    "modules/m/plans/sub/step.pp": "plan m::sub::step() { }\n",
    "site-modules/role/manifests/web.pp": "class role::not_web { }\n",
    "site-modules/deploy/plans/app.pp": "plan deploy::app() { apply('h') { } }\n",
    "plans/env_plan.pp": "plan env_plan() { }\n",
}
# where Bolt loads plans from (a module's plans/ directory, the environment's own plans/)
PLANS = {
    "modules/m/plans/deploy.pp",
    "modules/m/plans/sub/step.pp",
    "site-modules/deploy/plans/app.pp",
    "plans/env_plan.pp",
}
LEVEL = "7.23"  # compared with Puppet 7.23 (the plumbing of the level is exercised too)


@pytest.fixture
def env(tmp_path):
    root = tmp_path / "production"
    _make(root, TREE)
    return root


def _codes(rows):
    return sorted((r[0], r[1], r[2]) for r in rows)


def _puppet(oracle, env_root: Path):
    """Puppet's diagnostics per file, in the environment as Puppet reads it."""
    e = oracle.call("environment", dir=str(env_root), basemodulepath=[])
    out = {}
    for rel in TREE:
        if not rel.endswith(".pp"):
            continue
        path = str(env_root / rel)
        ds = oracle.call(
            "validate", file=path, modulepath=e["modulepath"], manifest=e["manifest"], tasks=rel in PLANS
        )
        out[rel] = _codes([(d["severity"], d["code"], d["line"]) for d in ds])
    return out


def _validate_cli(path):
    from puppet_xpp.server.cli import validate

    buf = io.StringIO()
    validate.main([path, "--format", "json", "--puppet-version", LEVEL], out=buf)
    rec = json.loads(buf.getvalue().splitlines()[0])
    return _codes([(d["severity"], d["code"], d["line"]) for d in rec["diagnostics"]])


def _compile_one(path, tmp_path):
    from puppet_xpp.server.cli import compile as cmd_compile

    report = tmp_path / "one.json"
    out = io.StringIO()
    cmd_compile.main(
        [path, "-o", str(tmp_path / "one.xpp"), "--report", str(report), "--puppet-version", LEVEL],
        out=out,
        err=io.StringIO(),
    )
    rep = json.loads(report.read_text())
    return _codes([(d["severity"], d["code"], d["line"]) for d in rep["diagnostics"]])


def _compile_env(env_root, tmp_path):
    from puppet_xpp.server.cli import compile as cmd_compile

    report = tmp_path / "env.json"
    cmd_compile.main(
        [str(env_root), "--report", str(report), "-j", "1", "--puppet-version", LEVEL],
        out=io.StringIO(),
        err=io.StringIO(),
    )
    rep = json.loads(report.read_text())["environments"][0]
    return {
        os.path.relpath(f["path"], env_root): (
            f["tasks"],
            _codes([(d["severity"], d["code"], d["line"]) for d in f["diagnostics"]]),
        )
        for f in rep["files"]
    }


def _language_server(path):
    from puppet_xpp.grammar.check import check
    from puppet_xpp.server.analysis.workspace import Settings, check_config_for

    cfg = check_config_for(path, Settings(puppet_version=LEVEL))
    checked = check(Path(path).read_text(), cfg)
    res, vd = checked.parse, checked.validation
    return cfg.tasks, _codes(
        [(d.severity, d.code, d.line_col(res.locator)[0]) for d in list(res.diagnostics) + list(vd)]
    )


def _dump(path):
    from puppet_xpp.server.cli import dump

    program, diags, _loc = dump.load(path, False)
    return program, [d.code for d in diags if d.severity == "error"]


def test_every_entry_point_treats_each_file_like_puppet(env, tmp_path, oracle):
    want = _puppet(oracle, env)
    compiled = _compile_env(env, tmp_path)
    for rel in want:
        path = str(env / rel)
        tasks = rel in PLANS
        assert is_plan_file(path, load_environment(str(env))) is tasks, rel
        assert file_context(path).tasks is tasks, rel
        assert _validate_cli(path) == want[rel], ("--validate", rel)
        assert _compile_one(path, tmp_path) == want[rel], ("--compile FILE -o X", rel)
        assert _language_server(path) == (tasks, want[rel]), ("language server", rel)
        program, errors = _dump(path)
        assert program is not None and errors == [], ("--dump", rel)
        if rel.startswith("site-modules/"):
            assert rel not in compiled, rel  # not on the environment's module path: not compiled
        else:
            assert compiled[rel] == (tasks, want[rel]), ("--compile ENVDIR", rel)
    # the cases of the issue, spelled out (each also checked against Puppet above)
    assert want["modules/m/manifests/plans/x.pp"] == []  # a class there is not a plan
    assert want["site-modules/role/manifests/web.pp"] == []  # no location rule outside the module path
    assert [c for _s, c, _l in want["modules/m/manifests/wrong.pp"]] == ["ILLEGAL_DEFINITION_LOCATION"]


def test_xpp_on_save_writes_what_compile_writes(env, tmp_path):
    """The .xpp on save (xpp.compile.compile_saved, the language server's one call into the compiler)
    plans through the same model as ``--compile ENVDIR``: same files, same bytes."""
    from puppet_xpp.server.cli import compile as cmd_compile
    from puppet_xpp.xpp.compile import compile_saved

    cmd_compile.main([str(env), "-j", "1", "--puppet-version", LEVEL], out=io.StringIO(), err=io.StringIO())
    want = {p: p.read_bytes() for p in (env / ".xpp").rglob("*.xpp")}
    for p in want:
        p.unlink()

    for rel in TREE:
        if rel.endswith(".pp") and not rel.startswith("site-modules/"):
            compile_saved(str(env), str(env / rel), level=LEVEL, strict=None)
    got = {p: p.read_bytes() for p in (env / ".xpp").rglob("*.xpp")}
    assert got == want


def test_module_inferred_from_location_outside_any_environment(tmp_path):
    """A module checked out on its own: the module path is its parent (location rules apply), and the
    plan rule looks at the module's own plans/ directory only."""
    mod = tmp_path / "work" / "plans"  # a module *named* plans: its manifests are not plans
    _make(mod, {"manifests/init.pp": "class plans { }\n", "plans/run.pp": "plan plans::run() { }\n"})
    assert infer_module(str(mod / "manifests" / "init.pp"))[:2] == (str(tmp_path / "work"), "plans")
    assert file_context(str(mod / "manifests" / "init.pp")).tasks is False
    assert file_context(str(mod / "plans" / "run.pp")).tasks is True
    assert file_context(str(mod / "manifests" / "init.pp")).modulepath == (str(tmp_path / "work"),)


# ------------------------------------------------------------------------------------------------ project configuration

# DUPLICATE_KEY: an error at level 8 (strict's default there), a warning at 7.23 (Puppet 7.23's default)
DUPLICATE = "$x = { 'a' => 1, 'a' => 2 }\nnotice($x)\n"


def _validate_json(args, cwd):
    from puppet_xpp.server.cli import validate

    old = os.getcwd()
    os.chdir(cwd)
    try:
        out, err = io.StringIO(), io.StringIO()
        status = validate.main([*args, "--format", "json"], out=out, err=err)
    finally:
        os.chdir(old)
    rows = [json.loads(line) for line in out.getvalue().splitlines()]
    return status, [(d["severity"], d["code"]) for r in rows for d in r["diagnostics"]], err.getvalue()


@pytest.mark.parametrize("where", [".puppet-xpp.toml", "pyproject.toml"])
def test_project_level_is_every_entry_points_default(where, tmp_path, oracle):
    """The project's level is what --validate, --compile FILE and the language server use when not
    told otherwise; the command line and the editor's explicit setting win.  Puppet 7.23 (the level
    named) answers for the file."""
    from puppet_xpp.grammar.check import check
    from puppet_xpp.server.analysis.workspace import Settings, check_config_for

    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    text = 'level = "7.23"\n'
    (repo / where).write_text(
        text if where != "pyproject.toml" else "[project]\nname='x'\n[tool.puppet-xpp]\n" + text
    )
    f = repo / "deep" / "x.pp"
    f.parent.mkdir()
    f.write_text(DUPLICATE)
    theirs = [(d["severity"], d["code"]) for d in oracle.call("validate", file=str(f))]
    assert theirs == [("warning", "DUPLICATE_KEY")]
    assert _validate_json([str(f)], tmp_path)[:2] == (0, theirs)
    assert _validate_json([str(f), "--puppet-version", "8"], tmp_path)[1] == [("error", "DUPLICATE_KEY")]
    assert _compile_one(str(f), tmp_path) == _codes([(*theirs[0], 1)])
    cfg = check_config_for(str(f), Settings())
    assert (cfg.level, [(d.severity, d.code) for d in check(DUPLICATE, cfg).diagnostics]) == ("7.23", theirs)
    explicit = Settings.from_dict({"puppetVersion": "8"})
    assert check_config_for(str(f), explicit).level == "8"
    # above the repository's root a configuration is not looked for
    (repo / where).unlink()
    (tmp_path / ".puppet-xpp.toml").write_text(text)
    assert _validate_json([str(f)], tmp_path)[1] == [("error", "DUPLICATE_KEY")]


def test_project_modulepath_and_excludes(tmp_path):
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / ".puppet-xpp.toml").write_text('modulepath = ["mods", "/abs/x"]\nexclude = ["legacy/"]\n')
    f = repo / "mods" / "m" / "manifests" / "init.pp"
    f.parent.mkdir(parents=True)
    f.write_text("class m { }\n")
    (repo / "legacy").mkdir()
    (repo / "legacy" / "x.pp").write_text("class broken {\n")
    assert file_context(str(f)).modulepath == (str(repo / "mods"), "/abs/x")
    assert file_context(str(f), modulepath=["/given"]).modulepath == ("/given",)
    status, rows, _err = _validate_json(["."], repo)
    assert (status, rows) == (0, [])  # legacy/ excluded, m judged on the project's module path


@pytest.mark.parametrize(
    "text, line, words",
    [
        ("level = 8\nstrict = 'loud'\n", 2, "'strict' must be one of off, warning, error"),
        ("level = '9'\n", 1, "'level' must be one of"),
        ("\n\nexclud = ['x']\n", 3, "unknown key 'exclud'"),
        ("exclude = 'x'\n[lint]\nfail-on-warnings = 'yes'\n", 3, "'fail-on-warnings' must be true or false"),
        ("level = \n", 1, "invalid TOML"),
    ],
)
def test_project_errors_name_file_and_line(text, line, words, tmp_path):
    from puppet_xpp.server.analysis.workspace import Settings, check_config_for

    (tmp_path / ".git").mkdir()
    conf = tmp_path / ".puppet-xpp.toml"
    conf.write_text(text)
    (tmp_path / "x.pp").write_text("notice(1)\n")
    status, rows, err = _validate_json(["x.pp"], tmp_path)
    assert status == 2 and rows == []
    assert err.startswith(f"puppet-xpp --validate: {conf}:{line}: ") and words in err, err
    assert "Traceback" not in err
    assert check_config_for(str(tmp_path / "x.pp"), Settings()).level == "8"  # the editor goes on


def test_project_lint_options_like_puppet_lints(tmp_path):
    """[lint] disable = ["140chars"] is puppet-lint's --no-140chars-check; the command line wins."""
    from tests.conformance import puppet_lint

    if not puppet_lint.available():
        pytest.skip("puppet-lint not installed")
    files = {"x.pp": "class x {\n  notice('" + "a" * 150 + "')\n}\n"}
    ours_cmd = [sys.executable, "-m", "puppet_xpp", "--lint"]
    with_conf = {**files, ".puppet-xpp.toml": '[lint]\ndisable = ["140chars"]\n'}
    theirs = puppet_lint.run_puppet_lint(files, ["--no-140chars-check", "x.pp"])
    ours = puppet_lint.run_in_scratch(with_conf, [*ours_cmd, "x.pp"])
    assert (ours["status"], ours["stdout"]) == (theirs["status"], theirs["stdout"])
    theirs = puppet_lint.run_puppet_lint(files, ["x.pp"])
    ours = puppet_lint.run_in_scratch(with_conf, [*ours_cmd, "--140chars-check", "x.pp"])
    assert (ours["status"], ours["stdout"]) == (theirs["status"], theirs["stdout"])
    assert "140chars" in theirs["stdout"]


def test_project_lint_options_in_the_language_server(tmp_path):
    """The editor's lint reads the project's [lint] table as --lint does: the checks puppet-lint
    reports with --no-140chars-check (its JSON output) are the editor's problems on the file."""
    from puppet_xpp.server.analysis.lint import problems
    from puppet_xpp.server.analysis.workspace import LintSettings
    from tests.conformance import puppet_lint

    if not puppet_lint.available():
        pytest.skip("puppet-lint not installed")
    text = "class x {\n  notice('" + "a" * 150 + "')\n}\n"
    (tmp_path / ".git").mkdir()
    (tmp_path / ".puppet-xpp.toml").write_text('[lint]\ndisable = ["140chars"]\n')
    (tmp_path / "x.pp").write_text(text)
    theirs = puppet_lint.run_puppet_lint({"x.pp": text}, ["--json", "--no-140chars-check", "x.pp"])
    want = sorted((p["check"], p["line"]) for f in json.loads(theirs["stdout"]) for p in f)
    got = sorted((p.check, p.line) for p in problems(text, str(tmp_path / "x.pp"), LintSettings()))
    assert got == want and want  # (documentation is still reported: the file is linted)
    assert ("140chars", 2) in [(p.check, p.line) for p in problems(text, None, LintSettings())]


def test_pyproject_without_our_table_is_passed_over(tmp_path):
    """A Python project's pyproject.toml (valid or not) without [tool.puppet-xpp] is not ours: the
    search goes on upward, and nothing is reported about it."""
    from puppet_xpp.xpp.project import find_config_file, project_for

    (tmp_path / ".git").mkdir()
    (tmp_path / ".puppet-xpp.toml").write_text('level = "7"\n')
    sub = tmp_path / "py"
    sub.mkdir()
    (sub / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    assert find_config_file(str(sub / "x.pp")) == str(tmp_path / ".puppet-xpp.toml")
    (sub / "pyproject.toml").write_text("[project\n")
    assert project_for(str(sub / "x.pp")).level == "7"
    (sub / "pyproject.toml").write_text("[tool.puppet-xpp]\nlevel = \n")
    assert str(project_for(str(sub / "x.pp")).error).startswith(f"{sub / 'pyproject.toml'}:2: invalid TOML")


def test_project_lint_option_errors_name_the_line(tmp_path):
    from puppet_xpp.server import cli

    (tmp_path / ".git").mkdir()
    conf = tmp_path / ".puppet-xpp.toml"
    conf.write_text('[lint]\nfail-on-warnings = true\ndisable = ["nosuch"]\n')
    (tmp_path / "x.pp").write_text("class x { }\n")
    out, err = io.StringIO(), io.StringIO()
    status = cli.main(["--lint", str(tmp_path / "x.pp")], out, err)
    assert status == 1 and out.getvalue() == ""
    assert err.getvalue() == f"puppet-xpp --lint: {conf}:3: lint: invalid option: --no-nosuch-check\n"


def test_compile_environment_takes_the_projects_level(tmp_path, oracle):
    """--compile ENVDIR: the level of the environment's project configuration, as Puppet 7.23 judges
    the file (DUPLICATE_KEY a warning); --puppet-version wins."""
    from puppet_xpp.server.cli import compile as cmd_compile

    env = tmp_path / "production"
    _make(
        env, {"environment.conf": "", ".puppet-xpp.toml": 'level = "7.23"\n', "manifests/site.pp": DUPLICATE}
    )
    (env / ".git").mkdir()
    theirs = [
        (d["severity"], d["code"]) for d in oracle.call("validate", file=str(env / "manifests/site.pp"))
    ]

    def compiled(*extra):
        report = tmp_path / "r.json"
        cmd_compile.main(
            [str(env), "--report", str(report), "-j", "1", "--force", *extra],
            out=io.StringIO(),
            err=io.StringIO(),
        )
        files = json.loads(report.read_text())["environments"][0]["files"]
        return [(d["severity"], d["code"]) for f in files for d in f["diagnostics"]]

    assert compiled() == theirs == [("warning", "DUPLICATE_KEY")]
    assert compiled("--puppet-version", "8") == [("error", "DUPLICATE_KEY")]

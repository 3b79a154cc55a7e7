"""`puppet-xpp --validate` (server/cli/validate.py): files and directories, settings, output formats and exit
status; diagnostics compared with Puppet's (the oracle's `validate` op and `puppet parser validate`)."""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import subprocess

import pytest

from puppet_xpp.server.cli import validate as cmd_validate
from tests.conformance.oracle import oracle_for


def run(*argv):
    """--validate at level 7.23 (most tests compare with Puppet 7.23) unless the test names a level."""
    if "--puppet-version" not in argv:
        argv = (*argv, "--puppet-version", "7.23")
    out = io.StringIO()
    rc = cmd_validate.main(list(argv), out=out)
    return rc, out.getvalue()


def jrun(*argv):
    rc, text = run(*argv, "--format", "json")
    return rc, [json.loads(line) for line in text.splitlines()]


def keys(diags, col="column"):
    return [(d["severity"], d["code"], d["line"], d[col]) for d in diags]


@pytest.fixture
def tree(tmp_path):
    """A small environment: a module with good and bad files, a plan, a template and a site manifest."""
    files = {
        "modules/aaa/manifests/init.pp": "class aaa {\n  $x = {a => 1, a => 2}\n  notify { $x: }\n}\n",
        "modules/aaa/manifests/bad.pp": "class zzz { 1 }\ninclude aaa\n",
        "modules/aaa/plans/deploy.pp": "plan aaa::deploy() {\n  notify { x: }\n}\n",
        "modules/aaa/templates/t.epp": "<%| $a, $a |%>\n<%= $a %>\n",
        "manifests/site.pp": "include aaa\nnode default { }\n",
    }
    for rel, text in files.items():
        p = tmp_path / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    return tmp_path


def test_json_output_equals_puppet_per_file(tree, oracle):
    mp = str(tree / "modules")
    manifest = str(tree / "manifests")
    rc, lines = jrun("--validate", str(tree), "--modulepath", mp, "--manifest", manifest)
    assert rc == 1
    files = [x["file"] for x in lines]
    assert files == sorted(files) and len(files) == 5  # directory walk: sorted, every .pp/.epp
    for item in lines:
        f = item["file"]
        want = oracle.call("validate", file=f, modulepath=[mp], manifest=manifest, tasks="/plans/" in f)
        assert keys(item["diagnostics"]) == keys(want, "pos"), f
        assert [d["message"] for d in item["diagnostics"]] == [d["message"] for d in want], f
    by_file = {os.path.relpath(x["file"], tree): [d["code"] for d in x["diagnostics"]] for x in lines}
    assert by_file["modules/aaa/manifests/bad.pp"] == [
        "ILLEGAL_TOP_CONSTRUCT_LOCATION",
        "ILLEGAL_DEFINITION_LOCATION",
        "IDEM_NOT_ALLOWED_LAST",
    ]
    assert by_file["modules/aaa/plans/deploy.pp"] == ["EXPRESSION_NOT_SUPPORTED_WHEN_SCRIPTING"]
    assert by_file["modules/aaa/templates/t.epp"] == ["DUPLICATE_PARAMETER"]
    assert by_file["manifests/site.pp"] == []


def test_json_fields(tree, oracle):
    f = str(tree / "modules/aaa/manifests/init.pp")
    rc, [item] = jrun(f)
    assert rc == 0 and item["file"] == f
    [want] = oracle.call("validate", file=f)
    assert item["diagnostics"] == [
        {
            "severity": want["severity"],
            "code": want["code"],
            "message": want["message"],
            "line": want["line"],
            "column": want["pos"],
            "offset": want["offset"],
            "length": want["length"],
        }
    ]
    assert want["code"] == "DUPLICATE_KEY" and want["severity"] == "warning"


def test_files_keep_the_given_order(tree):
    a = str(tree / "manifests/site.pp")
    b = str(tree / "modules/aaa/manifests/init.pp")
    _, lines = jrun(b, a)
    assert [x["file"] for x in lines] == [b, a]


def test_strict_and_tasks_options(tree, oracle):
    f = str(tree / "modules/aaa/manifests/init.pp")
    assert jrun(f, "--strict", "error")[0] == 1
    _, [item] = jrun(f, "--strict", "off")
    assert item["diagnostics"] == []
    rc, [item] = jrun(f, "--tasks")
    want = oracle.call("validate", file=f, tasks=True)
    assert keys(item["diagnostics"]) == keys(want, "pos")
    assert "EXPRESSION_NOT_SUPPORTED_WHEN_SCRIPTING" in [d["code"] for d in item["diagnostics"]] and rc == 1


def test_text_output_warnings_first_then_errors(tmp_path):
    f = tmp_path / "x.pp"
    f.write_text("class a { 1 }\n$x = {a=>1, a=>2}\nclass b { 2 }\n")
    rc, text = run(str(f))
    assert rc == 1
    msg = (
        "This Literal Integer has no effect. A Host Class Definition can not end with a value-producing "
        "expression without other effect"
    )
    assert text.splitlines() == [
        f"Warning: The key 'a' is declared more than once (file: {f}, line: 2, column: 14)",
        f"Error: {msg} (file: {f}, line: 1, column: 11)",
        f"Error: {msg} (file: {f}, line: 3, column: 11)",
    ]


@pytest.mark.skipif(shutil.which("puppet") is None, reason="puppet not installed")
def test_text_lines_are_puppet_parser_validate_lines(tmp_path):
    f = tmp_path / "x.pp"
    f.write_text("class a { 1 }\n$x = {a=>1, a=>2}\nclass plan { 2 }\n")
    proc = subprocess.run(
        ["puppet", "parser", "validate", str(f)],
        capture_output=True,
        text=True,
        env=dict(os.environ, HOME=str(tmp_path)),
    )
    theirs = [re.sub(r"\x1b\[[0-9;]*m", "", line) for line in (proc.stdout + proc.stderr).splitlines()]
    theirs = [line for line in theirs if line.startswith(("Warning:", "Error:")) and "Giving up" not in line]
    rc, text = run(str(f))
    assert (rc != 0) == (proc.returncode != 0)
    assert text.splitlines() == theirs


@pytest.mark.skipif(shutil.which("puppet") is None, reason="puppet not installed")
def test_heredoc_checker_logs_like_puppet_parser_validate(tmp_path):
    f = tmp_path / "h.pp"
    f.write_text("notice(@(END:pp))\n$a = {a=>1, a=>2}\nclass plan {}\nEND\n$b = {a=>1, a=>2}\n")
    proc = subprocess.run(
        ["puppet", "parser", "validate", str(f)],
        capture_output=True,
        text=True,
        env=dict(os.environ, HOME=str(tmp_path)),
    )
    theirs = [re.sub(r"\x1b\[[0-9;]*m", "", line) for line in (proc.stdout + proc.stderr).splitlines()]
    theirs = [line for line in theirs if line.startswith(("Warning:", "Error:"))]
    rc, text = run(str(f))
    assert rc == proc.returncode == 0
    assert text.splitlines() == theirs and len(theirs) == 3


def test_syntax_errors_are_reported_with_position(tmp_path, oracle):
    f = tmp_path / "x.pp"
    f.write_text("$a = 1\n$b = }\n")
    rc, [item] = jrun(str(f))
    assert rc == 1
    want = oracle.request("validate", file=str(f))["result"]
    first = item["diagnostics"][0]
    assert (first["severity"], first["code"], first["line"], first["column"]) == keys(want, "pos")[0]


def test_only_warnings_exit_zero_and_clean_files_print_nothing(tmp_path):
    f = tmp_path / "ok.pp"
    f.write_text("class ok { notify { x: } }\n")
    assert run(str(f)) == (0, "")


def test_missing_file(tmp_path):
    f = str(tmp_path / "nope.pp")
    rc, text = run(f)
    assert rc == 2  # a file that cannot be read: 2 in every mode (issue 10 item 4)
    assert text == f"Error: No such file or directory: {f} (file: {f})\n"


def test_epp_file_and_plans_dir_detection(tmp_path, oracle):
    (tmp_path / "plans").mkdir()
    plan = tmp_path / "plans" / "p.pp"
    plan.write_text("plan p() { file { '/x': } }\n")
    tpl = tmp_path / "t.epp"
    tpl.write_text("x<% ($a) %>\n")
    _, lines = jrun(str(tmp_path))
    got = {x["file"]: keys(x["diagnostics"]) for x in lines}
    # outside any environment the module is inferred from the location (tmp_path is a module with plans/),
    # so its parent is the module path, as for the language server and --compile FILE
    mp = [str(tmp_path.parent)]
    want = oracle.call("validate", file=str(plan), tasks=True, modulepath=mp)
    assert got[str(plan)] == keys(want, "pos")
    assert got[str(tpl)] == keys(oracle.call("validate", file=str(tpl)), "pos")
    assert [c for _, c, _, _ in got[str(tpl)]] == ["ILLEGAL_EPP_PARAMETERS"]


def test_no_path_is_a_usage_error():
    assert run()[0] == 2


def test_add_arguments_embeds_in_another_parser(tree):
    import argparse

    p = argparse.ArgumentParser()
    cmd_validate.add_arguments(p)
    ns = p.parse_args([str(tree / "manifests/site.pp"), "--strict", "error"])
    out = io.StringIO()
    assert cmd_validate.run(ns, out, io.StringIO()) == 0


def test_directory_walk_survives_symlink_cycles(tmp_path):
    (tmp_path / "m" / "manifests").mkdir(parents=True)
    (tmp_path / "m" / "manifests" / "init.pp").write_text("class m { }\n")
    os.symlink(str(tmp_path / "m"), str(tmp_path / "m" / "manifests" / "loop"))
    rc, lines = jrun(str(tmp_path))
    assert rc == 0 and [x["file"] for x in lines] == [str(tmp_path / "m" / "manifests" / "init.pp")]


@pytest.mark.parametrize("level,strict", [("8", "error"), ("7", "warning")])
def test_levels_8_and_7_equal_openvox(tree, level, strict):
    """The default level 8 (strict error) and level 7 (strict warning) answer like OpenVox 8."""
    oracle8 = oracle_for("8")
    (tree / "modules/aaa/manifests/typed.pp").write_text(
        "class aaa::typed(Integer[$x] $p, Optional[[String]] $q = undef) {\n  $h = {Foo[1] => 1, Bar[1] => 2}\n}\n"
    )
    argv = [str(tree / "modules"), "--modulepath", str(tree / "modules")]
    if level == "8":  # the default: no option given
        out = io.StringIO()
        rc = cmd_validate.main([*argv, "--format", "json"], out=out)
        lines = [json.loads(line) for line in out.getvalue().splitlines()]
    else:
        rc, lines = jrun(*argv, "--puppet-version", level)
    for item in lines:
        want = oracle8.call(
            "validate",
            file=item["file"],
            modulepath=[str(tree / "modules")],
            strict=strict,
            tasks="/plans/" in item["file"],
        )
        assert keys(item["diagnostics"]) == keys(want, "pos"), item["file"]
        assert [d["message"] for d in item["diagnostics"]] == [d["message"] for d in want]
    codes = {
        os.path.basename(x["file"]): [(d["severity"], d["code"]) for d in x["diagnostics"]] for x in lines
    }
    assert codes["init.pp"] == [(strict, "DUPLICATE_KEY")]
    assert ("deprecation", "ILLEGAL_NONLITERAL_PARAMETER_TYPE") in codes["typed.pp"]
    assert rc == 1


def test_explicit_strict_overrides_the_level(tree):
    f = str(tree / "modules/aaa/manifests/init.pp")
    assert jrun(f, "--puppet-version", "8")[0] == 1  # DUPLICATE_KEY is an error at level 8
    rc, [item] = jrun(f, "--puppet-version", "8", "--strict", "warning")
    assert rc == 0 and [d["severity"] for d in item["diagnostics"]] == ["warning"]
    rc, [item] = jrun(f, "--puppet-version", "7.23", "--strict", "error")
    assert rc == 1 and [d["severity"] for d in item["diagnostics"]] == ["error"]


def test_paths_among_options_and_a_repeated_flag(tmp_path, oracle):
    """``--validate a.pp --format json --validate b.pp``: every path is validated, wherever it stands
    (the one parser collects positionals among the options; a repeated mode flag is the same mode)."""
    from puppet_xpp.server.cli.main import main

    good, bad = tmp_path / "a.pp", tmp_path / "b.pp"
    good.write_text("notice(1)\n")
    bad.write_text("$b = }\n")
    out = io.StringIO()
    argv = ["--validate", str(good), "--format", "json", "--puppet-version", "7.23", "--validate", str(bad)]
    rc = main(argv, out=out, err=io.StringIO())
    items = [json.loads(line) for line in out.getvalue().splitlines()]
    assert rc == 1
    assert [i["file"] for i in items] == [str(good), str(bad)]
    want = oracle.request("validate", file=str(bad))["result"]
    first = items[1]["diagnostics"][0]
    assert (first["severity"], first["code"], first["line"], first["column"]) == keys(want, "pos")[0]


# --- on a terminal (server/cli/terminal.py): colour, the source line and a caret; the plain format elsewhere


def on_pty(argv, *, columns=80, env=None, cwd=None):
    """Run ``argv`` with stdout and stderr on a pseudo-terminal of ``columns`` columns: what it wrote."""
    import fcntl
    import struct
    import sys
    import termios

    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, columns, 0, 0))
    environment = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR", "COLUMNS")}
    environment.update(TERM="xterm", **(env or {}))
    proc = subprocess.Popen(
        [sys.executable, "-m", "puppet_xpp", *argv],
        stdin=subprocess.DEVNULL,
        stdout=slave,
        stderr=slave,
        env=environment,
        cwd=cwd,
    )
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:  # EIO: the other side is closed
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    assert proc.wait(timeout=120) in (0, 1)
    return b"".join(chunks).decode("utf-8").replace("\r\n", "\n")


TTY_SOURCE = "class zzz {\n\t$x = {a => 1, a => 2}\n  1\n}\n"


def test_terminal_source_line_and_caret(tmp_path, oracle):
    f = tmp_path / "t.pp"
    f.write_text(TTY_SOURCE)
    text = on_pty(["--validate", str(f), "--puppet-version", "7.23"])
    lines = text.splitlines()
    want = oracle.call("validate", file=str(f))
    assert want and len(lines) == 3 * len(want)
    source = TTY_SOURCE.split("\n")
    for k, d in enumerate(
        [d for d in want if d["severity"] != "error"] + [d for d in want if d["severity"] == "error"]
    ):
        head, shown_line, caret = lines[3 * k : 3 * k + 3]
        word = "\033[1;31mError:\033[0m" if d["severity"] == "error" else "\033[1;33mWarning:\033[0m"
        assert head.startswith(word) and d["message"] in head
        assert shown_line == "  " + source[d["line"] - 1]
        # the caret under Puppet's column (tabs kept, so it lines up on any tab width)
        plain = caret.replace("\033[1;32m", "").replace("\033[0m", "")
        assert plain.index("^") - 2 == d["pos"] - 1
        assert plain[2 : plain.index("^")].strip(" \t") == ""


def test_terminal_no_color_and_force_color(tmp_path):
    f = tmp_path / "t.pp"
    f.write_text(TTY_SOURCE)
    plain = on_pty(["--validate", str(f)], env={"NO_COLOR": "1", "FORCE_COLOR": "1"})
    assert "\033[" not in plain and "^" in plain  # NO_COLOR wins; the caret stays (a terminal)
    p = subprocess.run(
        [sys_executable(), "-m", "puppet_xpp", "--validate", str(f)],
        capture_output=True,
        text=True,
        env={**os.environ, "FORCE_COLOR": "1"},
    )
    assert "\033[1;31mError:\033[0m" in p.stdout and "^" not in p.stdout  # colour forced; a pipe: no caret
    p = subprocess.run(
        [sys_executable(), "-m", "puppet_xpp", "--validate", str(f)], capture_output=True, text=True
    )
    assert "\033[" not in p.stdout and all(line.startswith("Error: ") for line in p.stdout.splitlines())


def sys_executable():
    import sys

    return sys.executable


def test_compile_progress_fits_an_80_column_terminal(tmp_path):
    e = tmp_path / ("env-with-a-rather-long-name-" + "x" * 40)
    for i in range(120):
        p = e / "modules" / "m" / "manifests" / f"a_file_with_a_long_name_to_fill_the_line_{i}.pp"
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(f"class m::a_file_with_a_long_name_to_fill_the_line_{i} {{ }}\n")
    text = on_pty(["--compile", str(e), "-j", "1"], columns=80)
    redraws = [r for line in text.split("\n") for r in line.split("\r") if r.startswith("\033[K[")]
    assert redraws, text
    visible = [r.replace("\033[K", "") for r in redraws]
    assert max(len(v) for v in visible) <= 79  # never wraps on 80 columns
    assert visible[-1].startswith("[") and "120/120" in visible[-1]
    assert f"{e}: compiled 120, up to date 0" in text


def test_stdin_with_stdin_filename_like_puppet_on_that_file(tree, oracle):
    """``-`` with ``--stdin-filename``: the location rules (module of the file, plans) and the names in
    the diagnostics are that path's, as Puppet gives them for the file itself."""
    import sys

    mp = str(tree / "modules")
    for rel in ("modules/aaa/manifests/bad.pp", "modules/aaa/plans/deploy.pp"):
        path = str(tree / rel)
        with open(path, "rb") as stdin:
            p = subprocess.run(
                [sys.executable, "-m", "puppet_xpp", "--validate", "-", "--stdin-filename", path]
                + ["--modulepath", mp, "--puppet-version", "7.23", "--format", "json"],
                stdin=stdin,
                capture_output=True,
                text=True,
            )
        (item,) = [json.loads(line) for line in p.stdout.splitlines()]
        assert item["file"] == path
        want = oracle.call("validate", file=path, modulepath=[mp], tasks="/plans/" in path)
        assert keys(item["diagnostics"]) == keys(want, "pos")
        assert [d["message"] for d in item["diagnostics"]] == [d["message"] for d in want]
        assert p.returncode == (1 if any(d["severity"] == "error" for d in want) else 0)


def test_stdin_size_limit_and_encoding(tmp_path, oracle):
    import sys

    bad = tmp_path / "bad.pp"
    bad.write_bytes(b"$a = '\xff'\n")
    want = oracle.request("validate", file=str(bad))  # Puppet's ArgumentError, without a position
    p = subprocess.run(
        [sys.executable, "-m", "puppet_xpp", "--validate", "-", "--stdin-filename", str(bad)],
        input=bad.read_bytes(),
        capture_output=True,
    )
    assert p.returncode == 1
    assert p.stdout.decode() == f"Error: {want['error']} (file: {bad})\n"
    p = subprocess.run(
        [sys.executable, "-m", "puppet_xpp", "--validate", "-"],
        input=b"$a = 1\n" * 100,
        capture_output=True,
        env={**os.environ, "PUPPET_XPP_MAX_SOURCE_SIZE": "100"},
    )
    assert p.returncode == 2  # refused by the size limit, as a file over it is
    assert b"larger than the source size limit (100 bytes)" in p.stdout and b"<stdin>" in p.stdout


def test_compile_errors_on_a_terminal_show_the_caret(tmp_path, oracle):
    """--compile's diagnostics on a terminal: coloured, with the source line and a caret under Puppet's
    column (the same rule as --validate's)."""
    e = tmp_path / "env"
    f = e / "modules" / "m" / "manifests" / "init.pp"
    f.parent.mkdir(parents=True)
    f.write_text("class m {\n  $x = {a => 1, a => 2}\n}\n")
    text = on_pty(["--compile", str(e), "-j", "1", "--puppet-version", "7.23", "--strict", "error"])
    (want,) = oracle.call("validate", file=str(f), modulepath=[str(e / "modules")], strict="error")
    # the progress line is cleared (\r, erase to the end) before the diagnostics are printed
    lines = [line.split("\r")[-1].replace("\033[K", "") for line in text.split("\n")]
    k = next(i for i, line in enumerate(lines) if line.startswith("\033[1;31mError:\033[0m"))
    assert want["message"] in lines[k]
    assert lines[k + 1] == "  " + f.read_text().split("\n")[want["line"] - 1]
    caret = lines[k + 2].replace("\033[1;32m", "").replace("\033[0m", "")
    assert caret.index("^") - 2 == want["pos"] - 1

"""The Ruby oracle answers, and its client behaves (cache, batches, errors)."""

from __future__ import annotations

import pytest

from tests.conformance.oracle import Oracle, OracleError


def test_pn_of_assignment_is_puppets_documented_answer(oracle):
    assert oracle.call("pn", source="$a = 1") == {"^": ["=", {"^": ["var", "a"]}, 1]}


def test_pn_of_epp_uses_the_epp_parser(oracle):
    pn = oracle.call("pn", source="<%= $x %>!", epp=True)
    assert pn["^"][0] == "lambda"


def test_syntax_error_comes_back_with_issue_code_and_position(oracle):
    with pytest.raises(OracleError) as info:
        oracle.call("pn", source="$a = 1\n$b = }")
    err = info.value
    assert err.issue_code == "SYNTAX_ERROR"
    assert (err.line, err.pos) == (2, 6)


def test_tasks_flag_only_affects_its_own_request(oracle):
    assert oracle.call("pn", source="plan p { }", tasks=True) == {"^": ["plan", {"#": ["name", "p"]}]}
    # without tasks, `plan` is a bare word again (and the next request is not affected by the previous one)
    assert oracle.call("pn", source="plan p { }")["^"][0] == "block"
    assert oracle.call("pn", source="plan p { }", tasks=True)["^"][0] == "plan"


def test_positions_start_with_program_then_preorder(oracle):
    assert oracle.call("positions", source="$a = 1") == [
        ["Program", None, None],
        ["AssignmentExpression", 3, 1],
        ["VariableExpression", 0, 2],
        ["QualifiedName", 1, 1],
        ["LiteralInteger", 5, 1],
    ]


def test_file_argument_is_read_and_keys_the_cache_by_content(tmp_path):
    o = Oracle(cache_root=tmp_path / "cache")
    try:
        f = tmp_path / "x.pp"
        f.write_text("$a = 1\n")
        assert o.call("pn", file=str(f)) == {"^": ["=", {"^": ["var", "a"]}, 1]}
        f.write_text("$b = 2\n")
        assert o.call("pn", file=str(f)) == {"^": ["=", {"^": ["var", "b"]}, 2]}
        # answered from the cache once the process is gone
        o.close()
        o._start = None  # type: ignore[assignment]  # any start attempt would now raise
        assert o.call("pn", file=str(f)) == {"^": ["=", {"^": ["var", "b"]}, 2]}
    finally:
        o.__dict__.pop("_start", None)
        o.close()


def test_call_many_keeps_order_and_returns_errors(tmp_path):
    o = Oracle(cache_root=None)
    try:
        sources = [f"$v{i} = {i}" for i in range(300)] + ["$x = "]
        out = o.call_many("pn", [{"source": s} for s in sources])
        assert out[:300] == [{"^": ["=", {"^": ["var", f"v{i}"]}, i]} for i in range(300)]
        assert isinstance(out[300], OracleError) and out[300].issue_code == "SYNTAX_ERROR"
    finally:
        o.close()


def test_oracle_restarts_after_its_process_dies():
    o = Oracle(cache_root=None)
    try:
        assert o.call("ping")["puppet"].startswith("7.")
        o._proc.kill()
        o._proc.wait()
        assert o.call("pn", source="1") == 1
    finally:
        o.close()


def test_validate_collects_all_diagnostics_with_lexer_warnings_first(oracle):
    src = 'class foo($x, $x) {\n  "\\q"\n  $a = {a => 1, a => 2}\n}\n@class { "y": }\n'
    got = [(d["severity"], d["code"], d["line"], d["pos"]) for d in oracle.call("validate", source=src)]
    assert got == [
        ("warning", "UNRECOGNIZED_ESCAPE", 2, 7),  # Puppet reports the column after the string
        ("error", "DUPLICATE_PARAMETER", 1, 15),
        ("error", "IDEM_EXPRESSION_NOT_LAST", 2, 3),
        ("warning", "DUPLICATE_KEY", 3, 19),  # a KeyedEntry is located at its =>
        ("error", "CLASS_NOT_VIRTUALIZABLE", 5, 1),
    ]


def test_validate_strict_controls_duplicate_key(oracle):
    src = "$a = {a => 1, a => 2}"
    sev = {
        s: [d["severity"] for d in oracle.call("validate", source=src, strict=s)]
        for s in ("off", "warning", "error")
    }
    assert sev == {"off": [], "warning": ["warning"], "error": ["error"]}


def test_validate_syntax_error_is_one_entry(oracle):
    (d,) = oracle.call("validate", source="$a = 1\n$b = }")
    assert (d["severity"], d["code"], d["line"], d["pos"]) == ("error", "SYNTAX_ERROR", 2, 6)


def test_validate_location_rules_follow_the_given_modulepath(oracle, tmp_path):
    manifests = tmp_path / "modules" / "m" / "manifests"
    manifests.mkdir(parents=True)
    f = manifests / "foo.pp"
    f.write_text("class bar { }\nnotice(1)\n")
    codes = [d["code"] for d in oracle.call("validate", file=str(f), modulepath=[str(tmp_path / "modules")])]
    assert codes == ["ILLEGAL_TOP_CONSTRUCT_LOCATION", "ILLEGAL_DEFINITION_LOCATION"]
    # the same file as the environment's manifest, or without an environment: no location rules
    assert oracle.call("validate", file=str(f), modulepath=[str(tmp_path / "modules")], manifest=str(f)) == []
    assert oracle.call("validate", file=str(f)) == []


def test_corpus_lists_each_real_file_once():
    import os

    from tests.conformance.corpus import CORPUS_ROOT, corpus_files

    pp, epp = corpus_files("pp"), corpus_files("epp")
    if not CORPUS_ROOT.is_dir():
        assert pp == epp == []
        return
    assert pp and epp and pp == sorted(pp) and epp == sorted(epp)
    assert all(p.endswith(".pp") for p in pp) and all(p.endswith(".epp") for p in epp)
    real = [os.path.realpath(p) for p in pp + epp]
    assert len(set(real)) == len(real)
    # the module symlinks are followed, and a fixture linking back to its module adds nothing
    assert f"{CORPUS_ROOT}/stdlib/manifests/init.pp" in pp
    assert not any("/spec/fixtures/modules/logrotate/" in p for p in pp)


def _puppet_cli(tmp_path, *args):
    import subprocess

    d = tmp_path / "puppet-cli"
    cmd = [
        "puppet",
        *args[:2],
        "--confdir",
        str(d / "c"),
        "--vardir",
        str(d / "v"),
        "--codedir",
        str(d / "code"),
        *args[2:],
    ]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300)


def test_pn_equals_puppet_parser_dump_and_epp_dump(oracle, tmp_path):
    import json

    pp = tmp_path / "x.pp"
    pp.write_text(
        'class a::b(Integer $x = 0x1F) {\n  notice("v=${x[0]}")\n  File <<| tag == "t" |>> { mode => "0644" }\n}\n'
    )
    epp = tmp_path / "t.epp"
    epp.write_text("<%- | String $n, $m = 2 | -%>\nHello <%= $n %><% if $m > 1 { %>!<% } %>\n")
    for cli, f in ((("parser", "dump"), pp), (("epp", "dump"), epp)):
        done = _puppet_cli(tmp_path, *cli, "--format", "json", str(f))
        assert done.returncode == 0 and done.stderr == "", done.stderr
        assert oracle.call("pn", file=str(f)) == json.loads(done.stdout)


def test_validate_error_matches_puppet_parser_validate(oracle, tmp_path):
    f = tmp_path / "bad.pp"
    f.write_text("$a = 1\nclass x { @class { 'y': } }\n")
    (d,) = oracle.call("validate", file=str(f))
    done = _puppet_cli(tmp_path, "parser", "validate", str(f))
    assert done.returncode == 1
    assert f"{d['message']} (file: {f}, line: {d['line']}, column: {d['pos']})" in done.stderr


def test_each_puppet_has_its_own_oracle_and_cache_keys(tmp_path):
    """Oracle.get("8") runs OpenVox 8 (tests/conformance/puppets.py); the cache key names which Puppet
    answered, so the two never share an answer, and each answers with its own rules."""
    from tests.conformance.oracle import oracle_for

    o7 = oracle_for("7.23")
    o8 = oracle_for("8")
    assert o7 is Oracle.get("7.23") and o8 is Oracle.get("8") and o7 is not o8
    assert o7.call("ping")["puppet"].startswith("7.23") and o8.call("ping")["puppet"] == "8.28.1"
    args = {"source": "$a = {String => 1, string => 2}"}
    assert o7._key("validate", args) != o8._key("validate", args)
    assert o7.call("validate", **args) == []  # 7.23's literal evaluation skips type references
    assert [d["code"] for d in o8.call("validate", **args)] == ["DUPLICATE_KEY"]
    # Puppet 8 fails with a Ruby error where its literal evaluation negates a boolean
    ans = o8.request("validate", source="$a = {-true => 1}")
    assert not ans["ok"] and ans["class"] == "NoMethodError"


def test_environment_op_is_puppets_directory_environment(oracle, tmp_path):
    env = tmp_path / "envs" / "production"
    (env / "modules").mkdir(parents=True)
    (env / "environment.conf").write_text("modulepath = site:modules:$basemodulepath\n")
    got = oracle.call("environment", dir=str(env), basemodulepath=["/opt/base"])
    assert got == {
        "modulepath": [str(env / "site"), str(env / "modules"), "/opt/base"],
        "manifest": str(env / "manifests"),
    }

"""`puppet-xpp --verify` (xpp/verify.py, server/cli/verify.py).

Well-formed inputs are documents Puppet itself serialized (oracle op `pcore_write`) and what we compile;
ill-formed ones are Puppet's bytes with one defect each.  Every defect gives exit status 1 and a message
naming the file and the problem.
"""

from __future__ import annotations

import base64
import io
import re

import pytest

from puppet_xpp.server.cli import verify as cmd_verify
from puppet_xpp.xpp import envelope
from puppet_xpp.xpp.result import write_xpp
from puppet_xpp.xpp.verify import verify_bytes

SRC = "class a { }\n$a = 1\n"
HEAD_JSON = envelope.header("json")


def verify(tmp_path, files: dict, *extra):
    paths = []
    for name, data in files.items():
        p = tmp_path / name
        p.write_bytes(data)
        paths.append(str(p))
    out = io.StringIO()
    rc = cmd_verify.main([*paths, *extra], out=out)
    return rc, out.getvalue()


@pytest.fixture(scope="module")
def puppet_json(oracle):
    """Puppet's JSON serialization of SRC (a bare Program), as text."""
    return base64.b64decode(
        oracle.call("pcore_write", source=SRC, path="/srv/a.pp", format="json")["bytes"]
    ).decode()


DIAG = {
    "severity": "warning",
    "issue_code": "X",
    "message": "m",
    "arguments": {},
    "file": "/srv/a.pp",
    "offset": 12,
    "length": 2,
    "line": 2,
    "pos": 1,
}


@pytest.fixture(scope="module")
def puppet_result_json(oracle):
    return base64.b64decode(
        oracle.call(
            "pcore_write",
            source=SRC,
            path="/srv/a.pp",
            format="json",
            what="parse_result",
            diagnostics=[DIAG],
        )["bytes"]
    ).decode()


def test_puppet_documents_are_well_formed(tmp_path, oracle, puppet_json, puppet_result_json):
    files = {
        "bare.xpp": HEAD_JSON + puppet_json.encode(),
        "result.xpp": HEAD_JSON + puppet_result_json.encode(),
    }
    for fmt in ("msgpack", "json"):
        for what in ("program", "parse_result"):
            b = base64.b64decode(
                oracle.call("pcore_write", source=SRC, path="/srv/a.pp", format=fmt, what=what)["bytes"]
            )
            files[f"{what}.{fmt}.xpp"] = envelope.wrap(b, fmt)
    rc, out = verify(tmp_path, files)
    assert rc == 0, out
    assert len(out.splitlines()) == len(files) and all(": OK (" in x for x in out.splitlines())
    assert "program of 6 nodes, 1 definitions" in out


def test_our_documents_are_well_formed(tmp_path):
    from puppet_xpp.grammar.parser import parse

    files = {}
    for i, src in enumerate(
        [
            SRC,
            "",
            "# only a comment\n",
            "$x = @(E)\n  text ${a}\n  | E\nnotice($x)\n",
            "class {\n",
            "$a = 'h\u00e9llo'\nnotice(\"${a} \u20ac\")\n",
        ]
    ):
        r = parse(src, f"f{i}.pp")
        program = None if r.errors else r.program
        for fmt in ("msgpack", "json"):
            files[f"f{i}.{fmt}.xpp"] = write_xpp(program, r.diagnostics, fmt, locator=r.locator)
    rc, out = verify(tmp_path, files)
    assert rc == 0, out


DEFECTS = [
    # (name, replace this, by this, expected message part)
    ("line_index", "[16,3,0,12,19]", "[16,3,0,11,19]", "line_index is inconsistent"),
    ("line_index_short", "[16,3,0,12,19]", "[16,2,0,12]", "line_index is inconsistent"),
    ("offset", '"LiteralInteger",4,[1,1],17,1,1]', '"LiteralInteger",4,[1,1],90,1,1]', "outside the source"),
    (
        "length",
        '"HostClassDefinition",4,[1,1],0,11,',
        '"HostClassDefinition",4,[1,1],0,99,',
        "outside the source",
    ),
    (
        "negative",
        '"LiteralInteger",4,[1,1],17,1,1]',
        '"LiteralInteger",4,[1,1],-1,1,1]',
        "outside the source",
    ),
    ("count", '"LiteralInteger",4,[1,1],17,1,1]', '"LiteralInteger",3,[1,1],17,1]', "Feature count mismatch"),
    (
        "type",
        '"HostClassDefinition",4,[1,1],0,11,"a"]',
        '"HostClassDefinition",4,[1,1],0,11,5]',
        "HostClassDefinition[name] has wrong type",
    ),
    ("enum", ',"="]]]', ',"=="]]]', "AssignmentExpression[operator] has wrong type"),
    (
        "definition",
        "[16,1,[1,5]]",
        '[16,1,[18,3,0,1,"HostClassDefinition",4,[1,1],0,11,"b"]]',
        "is not a node of the body",
    ),
    (
        "twice",
        '[16,2,[18,3,0,1,"HostClassDefinition"',
        '[16,3,[1,5],[18,3,0,1,"HostClassDefinition"',
        None,
    ),  # a reference to an object not read yet: rejected by the reader
    (
        "locator",
        '"LiteralInteger",4,[1,1],17,1,1]',
        '"LiteralInteger",4,[18,3,0,1,"Locator",3,"x","/other.pp",[16,1,0]],17,1,1]',
        "refers to another Locator",
    ),
    ("truncated", ',"="]]]', ',"="', "payload"),
    ("trailing", "[16,1,[1,5]]]]", "[16,1,[1,5]]],1]", "trailing data"),
    ("unknown_type", '"LiteralInteger",4', '"LiteralInteger2",4', "No implementation mapping"),
]


@pytest.mark.parametrize("name,old,new,msg", DEFECTS, ids=[d[0] for d in DEFECTS])
def test_defects_are_reported(tmp_path, puppet_json, name, old, new, msg):
    assert old in puppet_json
    bad = HEAD_JSON + puppet_json.replace(old, new, 1).encode()
    rc, out = verify(tmp_path, {f"{name}.xpp": bad})
    assert rc == 1, out
    lines = out.splitlines()
    assert lines and all(x.startswith(str(tmp_path / f"{name}.xpp") + ": error: ") for x in lines)
    if msg:
        assert msg in out, out


def test_node_contained_twice(tmp_path, puppet_json):
    # the body's statement list holds the class twice (the second time by reference): the reader rejects
    # such a back-reference (Puppet's model shares only the Locator and the definitions)
    bad = puppet_json.replace(
        '"a"],[18,3,0,1,"AssignmentExpression"', '"a"],[1,5],[18,3,0,1,"AssignmentExpression"'
    )
    bad = bad.replace('[16,2,[18,3,0,1,"HostClassDefinition"', '[16,3,[18,3,0,1,"HostClassDefinition"')
    rc, out = verify(tmp_path, {"twice.xpp": HEAD_JSON + bad.encode()})
    assert rc == 1 and "payload: TABULATION 5: a repeated reference" in out, out


DIAG_DEFECTS = [
    ('"line",2,"pos",1', '"line",1,"pos",1', "do not match offset"),
    ('"severity","warning"', '"severity","fatal"', "severity 'fatal'"),
    ('"offset",12', '"offset",40', "outside the source"),
    ('"file",[0,', '"file","/other.pp","x",[0,', "unknown keys"),
]


@pytest.mark.parametrize("old,new,msg", DIAG_DEFECTS)
def test_diagnostic_defects(tmp_path, puppet_result_json, old, new, msg):
    assert old in puppet_result_json
    text = puppet_result_json.replace(old, new, 1)
    if new.startswith('"file","/other.pp"'):  # one more key: the map count grows
        text = text.replace("[17,9,", "[17,10,", 1)
    rc, out = verify(tmp_path, {"d.xpp": HEAD_JSON + text.encode()})
    assert rc == 1 and msg in out, out


def test_envelope_defects_and_several_files(tmp_path, puppet_json):
    good = HEAD_JSON + puppet_json.encode()
    files = {
        "good.xpp": good,
        "text.xpp": b"class a { }\n",
        "version.xpp": good.replace(b"version=1", b"version=2", 1),
        "noblank.xpp": good.replace(b"\n\n", b"\n", 1),
        "empty.xpp": b"",
    }
    rc, out = verify(tmp_path, files)
    assert rc == 1
    by_file = {}
    for line in out.splitlines():
        f, rest = line.split(": ", 1)
        by_file.setdefault(f.rsplit("/", 1)[1], []).append(rest)
    assert by_file["good.xpp"][0].startswith("OK (json, program of 6 nodes")
    for name in ("text.xpp", "version.xpp", "noblank.xpp", "empty.xpp"):
        assert by_file[name][0].startswith("error: envelope: "), by_file[name]
    assert "version" in by_file["version.xpp"][0]
    rc, out = verify(tmp_path, {"good2.xpp": good}, "--quiet")
    assert rc == 0 and out == ""


def test_unreadable_and_usage(tmp_path):
    out = io.StringIO()
    assert cmd_verify.main([str(tmp_path / "missing.xpp")], out=out) == 2
    assert "cannot read" in out.getvalue()
    assert cmd_verify.main([], out=io.StringIO()) == 2


def test_directory_argument(tmp_path, puppet_json):
    d = tmp_path / "tree" / "a"
    d.mkdir(parents=True)
    (d / "x.xpp").write_bytes(HEAD_JSON + puppet_json.encode())
    (d / "y.txt").write_text("ignored")
    out = io.StringIO()
    assert cmd_verify.main([str(tmp_path / "tree")], out=out) == 0
    assert re.fullmatch(r".*/x\.xpp: OK \(.*\)\n", out.getvalue())


def test_verify_never_raises_on_garbage():
    import random

    rnd = random.Random(5)
    base = write_xpp(None, []) + bytes(range(256))
    for _ in range(2000):
        data = bytearray(base)
        for _ in range(rnd.randint(1, 8)):
            data[rnd.randrange(len(data))] = rnd.randrange(256)
        assert isinstance(verify_bytes(bytes(data[: rnd.randrange(len(data) + 1)])), list)

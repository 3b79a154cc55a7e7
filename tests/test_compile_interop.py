"""Interop with real Puppet over the whole corpus (issue 4 item 6, issue 5 item 8).

* Every corpus manifest and template, both encodings: Puppet 7's own Deserializer reads the .xpp we write
  for it (an ``Xpp::ParseResult`` holding our parse and our diagnostics) and the Program it gets is ``==``
  Puppet's own parse of the file; the diagnostics come back unchanged; the document verifies.
* The corpus compiled as an environment's modulepath (``--compile``), both encodings: every .xpp is read by
  Puppet; a Program equals Puppet's parse of its source; a diagnostics-only .xpp is written exactly for the
  files Puppet's validation rejects.

Requests are batched with ``oracle.call_many`` (and cached on disk by the oracle).
"""

from __future__ import annotations

import base64
import os

import pytest

from puppet_xpp.xpp.result import read_xpp, write_xpp
from puppet_xpp.xpp.verify import verify_bytes
from tests.conformance.corpus import corpus_files, corpus_modulepath
from tests.conformance.oracle import OracleError

pytestmark = pytest.mark.corpus


def _files():
    files = corpus_files("pp") + corpus_files("epp")
    if not files:
        pytest.skip("corpus not installed")
    return files


@pytest.mark.parametrize("fmt", ["msgpack", "json"])
def test_puppet_reads_every_corpus_file_we_write(oracle, fmt):
    from puppet_xpp.grammar.parser import parse
    from puppet_xpp.grammar.validator import validate

    mp = corpus_modulepath()
    reqs, records = [], []
    for f in _files():
        with open(f, encoding="utf-8", errors="surrogateescape") as fh:
            text = fh.read()
        r = parse(text, f)
        assert r.program is not None and not r.errors, f
        diags = list(r.diagnostics) + validate(r.program, file=f, modulepath=mp)
        doc = write_xpp(r.program, diags, fmt)
        assert verify_bytes(doc) == [], f
        records.append(read_xpp(doc)[1])
        reqs.append({"data": base64.b64encode(doc).decode(), "format": fmt, "envelope": True, "file": f})
    answers = oracle.call_many("pcore_read", reqs)
    bad = []
    for req, recs, ans in zip(reqs, records, answers):
        if isinstance(ans, OracleError):
            bad.append((req["file"], str(ans)))
        elif not (
            ans["equal"] is True
            and ans["locator_shared"]
            and ans["definitions_in_body"]
            and ans["type"] == "Xpp::ParseResult"
            and ans["diagnostics"] == recs
        ):
            bad.append((req["file"], "not equal"))
    assert bad == []
    assert len(reqs) > 900


@pytest.mark.parametrize("fmt", ["msgpack", "json"])
def test_puppet_reads_the_compiled_corpus_environment(oracle, tmp_path, fmt):
    from puppet_xpp.xpp.compile import Options, compile_environment, detect_environment

    mp = corpus_modulepath()
    if not mp:
        pytest.skip("corpus not installed")
    env_dir = tmp_path / "env"
    (env_dir / "manifests").mkdir(parents=True)
    (env_dir / "manifests" / "site.pp").write_text("node default { include apache }\n")
    (env_dir / "environment.conf").write_text(f"modulepath = {mp[0]}\n")
    env = detect_environment(str(env_dir))
    res = compile_environment(env, Options(fmt=fmt, jobs=2))
    assert res.io_errors == [] and len(res.files) > 800
    reads, validations = [], []
    for fr in res.files:
        with open(fr.job.out, "rb") as fh:
            data = fh.read()
        assert verify_bytes(data) == [], fr.job.out
        with open(fr.job.src, encoding="utf-8", errors="surrogateescape") as fh:
            text = fh.read()
        reads.append(
            {
                "data": base64.b64encode(data).decode(),
                "format": fmt,
                "envelope": True,
                "source": text,
                "path": fr.job.recorded,
                "tasks": fr.job.tasks,
            }
        )
        validations.append(
            {
                "file": fr.job.src,
                "modulepath": list(env.modulepath),
                "manifest": env.manifest,
                "tasks": fr.job.tasks,
            }
        )
    got = oracle.call_many("pcore_read", reads)
    want = oracle.call_many("validate", validations)
    bad = []
    for fr, g, w in zip(res.files, got, want):
        puppet_errors = [d for d in w if d["severity"] == "error"]
        if isinstance(g, OracleError):
            bad.append((fr.job.src, str(g)))
        elif puppet_errors:
            # rejected by Puppet: Puppet's errors among the diagnostics, and the AST (PRFC-23) when only
            # validation failed, equal to Puppet's own parse
            codes = {d["issue_code"] for d in g["diagnostics"] if d["severity"] == "error"}
            kept_ast_differs = g["program"] is not None and g["equal"] is not True
            if kept_ast_differs or codes != {d["code"] for d in puppet_errors}:
                bad.append((fr.job.src, "errors"))
        elif g["equal"] is not True:
            bad.append((fr.job.src, "not equal"))
        elif os.path.isabs(fr.job.recorded) != (fr.job.module != "environment"):
            bad.append((fr.job.src, "recorded name: absolute outside the environment, else relative"))
    assert bad == []

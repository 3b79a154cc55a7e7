"""runtime/xpp against the real Puppet 7.23 and OpenVox 8: catalogs compiled with and without ``--xpp`` are
identical (resources, parameters, edges, file/line), every Puppet-language file Puppet loads is served from
its ``.xpp``, and damaged, stale, missing and error-holding ``.xpp`` files give the documented fallback (one
warning naming the file) or the replayed error, and the same catalog.

Each case runs ``tests/runtime/catalog.rb`` (one Ruby process per compile) and compares its outputs with
each other: the reference is always Puppet's own compile without the runtime's help.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess

import pytest

from puppet_xpp.xpp import compile as xcompile
from puppet_xpp.xpp.compile import writes
from tests.conformance.puppets import missing_reason, ruby_command

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DRIVER = os.path.join(REPO, "tests", "runtime", "catalog.rb")
RUNTIME_LIB = os.path.join(REPO, "runtime", "xpp", "lib")
# the level puppet-xpp validates at for each Puppet, and that Puppet's default strict
LEVEL = {"7.23": ("7.23", "warning"), "8": ("8", "error")}
FACTS = {
    "networking": {"fqdn": "web1.example.com", "hostname": "web1", "ip": "192.0.2.10"},
    "os": {"family": "Debian", "name": "Debian", "release": {"major": "12", "full": "12.5"}},
    "kernel": "Linux",
    "fqdn": "web1.example.com",
    "hostname": "web1",
    "domain": "example.com",
    # legacy facts many corpus modules still read (Puppet 8's strict mode makes a missing one an error)
    "osfamily": "Debian",
    "operatingsystem": "Debian",
    "operatingsystemrelease": "12.5",
    "operatingsystemmajrelease": "12",
    "lsbdistcodename": "bookworm",
    "lsbdistid": "Debian",
    "lsbmajdistrelease": "12",
    "architecture": "amd64",
    "ipaddress": "192.0.2.10",
    "ipaddress_eth1": "192.0.2.11",
    "macaddress": "52:54:00:12:34:56",
    "augeasversion": "1.14.0",
    "puppetversion": "7.23.0",
    "processorcount": 2,
    "memorysize_mb": 2048,
    "is_virtual": True,
    "virtual": "kvm",
    "path": "/usr/sbin:/usr/bin:/sbin:/bin",
    "concat_basedir": "/var/lib/puppet/concat",
    "kernelversion": "6.1.0",
    "kernelmajversion": "6.1",
    "selinux": False,
    "id": "root",
    "root_home": "/root",
}


def compile_tree(envdir: str, puppet: str, fmt: str = "msgpack") -> None:
    """``envdir/.xpp`` at the language level of ``puppet`` (what ``puppet-xpp --compile`` writes)."""
    level, strict = LEVEL[puppet]
    env = xcompile.detect_environment(envdir)
    jobs, _skipped = xcompile.plan(env)
    for job in jobs:
        data, _rows = xcompile.compile_file(
            job.src,
            job.recorded,
            tasks=job.tasks,
            strict=strict,
            modulepath=env.modulepath,
            manifest=env.manifest,
            puppet_version=level,
            fmt=fmt,
        )
        writes.write_atomic(job.out, data)


CORPUS = "/usr/share/puppet/modules"


def corpus_env(puppet: str) -> str:
    """An environment whose module path is the Debian module corpus, with its ``.xpp`` tree at the level
    of ``puppet``; cached under ``.cache/runtime/`` (keyed by the compiler's code fingerprint)."""
    level = LEVEL[puppet][0]
    d = os.path.join(
        REPO, ".cache", "runtime", xcompile.code_fingerprint(), level.replace(".", "_"), "corpus"
    )
    done = os.path.join(d, ".xpp", "complete")
    if not os.path.exists(done):
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "environment.conf"), "w") as f:
            f.write(f"modulepath = {CORPUS}\n")
        compile_tree(d, puppet)
        open(done, "w").close()
    return d


def corpus_classes() -> list:
    return sorted(
        m for m in os.listdir(CORPUS) if os.path.isfile(os.path.join(CORPUS, m, "manifests", "init.pp"))
    )


def run(puppet: str, envdir: str, tmp, xpp: bool, **extra) -> dict:
    req = {
        "runtime_lib": RUNTIME_LIB,
        "confdir": str(tmp / "conf"),
        "vardir": str(tmp / "var"),
        "codedir": str(tmp / "code"),
        "environmentpath": os.path.dirname(envdir),
        "environment": os.path.basename(envdir),
        "xpp": xpp,
        "node": "web1.example.com",
        "facts": FACTS,
    }
    req.update(extra)
    path = tmp / f"req-{os.getpid()}.json"
    path.write_text(json.dumps(req))
    out = subprocess.run(
        ruby_command(puppet) + [DRIVER, str(path)], capture_output=True, text=True, timeout=300, cwd=str(tmp)
    )
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def xpp_warnings(res: dict) -> list:
    """The runtime's warnings: inside a compile the one summary of the files it parsed instead (each
    file's own line is at debug level, :func:`xpp_details`)."""
    return [
        lg["message"] for lg in res["logs"] if lg["level"] == "warning" and lg["message"].startswith("xpp: ")
    ]


def xpp_details(res: dict) -> list:
    """The runtime's per-file lines of a compile (debug level: ``run(..., log_level="debug")``)."""
    return [
        lg["message"]
        for lg in res["logs"]
        if lg["level"] == "debug" and lg["message"].startswith("xpp: not using")
    ]


def other_logs(res: dict) -> list:
    """Puppet's own warnings and errors (the runtime's lines and the compile timing left out)."""
    return [
        (lg["level"], lg["message"], lg["file"], lg["line"], lg["pos"])
        for lg in res["logs"]
        if lg["level"] in ("warning", "err") and not lg["message"].startswith("xpp:")
    ]


PUPPETS = [
    pytest.param(p, marks=pytest.mark.skipif(missing_reason(p) is not None, reason=str(missing_reason(p))))
    for p in ("7.23", "8")
]


@pytest.fixture()
def production(tmp_path):
    root = tmp_path / "envs"
    root.mkdir()
    d = root / "production"
    shutil.copytree(os.path.join(REPO, "examples", "production"), d, ignore=shutil.ignore_patterns(".xpp"))
    return str(d)


@pytest.mark.parametrize("puppet", PUPPETS)
def test_production_catalog_identical(puppet, production, tmp_path):
    compile_tree(production, puppet)
    plain = run(puppet, production, tmp_path, False)
    fast = run(puppet, production, tmp_path, True)
    assert "error" not in plain, plain
    assert fast["catalog"] == plain["catalog"]
    assert plain["loaded"] >= 3
    assert fast["served"] == plain["loaded"] == fast["loaded"] and fast["parsed"] == 0
    assert not xpp_warnings(fast) and other_logs(fast) == other_logs(plain)
    summary = [lg for lg in fast["logs"] if lg["message"].startswith("xpp: ") and lg["level"] == "info"]
    assert (
        len(summary) == 1
        and f"{plain['loaded']} manifests loaded from .xpp, 0 parsed" in summary[0]["message"]
    )


@pytest.mark.parametrize("puppet", PUPPETS)
def test_json_encoding_is_skipped_with_one_warning(puppet, production, tmp_path):
    """Issue 25 item 8: the JSON encoding loads ~8x slower than Puppet parses (Puppet's own Pcore
    deserializer), so the runtime parses the sources and says so once per process (two catalogs in one
    process: one warning), each file at debug level; the catalogs are Puppet's."""
    compile_tree(production, puppet, "json")
    plain = run(puppet, production, tmp_path, False)
    fast = run(puppet, production, tmp_path, True, classes=["base", "base"], log_level="debug")
    assert fast["catalogs"] == run(puppet, production, tmp_path, False, classes=["base", "base"])["catalogs"]
    (warned,) = xpp_warnings(fast)
    assert "JSON encoding" in warned and "for inspection only" in warned and "msgpack" in warned
    details = [m for m in xpp_details(fast) if "it is JSON-encoded (for inspection only)" in m]
    assert fast["served"] == 0 and fast["parsed"] == len(details) >= 2
    assert "error" not in plain


def damage(xpp: str, how: str, pp: str) -> None:
    data = open(xpp, "rb").read()
    if how == "missing":
        os.unlink(xpp)
    elif how == "truncated":
        open(xpp, "wb").write(data[: len(data) * 2 // 3])
    elif how == "corrupt":  # one flipped bit in the payload: the checksum catches it
        b = bytearray(data)
        b[-7] ^= 0x04
        open(xpp, "wb").write(bytes(b))
    elif how == "stale":
        with open(pp, "a", encoding="utf-8") as f:
            f.write("\n# edited after the compile\n")
    elif how == "garbage":
        head = data[: data.index(b"\n\n") + 2]
        open(xpp, "wb").write(head.split(b"; checksum=")[0] + b"\n\n" + b"\xd4\x12\x07" * 3)


# one damage per file of the catalog, so one pair of compiles checks them all: (source, damage, reason)
DAMAGES = [
    ("modules/base/manifests/init.pp", "missing", "it does not exist"),
    ("modules/webapp/manifests/init.pp", "truncated", "checksum"),
    ("modules/webapp/manifests/vhost.pp", "corrupt", "checksum"),
    ("modules/base/functions/greeting.pp", "stale", "stale"),
    ("manifests/site.pp", "garbage", "PCORE_OBJECT_START"),
]


@pytest.mark.parametrize("puppet", PUPPETS)
def test_damaged_xpp_falls_back(puppet, production, tmp_path):
    """Missing, truncated, corrupt (one bit), stale and garbage .xpp files: one warning for the compile
    (the count, each reason with its files), each file's line (the .xpp, the reason, the .pp parsed
    instead) at debug level, and the catalog is Puppet's own."""
    compile_tree(production, puppet)
    env = xcompile.detect_environment(production)
    jobs = {os.path.relpath(j.src, production): j for j in xcompile.plan(env)[0]}
    for src, how, _reason in DAMAGES:
        damage(jobs[src].out, how, jobs[src].src)
    plain = run(puppet, production, tmp_path, False)
    fast = run(puppet, production, tmp_path, True, log_level="debug")
    assert "error" not in plain, plain
    assert fast["catalog"] == plain["catalog"]
    (summary,) = xpp_warnings(fast)
    assert f"xpp: not using the .xpp of {len(DAMAGES)} of {plain['loaded']} manifests" in summary
    details = xpp_details(fast)
    assert len(details) == len(DAMAGES), details
    for src, how, reason in DAMAGES:
        (w,) = [w for w in details if jobs[src].out in w]
        assert jobs[src].src in w and reason in w, (how, w)
        assert jobs[src].out in summary and reason in summary, (how, summary)
    assert fast["parsed"] == len(DAMAGES) and fast["served"] == plain["loaded"] - len(DAMAGES)


@pytest.mark.parametrize("puppet", PUPPETS)
def test_error_holding_xpp_raises_puppets_error(puppet, production, tmp_path):
    """A validation error (the AST is kept, PRFC-23), a syntax error, and warnings: the same error (or
    catalog) as Puppet's, from the .xpp (no fallback), and the file's warnings replayed as Puppet logs them
    (message, file, line, column)."""
    user = os.path.join(production, "modules", "base", "manifests", "user.pp")
    text = open(user, encoding="utf-8").read()
    for bad in (
        text.rstrip()[:-1]
        + '  $base::other = 1\n  notice("\\q")\n}\n',  # CROSS_SCOPE_ASSIGNMENT + a lexer warning
        text.rstrip()[:-1] + "  $x = [1, 2\n}\n",  # syntax error
        # a lexer warning and DUPLICATE_KEY: warnings at 7.23 (strict=warning), an error at 8 (strict=error)
        text.rstrip()[:-1] + '  $h = {"a" => 1, "a" => 2}\n  notice("\\q", $h)\n}\n',
    ):
        open(user, "w", encoding="utf-8").write(bad)
        compile_tree(production, puppet)
        plain = run(puppet, production, tmp_path, False)
        fast = run(puppet, production, tmp_path, True)
        assert ("error" in plain) == (puppet == "8" or "$h" not in bad), plain
        assert fast.get("error") == plain.get("error") and fast.get("catalog") == plain.get("catalog")
        assert not xpp_warnings(fast) and fast["served"] == fast["loaded"] == plain["loaded"]
        assert other_logs(plain) and other_logs(fast) == other_logs(plain)
    # the syntax error's .xpp (no Program) without its source digest: nothing says it is current
    open(user, "w", encoding="utf-8").write(text.rstrip()[:-1] + "  $x = [1, 2\n}\n")
    compile_tree(production, puppet)
    xpp = os.path.join(production, ".xpp", "modules", "base", "manifests", "user.xpp")
    data = open(xpp, "rb").read()
    head, payload = data.split(b"\n\n", 1)
    open(xpp, "wb").write(re.sub(rb"; source-sha256=[0-9a-f]+", b"", head) + b"\n\n" + payload)
    plain = run(puppet, production, tmp_path, False)
    fast = run(puppet, production, tmp_path, True)
    assert fast["error"] == plain["error"]
    (w,) = xpp_warnings(fast)
    assert xpp in w and "source digest" in w


def test_level_mismatch_falls_back_and_files_cross_puppets(production, tmp_path):
    """An .xpp validated at level 7.23 is not used by Puppet 8 (logged) and the catalog is Puppet's;
    both Puppets' loaders read files made at the other level (Programs == their own parse)."""
    for p in ("7.23", "8"):
        if missing_reason(p):
            pytest.skip(missing_reason(p))
    compile_tree(production, "7.23")
    plain = run("8", production, tmp_path, False)
    fast = run("8", production, tmp_path, True)
    assert fast["catalog"] == plain["catalog"]
    (warned,) = xpp_warnings(fast)
    n = plain["loaded"]
    assert (
        f"of {n} of {n} manifests" in warned
        and f"{n} because it was validated at language level 7.23, this Puppet is 8" in warned
    )
    env = xcompile.detect_environment(production)
    for made, reader in (("7.23", "8"), ("8", "7.23")):
        compile_tree(production, made)
        jobs, _ = xcompile.plan(env)
        res = run(reader, production, tmp_path, True, mode="read", pairs=[[j.out, j.src] for j in jobs])
        assert res["results"] and all(ok for ok, _why in res["results"]), res


@pytest.mark.parametrize("puppet", PUPPETS)
def test_corpus_catalogs_identical(puppet, tmp_path):
    """Every corpus module's main class, one catalog each (``include <module>``) in one process: with
    ``--xpp`` each catalog (or Puppet's error for it) is the one Puppet compiles without, and every
    Puppet-language file Puppet loaded came from its ``.xpp``."""
    if not os.path.isdir(CORPUS):
        pytest.skip("no module corpus (bash .ci/install)")
    env = corpus_env(puppet)
    classes = corpus_classes()
    plain = run(puppet, env, tmp_path, False, classes=classes)
    fast = run(puppet, env, tmp_path, True, classes=classes)
    assert len(fast["catalogs"]) == len(plain["catalogs"]) == len(classes)
    for c, a, b in zip(classes, plain["catalogs"], fast["catalogs"]):
        assert b == a, c
    ok = sum(1 for a in plain["catalogs"] if "catalog" in a)
    assert ok >= len(classes) // 3, "too few corpus classes compile for the comparison to mean much"
    assert plain["loaded"] >= 100
    assert fast["served"] == plain["loaded"] == fast["loaded"] and fast["parsed"] == 0
    assert not xpp_warnings(fast)


@pytest.mark.parametrize("puppet", PUPPETS)
def test_widest_msgpack_encodings_load_the_same(puppet, tmp_path):
    """The loader decodes puppet-xpp's shortest encodings inline; the same corpus payloads re-encoded in
    msgpack's widest forms (9-byte integers, str32, ext32) are the same Pcore stream and must load as the
    same Program, equal to Puppet's parse."""
    if not os.path.isdir(CORPUS):
        pytest.skip("no module corpus (bash .ci/install)")
    env = corpus_env(puppet)
    jobs, _ = xcompile.plan(xcompile.detect_environment(env))
    pairs = [[j.out, j.src] for j in jobs[::5]]
    res = run(puppet, env, tmp_path, False, mode="widen", pairs=pairs)
    bad = [(p, why) for p, (ok, why) in zip(pairs, res["results"]) if not ok]
    assert len(res["results"]) == len(pairs) > 100 and not bad, bad[:5]


@pytest.mark.parametrize("puppet", PUPPETS)
def test_damaged_input_raises_only_format_error(puppet, tmp_path):
    """Seeded damage (truncation, bit flip, deletion, insertion) of corpus .xpp payloads: the loader raises
    PuppetX::Xpp::FormatError or loads a Program, never anything else; with the envelope's checksum kept
    (what puppet-xpp writes) no damaged payload loads at all."""
    if not os.path.isdir(CORPUS):
        pytest.skip("no module corpus (bash .ci/install)")
    env = corpus_env(puppet)
    files = sorted(str(p) for p in __import__("pathlib").Path(env, ".xpp").rglob("*.xpp"))[::7]
    res = run(puppet, env, tmp_path, False, mode="fuzz", files=files, seed=14, count=3000)
    assert res["other"] == []
    assert res["loaded_with_checksum"] == 0
    assert res["format_error"] > 1000


@pytest.mark.parametrize("puppet", PUPPETS)
def test_puppet_apply_as_documented(puppet, production, tmp_path):
    """The README's way: no patch, only RUBYLIB + RUBYOPT, then `puppet apply --xpp`."""
    compile_tree(production, puppet)
    served = []
    # the main manifest named absolute, and relative to the working directory (as in the README)
    for site in (os.path.join(production, "manifests", "site.pp"), "envs/production/manifests/site.pp"):
        args = ["apply", "--xpp", "--noop", "-v", "--environmentpath", os.path.dirname(production)]
        args += [
            "--environment",
            "production",
            "--confdir",
            str(tmp_path / "c"),
            "--vardir",
            str(tmp_path / "v"),
            # (apply writes its run summary there; OpenVox's default as root, /opt/puppetlabs/puppet/public,
            # has no parent on a fresh machine)
            "--publicdir",
            str(tmp_path / "p"),
        ]
        if puppet == "7.23":
            cmd = ["puppet", *args, site]
        else:  # the OpenVox tarball has no bin/: its command line, started the way bin/puppet does
            code = "require 'puppet/util/command_line'; Puppet::Util::CommandLine.new('puppet', ARGV).execute"
            cmd = ruby_command(puppet) + ["-e", code, "--", *args, site]
        envv = dict(os.environ, RUBYLIB=RUNTIME_LIB, RUBYOPT="-rpuppet_x/xpp/boot")
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=300, cwd=str(tmp_path), env=envv)
        text = out.stdout + out.stderr
        assert out.returncode == 0, text[-3000:]
        m = re.search(r"xpp: (\d+) manifests loaded from \.xpp, 0 parsed instead \(fell back\)", text)
        assert m, text[-3000:]
        assert "xpp: not using" not in text
        served.append(int(m.group(1)))
    assert served[0] == served[1] >= 2

"""The deep checks held to real Puppet (issue 30 items 3 and 4).

**Seeded errors.**  Errors of every kind the deep checks claim (tests/deep_seeds.py: ``KINDS``) are written
one per compile into copies of real corpus modules, at the end of a class that compiles unmodified (or into
a resource body of it); Puppet 7.23 and OpenVox 8 compile a node that includes the class, and a seed counts
when both stop at the seeded file and line with the kind's words.  ``puppet-xpp validate --deep`` must then
report a finding at that file and line with Puppet's message (OpenVox 8's, without the evaluator's
"Evaluation Error: Error while evaluating a ..., " wrappers, the location Puppet writes into some texts and
the node's name).

**No false positives.**  The deep findings on the unmodified code of every corpus module whose dependencies
are present are listed; each must be confirmed by a compile of a node that includes the class it lies in,
which Puppet stops at that file and line (an error, or a warning for the warning-level checks).  Findings in
defines, in classes that a bare ``include`` cannot reach (required parameters) and in code a compile never
reaches are unconfirmed: the count of unconfirmed findings must be 0.

Everything lives under ``<repo>/.cache/deep_truth`` (content-addressed: a seeded environment's directory
is named by what was written into it), so the oracle's disk cache answers a second run.  Where the engine
does not do the right thing yet, the kind is a strict xfail naming its entry in the feedback file the deep
checks' engineer reads (/work/briefs/deep_feedback.md).
"""

from __future__ import annotations

import hashlib
import os
import random
import re
import shutil
import time
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from puppet_xpp.server.analysis.deep.codes import TITLE_PLACEHOLDER
from tests import deep_seeds
from tests.conformance.oracle import REPO, oracle_for

ROOT = REPO / ".cache" / "deep_truth"
CLASSES_PER_MODULE = 4  # classes tried per module for the unmodified compile (a fixed random sample)
SEEDS_PER_KIND = 24  # seeds written per kind (those Puppet confirms count)
MIN_CONFIRMED = 8  # below this many seeds Puppet confirms, a kind is not tested enough
# (the corpus has few classes with a parameter without default that a reachable class could include)
MIN_CONFIRMED_OF = {"missing_parameter_include": 5}

# Kinds whose misses the engine has not fixed yet: kind -> the feedback entry (strict: a fix fails here).
_FEEDBACK = "/work/briefs/deep_feedback.md"
KNOWN_MISSES: dict[str, str] = {}


def _hash(*parts: str) -> str:
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:16]


@dataclass
class Outcome:
    seed: deep_seeds.Seed
    environment: Path
    path: Path  # the seeded file in its environment
    puppet: dict[str, dict[str, Any]]  # Puppet version -> the compile's answer


def _stops_at(answer: dict[str, Any], path: Path, seed: deep_seeds.Seed) -> bool:
    return (
        not answer.get("ok")
        and answer.get("file") == str(path)
        and answer.get("line") in (seed.line, *seed.also)
        and re.search(deep_seeds.KINDS[seed.kind], str(answer.get("message"))) is not None
    )


def _normal(text: str) -> str:
    return " ".join(text.split()).rstrip(".")


def _item_pattern(item: str) -> re.Pattern[str]:
    """What stands for one of Puppet's items in our words: the node's name (which we cannot know) may be
    left out; a resource title Puppet computed may be our ``<title>`` (codes.TITLE_PLACEHOLDER), in
    ``T[title]: ...`` and at the end, ``... on T[title]``."""
    pattern = re.escape(_normal(item))
    pattern = pattern.replace(re.escape(" for " + deep_seeds.NODE), r"(?: for \S+)?")
    pattern = re.sub(
        r"(\\\[)((?:[^\]\\]|\\.)*?)(\\\](?::|$))",
        lambda m: m.group(1) + "(?:" + m.group(2) + "|" + re.escape(TITLE_PLACEHOLDER) + ")" + m.group(3),
        pattern,
    )
    return re.compile(pattern)


def _words_match(ours: list[str], puppets: str) -> bool:
    """Our findings at Puppet's line say what Puppet's message says: each item of it (a message listing
    several problems of one resource is one item per problem) is one of ours, or one of ours is the whole
    text."""
    got = [_normal(deep_seeds.puppet_words(m)) for m in ours]
    if _normal(deep_seeds.puppet_words(puppets)) in got:
        return True
    return all(
        any(_item_pattern(item).fullmatch(g) for g in got) for item in deep_seeds.puppet_items(puppets)
    )


@pytest.fixture(scope="module")
def puppets() -> list[str]:
    if not deep_seeds.CORPUS_ROOT.is_dir():
        pytest.skip("the corpus (/usr/share/puppet/modules) is not installed")
    out = []
    for version in deep_seeds.PUPPETS:
        try:
            oracle_for(version)
        except pytest.skip.Exception:
            continue
        out.append(version)
    if "7.23" not in out:
        pytest.skip("Puppet 7.23 is not available")
    return out


def _world(puppets: list[str]) -> dict[str, Any]:
    """The corpus copied, its modules' code read, and the classes whose inclusion compiles unmodified."""
    started = time.monotonic()
    modules = deep_seeds.corpus_modules()
    digest = deep_seeds.corpus_digest(modules)
    base = ROOT / digest
    pristine = deep_seeds.pristine_modules(base / "pristine", modules)
    usable = {name: deep_seeds.closure(modules, name) for name in modules}
    usable = {k: v for k, v in usable.items() if v is not None}
    defs: dict[str, list[deep_seeds.Definition]] = {}
    bodies: dict[str, list[deep_seeds.Body]] = {}
    for name in sorted(usable):
        defs[name], bodies[name] = deep_seeds.read_module_code(pristine[name], name)
    envs = {
        name: deep_seeds.make_environment(base / "envs" / name, {m: pristine[m] for m in sorted(closure)})
        for name, closure in usable.items()
    }
    rng = random.Random(deep_seeds.SEED)
    tried: list[deep_seeds.Definition] = []
    for name in sorted(usable):
        classes = sorted((d for d in defs[name] if d.kind == "class"), key=lambda d: d.name)
        rng.shuffle(classes)
        tried.extend(classes[:CLASSES_PER_MODULE])
    answers = deep_seeds.compile_requests(
        [{"environment": str(envs[d.name.split("::")[0]]), "code": f"include {d.name}\n"} for d in tried],
        puppets,
    )
    reachable: dict[str, list[deep_seeds.Definition]] = defaultdict(list)
    for i, d in enumerate(tried):
        if all(answers[p][i].get("ok") for p in puppets):
            reachable[d.name.split("::")[0]].append(d)
    return {
        "modules": modules,
        "pristine": pristine,
        "usable": usable,
        "defs": defs,
        "bodies": bodies,
        "envs": envs,
        "tried": len(tried),
        "reachable": dict(reachable),
        "base": base,
        "seconds": time.monotonic() - started,
    }


@pytest.fixture(scope="module")
def world(puppets: list[str]) -> dict[str, Any]:
    """:func:`_world`, one pytest-xdist worker at a time."""
    with deep_seeds.exclusive(ROOT):
        return _world(puppets)


def _seeded(world: dict[str, Any], puppets: list[str]) -> dict[str, Any]:
    """Every seed written into its own environment, compiled by each Puppet, and our deep findings."""
    started = time.monotonic()
    pristine: dict[str, Path] = world["pristine"]
    texts: dict[Path, str] = {}

    def text_of(path: Path) -> str:
        if path not in texts:
            texts[path] = path.read_text(encoding="utf-8")
        return texts[path]

    all_defs = [d for ds in world["defs"].values() for d in ds]
    known_classes = {d.name for d in all_defs if d.kind == "class"}
    defines = [d for d in all_defs if d.kind == "define"]
    seeder = deep_seeds.Seeder(world["reachable"], world["bodies"], text_of, world["usable"])
    seeds = seeder.seeds(SEEDS_PER_KIND, known_classes, defines, all_defs)
    outcomes: list[Outcome] = []
    for seed in seeds:
        closure = world["usable"][seed.module]
        env_dir = world["base"] / "seeds" / _hash("linked", seed.module, str(seed.file), seed.text)
        rel = seed.file.relative_to(pristine[seed.module])
        path = env_dir / "modules" / seed.module / rel
        if not path.is_file() or path.read_text(encoding="utf-8") != seed.text:
            tmp = env_dir.with_name(env_dir.name + f".tmp{os.getpid()}")
            deep_seeds.make_environment(
                tmp,
                {m: pristine[m] for m in sorted(closure) if m != seed.module},
                {seed.module: pristine[seed.module]},
            )
            target = tmp / "modules" / seed.module / rel
            target.unlink()  # (a link to the pristine copy's file)
            target.write_text(seed.text, encoding="utf-8")
            try:
                os.replace(tmp, env_dir)
            except OSError:  # another worker wrote the same seed first
                shutil.rmtree(tmp, ignore_errors=True)
        outcomes.append(Outcome(seed, env_dir, path, {}))
    answers = deep_seeds.compile_requests(
        [{"environment": str(o.environment), "code": f"include {o.seed.include}\n"} for o in outcomes],
        puppets,
    )
    for i, o in enumerate(outcomes):
        o.puppet = {p: answers[p][i] for p in puppets}
    # the seeded trees of earlier versions of the seeds (or of the corpus) are not needed again
    current = {o.environment.name for o in outcomes}
    for old in (world["base"] / "seeds").iterdir():
        if old.name not in current:
            shutil.rmtree(old, ignore_errors=True)
    confirmed = [
        o
        for o in outcomes
        if all(_stops_at(o.puppet[p], o.path, o.seed) for p in puppets)
        and len({o.puppet[p]["line"] for p in puppets}) == 1
    ]
    # statements of a class body that every compile of the class evaluates, which Puppet accepted: no
    # finding may be there
    accepted = [o for o in outcomes if o.seed.top_level and all(o.puppet[p].get("ok") for p in puppets)]
    return {
        "outcomes": outcomes,
        "confirmed": confirmed,
        "accepted": accepted,
        "compile_seconds": time.monotonic() - started,
    }


@pytest.fixture(scope="module")
def seeded(world: dict[str, Any], puppets: list[str]) -> dict[str, Any]:
    """:func:`_seeded` (one pytest-xdist worker at a time: the other then finds the compiles in the
    oracle's disk cache), then our deep findings on the seeded files Puppet judged."""
    with deep_seeds.exclusive(ROOT):
        out = _seeded(world, puppets)
    started = time.monotonic()
    paths = sorted({o.path for o in (*out["confirmed"], *out["accepted"])})
    out["ours"] = deep_seeds.only_deep(paths) if paths else {}
    out["deep_seconds"] = time.monotonic() - started
    return out


def _figures(world: dict[str, Any], seeded: dict[str, Any], verbose: bool = False) -> str:
    per_kind: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for o in seeded["outcomes"]:
        per_kind[o.seed.kind][0] += 1
    for o in seeded["confirmed"]:
        per_kind[o.seed.kind][1] += 1
    lines = [
        f"modules {len(world['modules'])}, usable {len(world['usable'])}, classes tried {world['tried']}, "
        f"reachable {sum(map(len, world['reachable'].values()))} ({world['seconds']:.1f} s); "
        f"seeds compiled in {seeded['compile_seconds']:.1f} s, deep run {seeded['deep_seconds']:.1f} s",
    ]
    lines += [f"  {k}: {a} written, {b} confirmed by Puppet" for k, (a, b) in sorted(per_kind.items())]
    if verbose:
        kept = {id(o) for o in seeded["confirmed"]}
        for o in seeded["outcomes"]:
            if id(o) not in kept:
                answers = "; ".join(
                    f"{p}: {a.get('message') if not a.get('ok') else 'compiles'} ({a.get('file')}:{a.get('line')})"
                    for p, a in o.puppet.items()
                )
                lines.append(f"  not confirmed {o.seed.ident} {o.seed.note!r}: {answers}")
    return "\n".join(lines)


def test_seeds_figures(world: dict[str, Any], seeded: dict[str, Any]) -> None:
    """Enough seeds of every kind are confirmed by Puppet, across many modules (printed with -s)."""
    print("\n" + _figures(world, seeded))
    counts: dict[str, int] = defaultdict(int)
    modules: set[str] = set()
    for o in seeded["confirmed"]:
        counts[o.seed.kind] += 1
        modules.add(o.seed.module)
    thin = {k: counts[k] for k in deep_seeds.KINDS if counts[k] < MIN_CONFIRMED_OF.get(k, MIN_CONFIRMED)}
    assert not thin, (
        f"kinds with too few seeds Puppet confirms: {thin}\n{_figures(world, seeded, verbose=True)}"
    )
    assert len(modules) >= 10, sorted(modules)


def _misses(seeded: dict[str, Any], kind: str) -> list[str]:
    out = []
    for o in seeded["confirmed"]:
        if o.seed.kind != kind:
            continue
        puppet = o.puppet.get("8") or o.puppet["7.23"]
        line = puppet["line"]  # (where Puppet reports it: the seeded line, or the line of its resource)
        found = [f for f in seeded["ours"].get(str(o.path), []) if f.line == line]
        if not found:
            out.append(f"{o.seed.ident} ({o.seed.note!r}): no finding; Puppet: {puppet.get('message')}")
        elif not _words_match([f.message for f in found], str(puppet.get("message"))):
            out.append(
                f"{o.seed.ident} ({o.seed.note!r}): ours {[f.message for f in found]}; "
                f"Puppet: {deep_seeds.puppet_words(str(puppet.get('message')))!r}"
            )
        elif puppet.get("column") and not any(f.column == puppet["column"] for f in found):
            out.append(
                f"{o.seed.ident} ({o.seed.note!r}): ours at column {[f.column for f in found]}, "
                f"Puppet's {puppet['column']}"
            )
    return out


def test_accepted_seeds_have_no_finding(seeded: dict[str, Any]) -> None:
    """A statement written into a class body that Puppet compiles without complaint (both Puppets, the
    class included) has no deep finding: what the seeder meant as an error and Puppet accepts -- a class
    whose required parameters the module's Hiera data gives, a call Puppet takes -- is no error."""
    wrong = []
    for o in seeded["accepted"]:
        found = [f for f in seeded["ours"].get(str(o.path), []) if f.line == o.seed.line]
        if found:
            wrong.append(
                f"{o.seed.ident} ({o.seed.note!r}): ours {[f.message for f in found]}; Puppet compiles"
            )
    print(f"\n{len(seeded['accepted'])} seeded statements Puppet accepts:")
    for o in seeded["accepted"]:
        print(f"  {o.seed.ident} {o.seed.note!r}")
    assert not wrong, "\n".join(wrong)


def test_missing_module_is_one_note(seeded: dict[str, Any]) -> None:
    """A class of a module that is not on the module path (Puppet: ``Could not find class``) gets no error
    or warning, and the run one note naming the missing module, at the line of one of the seeds that name
    it (issue 30: one note, not a cascade)."""
    wrong = []
    lines: dict[str, set[tuple[str, int]]] = defaultdict(set)
    for o in seeded["confirmed"]:
        if o.seed.kind != "missing_module":
            continue
        module = o.seed.note.split()[-1].split("::")[0]
        lines[module].add((str(o.path), (o.puppet.get("8") or o.puppet["7.23"])["line"]))
        found = [
            f for f in seeded["ours"].get(str(o.path), []) if f.severity != "note" and f.line == o.seed.line
        ]
        if found:
            wrong.append(f"{o.seed.ident} ({o.seed.note!r}): {[(f.severity, f.message) for f in found]}")
    for module, where in sorted(lines.items()):
        notes = [
            (f.file, f.line)
            for file in {w[0] for w in where}
            for f in seeded["ours"].get(file, [])
            if f.severity == "note" and f"'{module}'" in f.message
        ]
        if len(notes) != 1 or notes[0] not in where:
            wrong.append(f"module {module!r} (seeds at {sorted(where)}): notes at {notes}")
    assert sum(map(len, lines.values())) >= MIN_CONFIRMED
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize(
    "kind",
    [
        pytest.param(k, marks=pytest.mark.xfail(strict=True, reason=KNOWN_MISSES[k]))
        if k in KNOWN_MISSES
        else k
        for k in deep_seeds.KINDS
        if k != "missing_module"
    ],
)
def test_seeded_error_found(seeded: dict[str, Any], kind: str) -> None:
    """Each seed Puppet confirms is a deep finding at the same file and line, in Puppet's words."""
    misses = _misses(seeded, kind)
    total = sum(1 for o in seeded["confirmed"] if o.seed.kind == kind)
    assert not misses, f"{len(misses)} of {total} {kind} seeds missed:\n" + "\n".join(misses)


# ----------------------------------------------------------------------------------------- reaching code

# Other nodes, for code only another operating system reaches (a finding in a `windows` branch): the same
# facts with the operating system's replaced.
OTHER_SYSTEMS: dict[str, dict[str, Any]] = {
    "RedHat": {
        "os": {"family": "RedHat", "name": "CentOS", "release": {"major": "8", "minor": "5", "full": "8.5"}},
        "osfamily": "RedHat",
        "operatingsystem": "CentOS",
        "operatingsystemrelease": "8.5",
        "operatingsystemmajrelease": "8",
    },
    "windows": {
        "os": {"family": "windows", "name": "windows", "release": {"major": "2019", "full": "2019"}},
        "osfamily": "windows",
        "operatingsystem": "windows",
        "operatingsystemrelease": "2019",
        "operatingsystemmajrelease": "2019",
        "kernel": "windows",
    },
    "Solaris": {
        "os": {"family": "Solaris", "name": "Solaris", "release": {"major": "11", "full": "11.4"}},
        "osfamily": "Solaris",
        "operatingsystem": "Solaris",
        "operatingsystemrelease": "11.4",
        "operatingsystemmajrelease": "11",
        "kernel": "SunOS",
    },
}


def facts_of(system: str | None) -> dict[str, Any]:
    """:data:`FACTS`, or those of another operating system (:data:`OTHER_SYSTEMS`)."""
    return deep_seeds.FACTS if system is None else {**deep_seeds.FACTS, **OTHER_SYSTEMS[system]}


_ENUM_FIRST = re.compile(r"\AEnum\[\s*'([^'\\]*)'")


def placeholder(type_text: str | None) -> str | None:
    """A literal a parameter of this declared type accepts, for declaring a class or define only to reach
    its code (None when no simple one is known: Puppet then says what it expects)."""
    text = (type_text or "").strip()
    if not text or text.startswith(("String", "Any", "Scalar", "Data", "NotUndef[String")):
        return "'seed'"
    enum = _ENUM_FIRST.match(text)
    if enum:
        return f"'{enum.group(1)}'"
    for prefix, value in (
        ("Integer", "1"),
        ("Numeric", "1"),
        ("Float", "1.0"),
        ("Boolean", "true"),
        ("Array", "[]"),
        ("Tuple", "[]"),
        ("Hash", "{}"),
        ("Stdlib::Absolutepath", "'/tmp/seed'"),
        ("Stdlib::Unixpath", "'/tmp/seed'"),
        ("Stdlib::Port", "8080"),
        ("Stdlib::Host", "'seed.example.com'"),
        ("Stdlib::Fqdn", "'seed.example.com'"),
    ):
        if text.startswith(prefix):
            return value
    return None


def declaration(d: deep_seeds.Definition) -> str | None:
    """Code that declares ``d`` (a bare ``include`` for a class that needs no parameter, else a resource-like
    declaration with a placeholder for each required parameter); None when a placeholder is not known."""
    values = []
    for name, type_text, has_default in d.parameters:
        if has_default or (type_text or "").strip().startswith("Optional["):
            continue
        value = placeholder(type_text)
        if value is None:
            return None
        values.append(f"{name} => {value}")
    if d.kind == "class" and not values:
        return f"include {d.name}\n"
    title = d.name if d.kind == "class" else f"/tmp/seed_{d.name.replace('::', '_')}"
    return f"{'class' if d.kind == 'class' else d.name} {{ '{title}': {', '.join(values)} }}\n"


# A location Puppet writes into the text of an error it wraps in another (an error in a define's body,
# reported by the resource statement that declared it): "... (file: F, line: L, column: C)".
_EMBEDDED = re.compile(r"\(file: (?P<file>[^,()]+), line: (?P<line>\d+)(?:, column: \d+)?\)")


def puppet_stops(answer: dict[str, Any]) -> list[tuple[str | None, int | None, str]]:
    """Where a failed compile says it stopped, outermost first: the error's own file and line with its
    message, then each location its text embeds with the words of the error written there."""
    if answer.get("ok"):
        return []
    message = str(answer.get("message") or "")
    out: list[tuple[str | None, int | None, str]] = [(answer.get("file"), answer.get("line"), message)]
    for m in _EMBEDDED.finditer(message):
        before = message[: m.start()]
        inner = before[before.rfind("Evaluation Error: ") :] if "Evaluation Error: " in before else before
        out.append((m.group("file"), int(m.group("line")), inner))
    return out


# ----------------------------------------------------------------------------------------- no false positives


# Declarations written by hand for code the generic ones cannot reach (a class parameter that only some
# nodes set): inputs of compiles, never expected outputs.
HAND_PROBES: dict[str, list[str]] = {
    "memcached": ["class { 'memcached': use_registry => true }\n"],  # its registry_value (Windows nodes)
}

# Findings no compile reaches, each with the reason (file relative to the module path, line, code): they
# are listed, and not counted as unconfirmed.
UNREACHABLE: dict[tuple[str, int, str], str] = {
    ("monit/manifests/check/instance.pp", 30, "DEEP_UNKNOWN_PARAMETER"): (
        "concat::fragment's content => template(..., 'monit/check/common.erb') always fails first"
        " (the template reads @depends, which monit::check::instance never has)"
    ),
}


def _probes(
    d: deep_seeds.Definition | None, module: str, modules: dict[str, list[deep_seeds.Definition]]
) -> list[str]:
    """The codes that may reach a finding in ``d``: a declaration of ``d`` (its class or define, with
    placeholders for its required parameters), the same after including the module's main class (whose
    variables the code may read), the module's main class alone, and the module's classes that name ``d``
    (which may declare it with what it needs)."""
    defs = modules.get(module, [])
    main = next((x for x in defs if x.name == module and x.kind == "class"), None)
    main_code = declaration(main) if main is not None else None
    codes = []
    own = declaration(d) if d is not None else None
    if own is not None:
        codes.append(own)
        if main_code is not None and main is not d:
            codes.append(main_code + own)
    if main_code is not None and main is not d:
        codes.append(main_code)
    codes += HAND_PROBES.get(module, [])
    if d is not None:
        callers = [
            x
            for x in defs
            if x.kind == "class"
            and x is not d
            and x is not main
            and d.name in x.file.read_text(encoding="utf-8")
        ]
        for x in callers[:3]:
            code = declaration(x)
            if code is not None:
                codes.append(code)
    return codes


def _one_of(ours: str, puppets: str) -> bool:
    """Our one finding is Puppet's message, or one of the items of a message listing several problems."""
    return _words_match([ours], puppets) or any(
        _item_pattern(item).fullmatch(_normal(deep_seeds.puppet_words(ours)))
        for item in deep_seeds.puppet_items(puppets)
    )


def _verdict(finding: deep_seeds.OurFinding, answer: dict[str, Any]) -> str | None:
    """``"confirmed"`` when the compile stops (or, without strict_variables, warns) at the finding's file
    and line in its words; a description when Puppet stops there with other words; else None."""
    for file, line, message in puppet_stops(answer):
        if file == finding.file and line == finding.line:
            if _one_of(finding.message, message):
                return "confirmed"
            return f"Puppet stops there with other words: {deep_seeds.puppet_words(message)!r}"
    for w in answer.get("warnings", []):
        if w.get("file") == finding.file and w.get("line") == finding.line:
            if _one_of(finding.message, str(w.get("message"))):
                return "confirmed"
    return None


def _unmodified(world: dict[str, Any], puppets: list[str]) -> dict[str, Any]:
    """The deep findings on every usable module's unmodified code (in one environment of all the corpus
    modules), each tried against compiles that may reach it: its class or define declared (placeholders
    for required parameters), the module's main class, with strict_variables on and off (off: an unknown
    variable is a warning and the compile goes on), on this Debian node and then on other systems."""
    started = time.monotonic()
    pristine: dict[str, Path] = world["pristine"]
    env = deep_seeds.make_environment(world["base"] / "all", dict(sorted(pristine.items())))
    usable = sorted(world["usable"])
    files = [
        p
        for name in usable
        for part in deep_seeds.SOURCE_DIRS
        for p in sorted((env / "modules" / name / part).rglob("*.pp"))
    ]
    ours = deep_seeds.only_deep(files)
    findings = [f for found in ours.values() for f in found if f.severity in ("error", "warning")]
    notes = [f for found in ours.values() for f in found if f.severity not in ("error", "warning")]
    deep_seconds = time.monotonic() - started
    by_file: dict[str, list[deep_seeds.Definition]] = defaultdict(list)
    for name in usable:
        for d in world["defs"][name]:
            by_file[str(env / "modules" / name / d.file.relative_to(pristine[name]))].append(d)
    probes: list[list[str]] = []
    for f in findings:
        inside = [d for d in by_file.get(f.file, []) if d.start_line <= f.line <= d.close_line]
        module = Path(f.file).relative_to(env / "modules").parts[0]
        probes.append(_probes(max(inside, key=lambda d: d.start_line, default=None), module, world["defs"]))
    verdicts: list[str] = [
        "no declaration reaches it (its parameters' placeholders unknown)" if not p else "" for p in probes
    ]
    for system in (None, *OTHER_SYSTEMS):
        todo = [i for i, v in enumerate(verdicts) if v != "confirmed" and probes[i]]
        requests = sorted({(code, strict) for i in todo for code in probes[i] for strict in (True, False)})
        if not requests:
            break
        answers = deep_seeds.compile_requests(
            [
                {
                    "environment": str(env),
                    "code": code,
                    "strict_variables": strict,
                    "facts": facts_of(system),
                }
                for code, strict in requests
            ],
            puppets,
        )
        by_request = {r: [answers[p][k] for p in puppets] for k, r in enumerate(requests)}
        for i in todo:
            outcomes = [
                (_verdict(findings[i], a), a)
                for code in probes[i]
                for strict in (True, False)
                for a in by_request[(code, strict)]
            ]
            if any(v == "confirmed" for v, _ in outcomes):
                verdicts[i] = "confirmed"
            elif system is None:
                other = next((v for v, _ in outcomes if v), None)
                first = outcomes[0][1]
                verdicts[i] = other or (
                    f"{probes[i][0].strip()!r} "
                    + (
                        "compiles"
                        if first.get("ok")
                        else f"stops at {first.get('file')}:{first.get('line')}: {first.get('message')!r}"
                    )
                )
    rows = [(f, v == "confirmed", v) for f, v in zip(findings, verdicts)]
    return {
        "env": env,
        "modules": len(usable),
        "files": len(files),
        "findings": findings,
        "notes": notes,
        "rows": rows,
        "deep_seconds": deep_seconds,
        "seconds": time.monotonic() - started,
    }


@pytest.fixture(scope="module")
def unmodified(world: dict[str, Any], puppets: list[str]) -> dict[str, Any]:
    """:func:`_unmodified`, one pytest-xdist worker at a time."""
    with deep_seeds.exclusive(ROOT):
        return _unmodified(world, puppets)


def test_no_false_positives(unmodified: dict[str, Any]) -> None:
    """Every deep finding on unmodified corpus code is where a Puppet compile that reaches it stops."""
    env_modules = unmodified["env"] / "modules"
    rows = []
    unreachable = []
    for f, ok, why in unmodified["rows"]:
        key = (str(Path(f.file).relative_to(env_modules)), f.line, f.code)
        if not ok and key in UNREACHABLE:
            unreachable.append((f, UNREACHABLE[key]))
        else:
            rows.append((f, ok, why))
    confirmed = [r for r in rows if r[1]]
    unconfirmed = [r for r in rows if not r[1]]
    figures = (
        f"modules {unmodified['modules']}, files {unmodified['files']}, findings {len(rows)} "
        f"(notes {len(unmodified['notes'])}), confirmed {len(confirmed)}, unconfirmed {len(unconfirmed)}, "
        f"unreachable {len(unreachable)} "
        f"(deep run {unmodified['deep_seconds']:.1f} s, all {unmodified['seconds']:.1f} s)"
    )
    print("\n" + figures)
    for f, ok, why in rows:
        print(f"  {'confirmed' if ok else 'UNCONFIRMED'} {f.file}:{f.line} {f.code} {f.message!r}: {why}")
    for f, why in unreachable:
        print(f"  unreachable {f.file}:{f.line} {f.code} {f.message!r}: {why}")
    for f in unmodified["notes"]:
        print(f"  note {f.file}:{f.line} {f.message!r}")
    assert not unconfirmed, (
        figures
        + "\n"
        + "\n".join(f"{f.file}:{f.line} {f.code} {f.message!r}: {why}" for f, _, why in unconfirmed)
    )

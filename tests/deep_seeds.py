"""Seeding errors into real corpus modules and asking real Puppet about them (issue 30 item 4).

The deep checks (``server/analysis/deep``, ``puppet-xpp validate --deep``) claim to find statically what a
catalog compile finds.  This module builds what tests/test_deep_truth.py holds them to:

* **environments** made of copies of the corpus modules (``/usr/share/puppet/modules``; its entries are
  symbolic links, followed when copying, never written through): :func:`pristine_modules` copies every
  module once per session, :func:`make_environment` lays out one environment (``environment.conf`` plus a
  ``modules/`` of links to those copies, or a private copy of the module being seeded);
* **compiles** by the oracle's ``catalog`` op (tests/conformance/ruby/ops/catalog.rb) on Puppet 7.23 and
  OpenVox 8, one thread per Puppet, with :data:`FACTS`, ``strict_variables`` on (what makes an unknown
  variable an error in both, as OpenVox 8's default) and ``strict`` at ``warning`` (OpenVox 8's ``error``
  default stops some corpus modules at a duplicate hash key before any of their code is evaluated);
* **seeds**: one error of one kind written into a copy of a real module file, each kind in Puppet's words
  (:data:`KINDS`: the phrase of Puppet's message that says the error is of that kind).  A seed counts only
  when both Puppets stop the compile that reaches it *at the seeded file and line* with that phrase;
* **our findings**: ``puppet-xpp validate --deep --format json`` on the seeded files, each file's
  environment found from its location (the seeded environment's ``modules/``).

The random choices come from one fixed seed (:data:`SEED`), so a run picks the same seeds as the last one
as long as the corpus is the same; the oracle's disk cache answers those compiles again (each request's
key includes a digest of the seeded file, so a changed seed is never answered from an old one's entry).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import random
import re
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.conformance.corpus import CORPUS_ROOT
from tests.runtime.test_puppet_runtime import FACTS as RUNTIME_FACTS

SEED = 30  # issue 30
SOURCE_DIRS = ("manifests", "functions", "types")  # where a module's Puppet-language code lies (not plans)
NODE = str(RUNTIME_FACTS["fqdn"])
PUPPETS = ("7.23", "8")

# A Debian 12 node: the runtime tests' facts (one fixed set for every catalog compile of the tests), plus what
# more the corpus classes read and what an agent adds to its facts (clientcert, clientversion...): fixed, so
# that a compile's answer is the same on every host.
FACTS: dict[str, Any] = {
    **RUNTIME_FACTS,
    "os": {
        **RUNTIME_FACTS["os"],
        "architecture": "amd64",
        "release": {"major": "12", "minor": "5", "full": "12.5"},
        "distro": {"codename": "bookworm", "id": "Debian", "release": {"major": "12", "full": "12.5"}},
        "selinux": {"enabled": False},
    },
    "networking": {**RUNTIME_FACTS["networking"], "domain": "example.com", "primary": "eth0"},
    "processors": {"count": 2, "physicalcount": 1},
    "memory": {"system": {"total_bytes": 2147483648, "available_bytes": 1073741824}},
    "service_provider": "systemd",
    "clientcert": NODE,
    "clientversion": "7.23.0",
    "clientnoop": False,
    "timezone": "UTC",
    "memorysize": "2.00 GiB",
}


# ----------------------------------------------------------------------------------------- corpus modules


@dataclass(frozen=True)
class Module:
    """A corpus module: its name (as Puppet installs it), where it lies, what its metadata.json requires."""

    name: str
    source: Path
    depends: tuple[str, ...]


_NAME = re.compile(r"[a-z][a-z0-9_]*\Z")


def _module_name(text: str) -> str:
    return re.split(r"[-/]", text)[-1]


def corpus_modules() -> dict[str, Module]:
    """The corpus modules by name (the metadata.json ``name`` after its ``-``/``/``, else the directory's)."""
    out: dict[str, Module] = {}
    if not CORPUS_ROOT.is_dir():
        return out
    for entry in sorted(CORPUS_ROOT.iterdir()):
        if not entry.is_dir():
            continue
        depends: list[str] = []
        name = _module_name(entry.name)
        try:
            meta = json.loads((entry / "metadata.json").read_text(encoding="utf-8"))
            name = _module_name(str(meta.get("name") or entry.name))
            depends = [_module_name(str(d["name"])) for d in meta.get("dependencies") or [] if "name" in d]
        except (OSError, ValueError, KeyError, TypeError):
            pass
        if _NAME.match(name) and name not in out:
            out[name] = Module(name, entry, tuple(depends))
    return out


def closure(modules: dict[str, Module], name: str) -> set[str] | None:
    """The module and every module it depends on, transitively; None when one of them is absent."""
    seen: set[str] = set()
    todo = [name]
    while todo:
        n = todo.pop()
        if n in seen:
            continue
        if n not in modules:
            return None
        seen.add(n)
        todo.extend(modules[n].depends)
    return seen


# What a compile reads of a module (a module's spec/, tests/, examples/ are never loaded, and some hold
# links back into the module).
_COPIED = (
    "manifests",
    "functions",
    "types",
    "lib",
    "templates",
    "data",
    "hiera.yaml",
    "metadata.json",
    "files",
)


def pristine_modules(root: Path, modules: dict[str, Module]) -> dict[str, Path]:
    """Copies of the modules under ``root`` (links followed: the corpus is never written through)."""
    out: dict[str, Path] = {}
    for name, module in modules.items():
        dest = root / name
        if not dest.is_dir():
            tmp = root / f".{name}.tmp{os.getpid()}"
            shutil.rmtree(tmp, ignore_errors=True)
            tmp.mkdir(parents=True)
            for part in _COPIED:
                src = module.source / part
                if src.is_dir():
                    shutil.copytree(src, tmp / part, symlinks=False, ignore_dangling_symlinks=True)
                elif src.is_file():
                    shutil.copyfile(src, tmp / part)
            try:
                os.replace(tmp, dest)
            except OSError:  # another process made it first
                shutil.rmtree(tmp, ignore_errors=True)
        out[name] = dest
    return out


def make_environment(directory: Path, linked: dict[str, Path], copied: dict[str, Path] | None = None) -> Path:
    """An environment directory: ``environment.conf`` (``modulepath = modules``) and ``modules/`` of links
    to ``linked`` and private trees of ``copied`` (the modules a seed writes into: their directories, each
    file a link to the copy's, so that a seed costs one file)."""
    mods = directory / "modules"
    mods.mkdir(parents=True, exist_ok=True)
    (directory / "manifests").mkdir(exist_ok=True)
    conf = directory / "environment.conf"
    if not conf.is_file():
        tmp = directory / f".environment.conf.{os.getpid()}"
        tmp.write_text("modulepath = modules\n", encoding="utf-8")
        os.replace(tmp, conf)
    for name, path in linked.items():
        link = mods / name
        if not link.exists():
            try:
                link.symlink_to(path, target_is_directory=True)
            except FileExistsError:  # another process made it first
                pass
    for name, path in (copied or {}).items():
        if not (mods / name).exists():
            # a tree of directories whose files are links to the copy's: the seed replaces one of them
            shutil.copytree(path, mods / name, copy_function=os.symlink)
    return directory


# ----------------------------------------------------------------------------------------- compiles


@contextlib.contextmanager
def exclusive(root: Path) -> Iterator[None]:
    """One process at a time in the block (pytest-xdist workers that both need the seeded trees: the
    second then finds them written and the compiles answered by the oracle's disk cache)."""
    root.mkdir(parents=True, exist_ok=True)
    with open(root / ".lock", "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def compile_requests(
    requests: Sequence[dict[str, Any]], puppets: Sequence[str]
) -> dict[str, list[dict[str, Any]]]:
    """Each request compiled by each Puppet (one thread per Puppet, pipelined); the op's answer per
    request, or ``{"ok": False, "message": <the oracle's failure>, "oracle_failure": True}``."""
    from tests.conformance.oracle import Oracle

    def one(puppet: str) -> list[dict[str, Any]]:
        oracle = Oracle.get(puppet)
        answers = oracle.request_many("catalog", [_request(r) for r in requests])
        return [
            a["result"]
            if a.get("ok")
            else {"ok": False, "message": a.get("error"), "class": a.get("class"), "oracle_failure": True}
            for a in answers
        ]

    with ThreadPoolExecutor(max_workers=len(puppets) or 1) as pool:
        results = list(pool.map(one, puppets))
    return dict(zip(puppets, results))


def _request(r: dict[str, Any]) -> dict[str, Any]:
    out = {"node": NODE, "facts": FACTS, "strict_variables": True, "strict": "warning"}
    out.update(r)
    return out


def tree_digest(paths: Iterable[Path]) -> str:
    """A digest of files' names and contents: the part of a compile's cache key the request cannot say."""
    h = hashlib.sha256()
    for p in sorted(paths):
        h.update(str(p).encode())
        try:
            h.update(p.read_bytes())
        except OSError:
            h.update(b"(absent)")
    return h.hexdigest()


def corpus_digest(modules: dict[str, Module]) -> str:
    """What identifies the corpus: each module's name and metadata.json (its version)."""
    return tree_digest(m.source / "metadata.json" for m in modules.values())[:16]


# Puppet's message, without what says where and for which node: the words the deep checks must print.
_WRAPPERS = re.compile(r"^(?:Evaluation Error: )?(?:Error while evaluating a [A-Za-z ]+?, )?")
# where Puppet reports it, when its message says so too: at the end, or before " on Type[title]"
_LOCATION = re.compile(r"\s*\((?:file: [^,()]*, )?line: \d+(?:, column: \d+)?\)(?=$| on )")


def puppet_words(message: str) -> str:
    """Puppet's message without the evaluator's wrappers and the location Puppet writes into some texts
    (``no parameter named 'x' (line: 3) on File[/a]`` -> ``no parameter named 'x' on File[/a]``; a
    duplicate's ``cannot redeclare (file: F, line: 9)`` loses its own location, keeps the first one's)."""
    text = _WRAPPERS.sub("", message or "", count=1)
    text = _LOCATION.sub("", text)
    return text.strip()


def puppet_items(message: str) -> list[str]:
    """Puppet's words as the separate findings they make: a message that lists several problems of one
    resource (``Foo[x]:\n  expects a value for parameter 'a'\n  expects ... 'b'``) is one item per line,
    each after the resource's header."""
    words = puppet_words(message)
    header, *parts = words.split("\n")
    if parts and header.endswith(":"):
        return [f"{header} {part.strip()}" for part in parts if part.strip()]
    return [words]


# ----------------------------------------------------------------------------------------- our findings


@dataclass
class OurFinding:
    file: str
    line: int
    column: int
    code: str
    severity: str
    message: str
    source: str = ""


def deep_findings(
    paths: Sequence[Path], *, deep: bool = True, cwd: Path | None = None
) -> dict[str, list[OurFinding]]:
    """``puppet-xpp validate [--deep] --format json PATH...``: every file's diagnostics, by file."""
    out: dict[str, list[OurFinding]] = {}
    if not paths:
        return out
    argv = [sys.executable, "-m", "puppet_xpp", "validate", *(["--deep"] if deep else []), "--format", "json"]
    proc = subprocess.run(
        [*argv, *map(str, paths)], capture_output=True, text=True, cwd=str(cwd) if cwd else None, timeout=900
    )
    if proc.returncode == 2 and "unrecognized arguments: --deep" in proc.stderr:
        return {}  # (no deep checks in this checkout: every seed is a miss)
    if proc.returncode not in (0, 1):
        raise RuntimeError(f"{' '.join(argv)} exited {proc.returncode}: {proc.stderr[-2000:]}")
    for line in proc.stdout.splitlines():
        if not line.strip():
            continue
        record = json.loads(line)
        out[record["file"]] = [
            OurFinding(
                record["file"],
                int(d.get("line") or 0),
                int(d.get("column") or 0),
                str(d.get("code")),
                str(d.get("severity")),
                str(d.get("message")),
                str(d.get("source") or ""),
            )
            for d in record.get("diagnostics", [])
        ]
    return out


DEEP_SOURCE = "puppet-xpp-deep"  # the source of the deep checks' items in --format json


def only_deep(
    paths: Sequence[Path], cwd: Path | None = None, processes: int = 2
) -> dict[str, list[OurFinding]]:
    """The deep findings (``--deep``'s items of their own source) of the files, by ``processes`` runs of
    ``puppet-xpp validate --deep`` side by side (each file's environment is found from its location)."""
    chunks = [list(paths[i::processes]) for i in range(processes)]
    with ThreadPoolExecutor(max_workers=processes) as pool:
        parts = list(pool.map(lambda chunk: deep_findings(chunk, deep=True, cwd=cwd), chunks))
    return {
        file: [f for f in found if f.source == DEEP_SOURCE] for part in parts for file, found in part.items()
    }


# ----------------------------------------------------------------------------------------- module code


@dataclass
class Definition:
    """A class or define of a module file, where its body ends (the line of its closing brace) and its
    parameters (name, type text or None, has a default)."""

    kind: str  # "class" | "define"
    name: str
    file: Path
    close_line: int  # 1-based line of the closing "}", alone on its line but for indentation
    indent: str
    parameters: list[tuple[str, str | None, bool]] = field(default_factory=list)
    start_line: int = 0


@dataclass
class Body:
    """A resource body in module code: its type, title text, the line of its first attribute (which starts
    its line) and whether the type and title are literal."""

    file: Path
    definition: str
    type_name: str
    title: str | None
    first_attribute_line: int | None
    attribute_indent: str
    end_line: int  # the line of the resource expression's end
    attributes: list[str]
    start_lines: tuple[int, ...] = ()  # the lines of the resource expression's and the body's starts
    standalone: str | None = None  # the indentation of a resource statement alone on its lines, else None


def _line_of(data: bytes, offset: int) -> int:
    return data.count(b"\n", 0, offset) + 1


def read_module_code(module_dir: Path, module: str) -> tuple[list[Definition], list[Body]]:
    """The classes/defines and resource bodies of a module's manifests (parsed by our parser; only where
    each lies is taken from it, and Puppet's compile judges every seed made there)."""
    from puppet_xpp.grammar import ast
    from puppet_xpp.grammar.check import parse

    defs: list[Definition] = []
    bodies: list[Body] = []
    for path in sorted((module_dir / "manifests").rglob("*.pp")):
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        result = parse(text, str(path))
        program = result.program
        if program is None or any(d.severity == "error" for d in result.diagnostics):
            continue
        data = text.encode("utf-8")  # (the AST's offsets count bytes, as Puppet's do)
        lines = text.split("\n")
        for d in program.definitions:
            if not isinstance(d, (ast.HostClassDefinition, ast.ResourceTypeDefinition)):
                continue
            if str(d.name).split("::")[0] != module:  # (not where Puppet's autoloader would find it)
                continue
            end = d.offset + d.length
            if end < 1 or data[end - 1 : end] != b"}":
                continue
            close = _line_of(data, end - 1)
            before = lines[close - 1][: len(lines[close - 1]) - len(lines[close - 1].lstrip())]
            if lines[close - 1].strip() != "}" or close <= _line_of(data, d.offset):
                continue
            params = []
            for p in d.parameters or []:
                type_text = None
                if p.type_expr is not None:
                    type_text = data[p.type_expr.offset : p.type_expr.offset + p.type_expr.length].decode()
                params.append((str(p.name), type_text, p.value is not None))
            kind = "class" if isinstance(d, ast.HostClassDefinition) else "define"
            defs.append(
                Definition(kind, str(d.name), path, close, before + "  ", params, _line_of(data, d.offset))
            )
            for node in _walk(d.body):
                if isinstance(node, ast.ResourceExpression) and node.form == "regular":
                    type_name = _literal_name(node.type_name)
                    if type_name is None:
                        continue
                    for body in node.bodies:
                        bodies.append(_body(data, path, str(d.name), type_name, node, body))
    return defs, bodies


def _literal_name(expr: Any) -> str | None:
    from puppet_xpp.grammar import ast

    if isinstance(expr, ast.QualifiedName):
        return str(expr.value)
    return None


def _literal_string(expr: Any) -> str | None:
    from puppet_xpp.grammar import ast

    if isinstance(expr, ast.LiteralString):
        return str(expr.value)
    return None


def _body(data: bytes, path: Path, definition: str, type_name: str, res: Any, body: Any) -> Body:
    first = None
    indent = ""
    ops = list(body.operations or [])
    attributes = [str(getattr(o, "attribute_name", "")) for o in ops]
    if ops:
        off = ops[0].offset
        line = _line_of(data, off)
        start_of_line = data.rfind(b"\n", 0, off) + 1
        if data[start_of_line:off].strip() == b"":
            first = line
            indent = data[start_of_line:off].decode()
    return Body(
        path,
        definition,
        type_name,
        _literal_string(body.title),
        first,
        indent,
        _line_of(data, res.offset + res.length - 1),
        attributes,
        (_line_of(data, res.offset), _line_of(data, body.offset)),
        _standalone(data, res.offset, res.offset + res.length),
    )


_ARROW = re.compile(rb"\s*(?:->|~>|<-|<~)")


def _standalone(data: bytes, start: int, end: int) -> str | None:
    """The indentation of the resource statement at ``data[start:end]`` when nothing else shares its first
    and last lines and no relationship arrow continues it on the next line (a statement inserted after it
    is then a statement of the same block), else None."""
    line_start = data.rfind(b"\n", 0, start) + 1
    line_end = data.find(b"\n", end)
    line_end = len(data) if line_end < 0 else line_end
    if data[line_start:start].strip() or data[end:line_end].strip():
        return None
    if _ARROW.match(data, line_end):
        return None
    return data[line_start:start].decode()


def _walk(node: Any) -> Iterable[Any]:
    """Every AST node under ``node`` (lambdas and nested definitions included: the caller filters)."""
    from puppet_xpp.grammar import ast

    stack = [node]
    while stack:
        n = stack.pop()
        if n is None:
            continue
        if isinstance(n, list):
            stack.extend(reversed(n))
            continue
        if not isinstance(n, ast.Node):
            continue
        yield n
        for name in getattr(n, "_child_fields", ()):
            stack.append(getattr(n, name, None))


# ----------------------------------------------------------------------------------------- seeds


@dataclass
class Seed:
    """One error written into one module file: the file's new text, the seeded line, the class whose
    inclusion reaches it, and the kind (a key of :data:`KINDS`)."""

    kind: str
    module: str
    file: Path  # the pristine copy's file; the seeded environment holds the written one
    line: int
    text: str
    include: str
    note: str
    also: tuple[int, ...] = ()  # other lines Puppet may report it at (a resource's, for its attribute)
    top_level: bool = False  # a statement of the class's body, which every compile including it evaluates

    @property
    def ident(self) -> str:
        rel = self.file.parts[-3:]
        return f"{self.kind}:{'/'.join(rel)}:{self.line}"


# Each kind: the phrase (a regular expression) of Puppet's message that makes a compile's error this kind
# of error, and whether it is a warning-level check of ours (unknown variables: Puppet's error under
# strict_variables).
KINDS: dict[str, str] = {
    "unknown_class_include": r"Could not find class ",
    "unknown_class_contain": r"Could not find class ",
    "unknown_class_require": r"Could not find class ",
    "unknown_class_resource": r"Could not find declared class ",
    "unknown_class_reference": r"Could not find resource 'Class\[",
    "unknown_resource_type": r"Unknown resource type: ",
    "unknown_function": r"Unknown function: ",
    "unknown_parameter_class": r"has no parameter named ",
    "unknown_parameter_define": r"has no parameter named ",
    "unknown_parameter_type": r"no parameter named ",
    "missing_parameter": r"expects a value for parameter ",
    "missing_parameter_include": r"expects a value for parameter ",
    # a class of a module that is not on the module path: Puppet's error, our one note naming the module
    "missing_module": r"Could not find class ",
    "wrong_arity": r"expects (?:\d+|between \d+ and \d+|at least \d+|at most \d+) arguments?, got (?:\d+|none)",
    "wrong_type_parameter": r"parameter '[^']+' expects ",
    "wrong_type_function": r"(?:'[^']+' parameter '[^']+'|'[^']+'|[a-z_:]+\(\):) expects an? ",
    "duplicate_resource": r"Duplicate declaration: ",
    "unknown_variable": r"Unknown variable: ",
}


def _typo(name: str, rng: random.Random) -> str:
    """A misspelling of the last segment of ``name`` (a letter doubled, dropped or two swapped)."""
    head, _, last = name.rpartition("::")
    while len(last) < 3:
        last += "x"
    i = rng.randrange(1, len(last) - 1)
    choice = rng.randrange(3)
    if choice == 0:
        last = last[:i] + last[i] + last[i:]
    elif choice == 1:
        last = last[:i] + last[i + 1 :]
    else:
        last = last[: i - 1] + last[i] + last[i - 1] + last[i + 1 :]
    return f"{head}::{last}" if head else last


def _title(d: Definition) -> str:
    """A seeded resource's title: a path (some defines take a path from their title) naming the class."""
    return "/tmp/seed_" + d.name.replace("::", "_")


def _insert(text: str, line: int, new_line: str) -> str:
    lines = text.split("\n")
    lines.insert(line - 1, new_line)
    return "\n".join(lines)


# Functions a misspelling is made of (built-ins and stdlib's).
_FUNCTIONS = ["join", "size", "keys", "values", "split", "flatten", "upcase", "merge", "lookup", "regsubst"]
_FUNCTIONS += [
    "sprintf",
    "template",
    "concat",
    "fail",
    "notice",
    "any2array",
    "pick",
    "delete",
    "unique",
    "strip",
]

# Built-in and stdlib functions with a fixed number of arguments, as calls with one argument too many or
# too few (Puppet's compile says which; a call it accepts makes no seed).
_ARITY_CALLS = [
    "size()",
    "size([1], [2])",
    "join([1], ',', 'x')",
    "keys()",
    "values({}, {})",
    "length('a', 'b')",
    "upcase()",
    "downcase('a', 'b')",
    "split('a')",
    "abs(1, 2)",
    "empty()",
    "strip('a', 'b')",
    "chomp()",
    "capitalize('a', 'b')",
    "sha1()",
    "md5('a', 'b')",
    "unique()",
    "camelcase()",
]

# Calls whose argument is a literal of a type the function's signature refuses.
_TYPE_CALLS = [
    "upcase(1)",
    "downcase(true)",
    "keys('x')",
    "values([1])",
    "split(1, ',')",
    "join('x')",
    "capitalize(2)",
    "strip(3)",
    "chomp({})",
    "camelcase(1)",
    "length(1)",
    "regsubst(1, 'a', 'b')",
    "split('a', 1)",
    "assert_type(Integer, 'x')",
]

# Literals of each basic kind, for a parameter whose type refuses them.
_WRONG_LITERALS = {
    "Integer": "'seed'",
    "Float": "'seed'",
    "Numeric": "'seed'",
    "Boolean": "'seed'",
    "String": "12",
    "Array": "12",
    "Hash": "12",
    "Enum": "'seed_not_listed'",
    "Stdlib::Absolutepath": "'relative/seed'",
    "Stdlib::Port": "'seed'",
    "Stdlib::Ensure::Service": "'seed'",
    "Stdlib::Filemode": "'seed'",
    "Stdlib::HTTPUrl": "'seed'",
    "Pattern": "12",
}


def _body_kind(type_name: str) -> str:
    """Which unknown-parameter kind a resource body of this type seeds: a class's, a define's or a type's."""
    if type_name == "class":
        return "class"
    return "define" if "::" in type_name else "type"


def _wrong_literal(type_text: str | None) -> str | None:
    if not type_text:
        return None
    core = type_text.strip()
    if core.startswith("Optional[") or core.startswith("Variant[") or core.startswith("Any"):
        return None
    head = core.split("[", 1)[0]
    return _WRONG_LITERALS.get(head)


class Seeder:
    """Writes seeds of every kind into the reachable classes of modules (deterministic for a given corpus:
    the random generator is seeded with :data:`SEED` and fed sorted candidates)."""

    def __init__(
        self,
        reachable: dict[str, list[Definition]],
        bodies: dict[str, list[Body]],
        texts: Callable[[Path], str],
        closures: dict[str, set[str]],
    ):
        self.reachable = reachable  # module -> classes whose `include` compiles unmodified, in both Puppets
        self.bodies = bodies  # module -> resource bodies of those classes
        self.texts = texts
        self.closures = closures  # module -> the modules of its environment (itself and its dependencies)
        self.all_classes = {d.name for defs in reachable.values() for d in defs}

    def seeds(
        self,
        per_kind: int,
        known_classes: set[str],
        defines: list[Definition],
        known_definitions: Sequence[Definition] = (),
    ) -> list[Seed]:
        rng = random.Random(SEED)
        self.defines = defines
        self.all_defs = sorted(known_definitions, key=lambda x: x.name)
        out: list[Seed] = []
        makers: dict[str, Callable[[random.Random, Definition], Seed | None]] = {
            "unknown_class_include": lambda r, d: self._statement(
                d, "unknown_class_include", f"include {self._unknown_class(r, d, known_classes)}"
            ),
            "unknown_class_contain": lambda r, d: self._statement(
                d, "unknown_class_contain", f"contain {self._unknown_class(r, d, known_classes)}"
            ),
            "unknown_class_require": lambda r, d: self._statement(
                d, "unknown_class_require", f"require {self._unknown_class(r, d, known_classes)}"
            ),
            "unknown_class_resource": lambda r, d: self._statement(
                d, "unknown_class_resource", f"class {{ '{self._unknown_class(r, d, known_classes)}': }}"
            ),
            "unknown_class_reference": lambda r, d: self._statement(
                d,
                "unknown_class_reference",
                f"notify {{ 'seed {d.name}': require => Class['{self._unknown_class(r, d, known_classes)}'] }}",
            ),
            "unknown_resource_type": lambda r, d: self._statement(
                d, "unknown_resource_type", f"{_typo(r.choice(sorted(self._types_near(d))), r)} {{ 'seed': }}"
            ),
            "unknown_function": lambda r, d: self._statement(
                d, "unknown_function", f"$seed_value = {_typo(r.choice(_FUNCTIONS), r)}('seed')"
            ),
            "unknown_parameter_class": lambda r, d: (
                self._body_parameter(r, d, want="class") or self._class_parameter(r, d, known_classes)
            ),
            "unknown_parameter_define": lambda r, d: self._body_parameter(r, d, want="define"),
            "unknown_parameter_type": lambda r, d: self._body_parameter(r, d, want="type"),
            "missing_parameter": lambda r, d: self._missing(r, d, defines),
            "missing_parameter_include": lambda r, d: self._include_needy(r, d),
            "missing_module": lambda r, d: self._statement(
                d,
                "missing_module",
                f"include {_typo(self._module(d), r)}::{_typo(d.name, r).rpartition('::')[2]}",
            ),
            "wrong_arity": lambda r, d: self._statement(
                d, "wrong_arity", f"$seed_value = {r.choice(_ARITY_CALLS)}"
            ),
            "wrong_type_parameter": lambda r, d: self._wrong_type(r, d, defines),
            "wrong_type_function": lambda r, d: self._statement(
                d, "wrong_type_function", f"$seed_value = {r.choice(_TYPE_CALLS)}"
            ),
            "duplicate_resource": lambda r, d: self._duplicate(r, d),
            "unknown_variable": lambda r, d: self._unknown_variable(r, d),
        }
        classes = [d for m in sorted(self.reachable) for d in self.reachable[m]]
        for make in makers.values():
            pool = classes[:]
            rng.shuffle(pool)
            made = 0
            for definition in pool:
                if made >= per_kind:
                    break
                seed = make(rng, definition)
                if seed is not None:
                    out.append(seed)
                    made += 1
        return out

    # -- helpers

    def _module(self, d: Definition) -> str:
        return d.name.split("::")[0]

    def _statement(self, d: Definition, kind: str, statement: str) -> Seed:
        text = _insert(self.texts(d.file), d.close_line, d.indent + statement)
        return Seed(kind, self._module(d), d.file, d.close_line, text, d.name, statement, top_level=True)

    def _unknown_class(self, r: random.Random, d: Definition, known: set[str]) -> str:
        # a misspelt class of a module that is there (a misspelt module is a missing module: a note)
        module = self._module(d)
        near = sorted(n for n in known if n.split("::")[0] == module and "::" in n) or [f"{module}::{module}"]
        for _ in range(10):
            name = _typo(r.choice(near), r)
            if name not in known:
                return name
        return f"{module}::seed_missing"

    def _types_near(self, d: Definition) -> set[str]:
        names = {b.type_name for b in self.bodies.get(self._module(d), []) if b.definition == d.name}
        return names or {"file", "package", "service", "exec"}

    def _class_parameter(self, r: random.Random, d: Definition, known: set[str]) -> Seed | None:
        # declare a reachable class of another module resource-like with a parameter it does not have
        near = self.closures[self._module(d)]
        others = [
            c
            for m in sorted(self.reachable)
            for c in self.reachable[m]
            if m in near and c.name != d.name and c.parameters
        ]
        if not others:
            return None
        target = r.choice(others)
        names = [p[0] for p in target.parameters]
        bogus = _typo(r.choice(names), r)
        if bogus in names:
            return None
        return self._statement(d, "unknown_parameter_class", f"class {{ '{target.name}': {bogus} => undef }}")

    def _body_parameter(self, r: random.Random, d: Definition, want: str) -> Seed | None:
        candidates = [
            b
            for b in self.bodies.get(self._module(d), [])
            if b.definition == d.name
            and b.first_attribute_line is not None
            and _body_kind(b.type_name) == want
        ]
        if not candidates:
            return self._define_parameter(r, d) if want == "define" else None
        b = r.choice(candidates)
        names = b.attributes or ["ensure"]
        bogus = _typo(r.choice(names), r)
        if bogus in names:
            return None
        text = _insert(
            self.texts(b.file), b.first_attribute_line or 0, f"{b.attribute_indent}{bogus} => undef,"
        )
        kind = f"unknown_parameter_{want}"
        line = b.first_attribute_line or 0
        also = tuple(n for n in b.start_lines if n < line)
        return Seed(kind, self._module(d), b.file, line, text, d.name, f"{b.type_name}: {bogus}", also)

    def _include_needy(self, r: random.Random, d: Definition) -> Seed | None:
        # include a class of the environment that has a parameter without a default: Puppet stops unless
        # Hiera (the module's data) gives it a value -- a class whose data does makes a seed Puppet accepts
        near = self.closures[self._module(d)]
        needy = [
            c
            for c in self.all_defs
            if c.kind == "class"
            and c.name.split("::")[0] in near
            and c.name != d.name
            and any(not p[2] for p in c.parameters)
        ]
        if not needy:
            return None
        return self._statement(d, "missing_parameter_include", f"include {r.choice(needy).name}")

    def _define_parameter(self, r: random.Random, d: Definition) -> Seed | None:
        # declare a define of the environment that needs no parameter, with one it does not have
        near = self.closures[self._module(d)]
        easy = [
            x
            for x in self.defines
            if x.name.split("::")[0] in near and x.parameters and all(p[2] for p in x.parameters)
        ]
        if not easy:
            return None
        target = r.choice(easy)
        names = [p[0] for p in target.parameters]
        bogus = _typo(r.choice(names), r)
        if bogus in names:
            return None
        return self._statement(
            d, "unknown_parameter_define", f"{target.name} {{ '{_title(d)}': {bogus} => undef }}"
        )

    def _missing(self, r: random.Random, d: Definition, defines: list[Definition]) -> Seed | None:
        near = self.closures[self._module(d)]
        needy = [x for x in defines if x.name.split("::")[0] in near and any(not p[2] for p in x.parameters)]
        if not needy:
            return None
        target = r.choice(needy)
        return self._statement(d, "missing_parameter", f"{target.name} {{ '{_title(d)}': }}")

    def _wrong_type(self, r: random.Random, d: Definition, defines: list[Definition]) -> Seed | None:
        options = []
        near = self.closures[self._module(d)]
        for x in defines:
            if x.name.split("::")[0] not in near:
                continue
            required = [p for p in x.parameters if not p[2]]
            for p in x.parameters:
                lit = _wrong_literal(p[1])
                if lit is not None and (not required or required == [p]):
                    options.append((x, p[0], lit))
        if not options:
            return None
        target, param, lit = r.choice(options)
        return self._statement(
            d, "wrong_type_parameter", f"{target.name} {{ '{_title(d)}': {param} => {lit} }}"
        )

    def _duplicate(self, r: random.Random, d: Definition) -> Seed | None:
        # the same type and literal title again, right after the resource statement (in its block)
        candidates = [
            b
            for b in self.bodies.get(self._module(d), [])
            if b.definition == d.name and b.title is not None and b.standalone is not None
        ]
        if not candidates:
            return None
        b = r.choice(candidates)
        title = (b.title or "").replace("\\", "\\\\").replace("'", "\\'")
        statement = f"{b.type_name} {{ '{title}': }}"
        text = _insert(self.texts(b.file), b.end_line + 1, f"{b.standalone}{statement}")
        return Seed("duplicate_resource", self._module(d), b.file, b.end_line + 1, text, d.name, statement)

    def _unknown_variable(self, r: random.Random, d: Definition) -> Seed | None:
        names = [p[0] for p in d.parameters] or ["name"]
        bogus = _typo(r.choice(names), r)
        if bogus in names:
            return None
        return self._statement(d, "unknown_variable", f"$seed_value = ${bogus}")

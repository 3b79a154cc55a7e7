"""A module's metadata.json in the editor: diagnostics by the rules of Puppet and the Forge, hover and
definition on a dependency (server/analysis/filekinds.py ``FileAnalysis``).  No pygls here.

Where each rule comes from:

* **Syntax**: JSON as Puppet reads it (server/analysis/jsonpos.py: positions, comments read with a warning).
* **Keys Puppet needs** (``modules.LOAD_REQUIRED_KEYS``: source, author, version, license, dependencies):
  without one, or with ``null``, ``Puppet::Module#load_metadata`` refuses the module and the environment
  drops it -- an error.  ``name`` and ``summary`` are required by the Forge and Puppet's documentation
  ("Module metadata": name, version, author, license, summary, source, dependencies); a missing ``name``
  is an error (``puppet module build`` and every dependency on the module need it), a missing ``summary``
  a warning (Puppet loads the module).
* **name**, **version**, each dependency's **name** and **version_requirement**, **data_provider**: as
  ``Puppet::ModuleTool::Metadata#update`` validates them (``author-module`` with a namespace of letters
  and digits and a module name starting with a letter; ``SemanticPuppet::Version.valid?``;
  ``SemanticPuppet::VersionRange.parse`` -- server/analysis/semver.py; the same dependency twice with
  different ranges is its "dependency conflict").  A dependency without ``version_requirement`` is read
  as ``>= 0.0.0`` (a warning); a key other than name, version_requirement and repository is a warning.
* **Each dependency on the module path** (server/analysis/modules.py, the file's module path by the
  environment model): absent, another author's module of that name, an installed version that is not
  semantic or not in the range, or a module Puppet does not load -- warnings, the reasons ``puppet
  module list`` gives for an unmet dependency (``Puppet::Module#unmet_dependencies``).
* **requirements** (``[{name, version_requirement}]``, the range a SemanticPuppet range) and
  **operatingsystem_support** (``[{operatingsystem: string, operatingsystemrelease: [strings]}]``), the
  Forge's shapes; a value of the wrong JSON type for a key the documentation describes is an error.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from puppet_xpp.server.analysis import modules, semver
from puppet_xpp.server.analysis.answers import CompletionItem, DocumentSymbol, Hover, Location
from puppet_xpp.server.analysis.document import SEVERITY_ERROR, SEVERITY_INFO, SEVERITY_WARNING, LspDiagnostic
from puppet_xpp.server.analysis.filekinds import FileText
from puppet_xpp.server.analysis.jsonpos import JsonValue, Member, read_json
from puppet_xpp.xpp import environment

__all__ = ["SOURCE", "Problem", "Dependency", "Metadata", "check", "name_problem", "ANALYSIS"]

SOURCE = "puppet-xpp.metadata"
ERROR, WARNING, INFO = "error", "warning", "info"
SEVERITIES = {ERROR: SEVERITY_ERROR, WARNING: SEVERITY_WARNING, INFO: SEVERITY_INFO}
SYMBOL_KIND_MODULE = 2  # LSP's SymbolKind.Module
SYMBOL_KIND_PROPERTY = 7  # LSP's SymbolKind.Property

FORGE_REQUIRED = {"name": ERROR, "summary": WARNING}  # besides modules.LOAD_REQUIRED_KEYS (errors)
STRING_KEYS = (
    "name", "version", "author", "summary", "license", "source", "project_page", "issues_url",
    "description", "data_provider", "pdk-version", "template-url", "template-ref",
)  # fmt: skip
ARRAY_KEYS = ("dependencies", "requirements", "operatingsystem_support", "tags")
DEPENDENCY_KEYS = ("name", "version_requirement", "repository")
OS_KEYS = ("operatingsystem", "operatingsystemrelease")
# the codes of the problems Puppet's own validation finds (Puppet::ModuleTool::Metadata#update), where
# a value of the wrong type is one of them
_TYPE_CODES = {"name": "INVALID_NAME", "version": "INVALID_VERSION", "dependencies": "INVALID_DEPENDENCIES"}
ANY_VERSION = ">= 0.0.0"  # what Puppet reads a dependency without version_requirement as


@dataclass(frozen=True)
class Problem:
    """One diagnostic: UTF-8 byte span, severity (error, warning, info), code and message."""

    start: int
    end: int
    severity: str
    code: str
    message: str


@dataclass
class Dependency:
    """One entry of ``dependencies``: its object's span, its name and range (as written) with theirs."""

    start: int
    end: int
    name: str | None = None
    name_span: tuple[int, int] | None = None
    requirement: str | None = None  # version_requirement (None: not given)
    requirement_span: tuple[int, int] | None = None
    range: semver.VersionRange | None = None  # parsed (None: not given or not valid)

    def contains(self, offset: int) -> bool:
        return self.start <= offset < self.end


@dataclass
class Metadata:
    """A metadata.json as read: its value (None after a syntax error), problems and dependencies."""

    root: JsonValue | None
    problems: list[Problem] = field(default_factory=list)
    dependencies: list[Dependency] = field(default_factory=list)

    def dependency_at(self, offset: int) -> Dependency | None:
        return next((d for d in self.dependencies if d.contains(offset)), None)


# Ruby's [a-z] with /i: the ASCII letters and the two characters that fold to them (long s, Kelvin sign),
# not Python's dotted and dotless i; \Z: one final newline may follow
_LETTER = "a-zA-Z\u017f\u212a"
_VALID_NAME = re.compile(rf"[{_LETTER}0-9]+[-/][{_LETTER}][{_LETTER}0-9_]*\n?\Z")
_DATA_PROVIDER = re.compile(r"^[a-zA-Z][a-zA-Z0-9_]*$", re.MULTILINE)  # Ruby's ^ and $: any line


def name_problem(name: str) -> str | None:
    """Why ``Puppet::ModuleTool::Metadata`` refuses a module's full name (``author-module``), or None.
    Its rule: letters and digits, ``-`` or ``/``, a letter, then letters, digits and ``_``, letters of
    either case; its reasons are checked in its order."""
    if _VALID_NAME.match(name):
        return None
    parts = re.split(r"[-/]", name, maxsplit=1)
    namespace, module = parts[0], (parts[1] if len(parts) == 2 else None)
    if not module or namespace == "":
        return "the name must be a namespaced module name: author-module (e.g. puppetlabs-stdlib)"
    if re.search(rf"[^{_LETTER}0-9_]", module):
        return "the module name may contain only letters, digits and underscores"
    if re.match(rf"[^{_LETTER}]", module):
        return "the module name must begin with a letter"
    return "the author (namespace) may contain only letters and digits"


# ------------------------------------------------------------------------------------------------ checks


class _Checker:
    def __init__(self, root: JsonValue, modulepath: tuple[str, ...]) -> None:
        self.root = root
        self.modulepath = modulepath
        self.problems: list[Problem] = []
        self.dependencies: list[Dependency] = []

    def add(self, span: tuple[int, int], severity: str, code: str, message: str) -> None:
        self.problems.append(Problem(span[0], span[1], severity, code, message))

    def run(self) -> None:
        root = self.root
        if root.kind != "object":
            self.add(
                _span(root),
                ERROR,
                "NOT_AN_OBJECT",
                f"metadata.json must hold one JSON object, not {_a(root)}",
            )
            return
        self.required_keys(root)
        for key in STRING_KEYS:
            self.type_of(root.member(key), "string")
        for key in ARRAY_KEYS:
            self.type_of(root.member(key), "array")
        name = root.member("name")
        if name is not None and name.value.text is not None:
            self.full_name(name.value, "INVALID_NAME", "name")
        version = root.member("version")
        if (
            version is not None
            and version.value.text is not None
            and not semver.valid_version(version.value.text)
        ):
            self.add(
                _span(version.value),
                ERROR,
                "INVALID_VERSION",
                f"'{version.value.text}' is not a semantic version (major.minor.patch, e.g. 1.0.0)",
            )
        provider = root.member("data_provider")
        if provider is not None and provider.value.kind not in ("null", "false"):
            self.data_provider(provider.value)
        arrays = {
            "dependencies": self.dependencies_of,
            "requirements": self.requirements,
            "operatingsystem_support": self.os_support,
            "tags": self.tags,
        }
        for key, check_array in arrays.items():
            member = root.member(key)
            if member is not None and member.value.kind == "array":
                check_array(member.value)

    def directory(self, path: str) -> None:
        """In an environment's module path, Puppet names the module by its directory (xpp/environment.py):
        a directory whose name is not a module name is no module at all (a warning); one named otherwise
        than metadata.json's module name is loaded under the directory's name (information)."""
        env = environment.find_environment(path)
        place = env.module_of(path) if env is not None else None
        if place is None or place[2] != modules.METADATA_FILE:
            return
        directory = place[1]
        name = self.root.member("name")
        span = _span(name.value) if name is not None else (self.root.start, self.root.start + 1)
        if not environment.MODULE_NAME.match(directory):
            message = (
                f"Puppet does not load a module from the directory '{directory}' on the module path "
                "(a module's directory is named with lowercase letters, digits and '_')"
            )
            self.add(span, WARNING, "MODULE_DIRECTORY", message)
            return
        full = name.value.text if name is not None else None
        parts = modules.split_full_name(full) if full else None
        if parts is not None and parts[1] != directory:
            message = f"Puppet loads this module as '{directory}' (its directory), not '{parts[1]}'"
            self.add(span, INFO, "MODULE_DIRECTORY", message)

    def tags(self, tags: JsonValue) -> None:
        for item in tags.items:
            if item.kind != "string":
                self.add(_span(item), ERROR, "WRONG_TYPE", f"a tag must be a string, not {_a(item)}")

    def required_keys(self, root: JsonValue) -> None:
        where = (root.start, root.start + 1)
        for key in modules.LOAD_REQUIRED_KEYS:
            member = root.member(key)
            if member is None or member.value.kind == "null":
                span = _key_span(member) if member is not None else where
                self.add(
                    span,
                    ERROR,
                    "MISSING_KEY",
                    f"'{key}' is required: Puppet does not load a module without it",
                )
        for key, severity in FORGE_REQUIRED.items():
            member = root.member(key)
            if member is None or member.value.kind == "null":
                span = _key_span(member) if member is not None else where
                self.add(span, severity, "MISSING_FORGE_KEY", f"'{key}' is required by the Forge")

    def type_of(self, member: Member | None, kind: str) -> None:
        """A value of the wrong JSON type.  Where Puppet's own validation refuses it, under the code of
        that validation: a name, version or data_provider that is not a string (but ``false``, which it
        skips), dependencies that are not an array (it does not load the module)."""
        if member is None or member.value.kind in (kind, "null"):
            return
        code = _TYPE_CODES.get(member.key, "WRONG_TYPE")
        if member.value.kind == "false" and member.key in ("name", "version"):
            code = "WRONG_TYPE"
        if member.key == "data_provider":
            return  # (data_provider says it, by Puppet's rule)
        self.add(
            _span(member.value),
            ERROR,
            code,
            f"'{member.key}' must be {_article(kind)}, not {_a(member.value)}",
        )

    def full_name(self, value: JsonValue, code: str, what: str) -> bool:
        """Check a full name (an error when Puppet refuses it); whether it is valid."""
        text = value.text or ""
        why = name_problem(text)
        if why is not None:
            self.add(_span(value), ERROR, code, f"invalid {what} '{text}': {why}")
            return False
        parts = modules.split_full_name(text.rstrip("\n"))
        if parts is not None and parts[1] != parts[1].lower():
            self.add(
                _span(value),
                WARNING,
                "UPPERCASE_NAME",
                f"'{parts[1]}' has capitals: Puppet loads a module only from a directory named in lower case",
            )
        return True

    def data_provider(self, value: JsonValue) -> None:
        text = value.text
        if text is not None and _DATA_PROVIDER.search(text):
            return
        if text is None:
            why = f"must be a string, not {_a(value)}"
        elif re.search(r"^[a-zA-Z]", text, re.MULTILINE):
            why = "may contain only letters, digits and underscores"
        else:
            why = "must begin with a letter"
        self.add(_span(value), ERROR, "INVALID_DATA_PROVIDER", f"data_provider {why}")

    def entries(self, array: JsonValue, code: str, what: str, keys: tuple[str, ...]) -> Iterator[JsonValue]:
        """The objects of an array of ``what`` (an error for any other value, a warning for a key not in
        ``keys``)."""
        shape = "{" + ", ".join(keys[:2]) + "}"
        for item in array.items:
            if item.kind != "object":
                self.add(_span(item), ERROR, code, f"{what} must be an object {shape}, not {_a(item)}")
                continue
            for member in item.members:
                if member.key not in keys:
                    hint = " (did you mean 'version_requirement'?)" if "version" in member.key else ""
                    self.add(
                        _key_span(member),
                        WARNING,
                        "UNKNOWN_KEY",
                        f"'{member.key}' is not a key of {what}{hint}",
                    )
            yield item

    def field(self, item: JsonValue, key: str, kind: str, code: str, needed: str | None) -> JsonValue | None:
        """The value of ``key`` in ``item`` when it is of ``kind``; an error (``code``) when it is of
        another, or absent and ``needed`` (what to say then)."""
        member = item.member(key)
        if member is None:
            if needed is not None:
                self.add((item.start, item.start + 1), ERROR, code, needed)
            return None
        if member.value.kind != kind:
            self.add(
                _span(member.value), ERROR, code, f"'{key}' must be {_article(kind)}, not {_a(member.value)}"
            )
            return None
        return member.value

    def requirement_of(self, item: JsonValue, code: str, dep: Dependency) -> None:
        """The ``version_requirement`` of a dependency or requirement, into ``dep``: absent (or null,
        false: what Puppet skips) is any version, with a warning."""
        member = item.member("version_requirement")
        if member is None or member.value.kind in ("null", "false"):
            span = dep.name_span or (item.start, item.start + 1)
            message = f"no version_requirement: any version is accepted (Puppet reads it as '{ANY_VERSION}')"
            self.add(span, WARNING, "NO_VERSION_REQUIREMENT", message)
            dep.range = semver.parse_range(ANY_VERSION)
            return
        value = self.field(item, "version_requirement", "string", code, None)
        if value is not None:
            dep.requirement, dep.requirement_span = value.text, _span(value)
            dep.range = self.version_range(value, code)

    def dependencies_of(self, deps: JsonValue) -> None:
        seen: dict[str, Dependency] = {}
        for item in self.entries(deps, "INVALID_DEPENDENCY", "a dependency", DEPENDENCY_KEYS):
            dep = Dependency(item.start, item.end)
            self.dependencies.append(dep)
            name = self.field(
                item, "name", "string", "INVALID_DEPENDENCY", "a dependency needs a 'name' (author-module)"
            )
            name_ok = False
            if name is not None:
                dep.name, dep.name_span = name.text, _span(name)
                name_ok = self.full_name(name, "INVALID_DEPENDENCY_NAME", "dependency name")
            self.requirement_of(item, "INVALID_VERSION_RANGE", dep)
            if dep.name is None:
                continue
            earlier = seen.get(dep.name)
            normalized = dep.name.replace("/", "-")
            if earlier is not None and earlier.requirement != dep.requirement:
                self.add(
                    dep.name_span or _span(item),
                    ERROR,
                    "DEPENDENCY_CONFLICT",
                    f"'{dep.name}' is a dependency twice with different version requirements "
                    f"('{earlier.requirement}' and '{dep.requirement}'): Puppet refuses it",
                )
            elif any(d.name and d.name.replace("/", "-") == normalized for d in seen.values()):
                message = f"'{dep.name}' is already a dependency"
                self.add(dep.name_span or _span(item), WARNING, "DUPLICATE_DEPENDENCY", message)
            seen.setdefault(dep.name, dep)
            if name_ok:
                self.installed(dep)

    def version_range(self, value: JsonValue, code: str) -> semver.VersionRange | None:
        text = value.text or ""
        try:
            return semver.parse_range(text)
        except semver.RangeError as e:
            self.add(_span(value), ERROR, code, f"invalid version range: {e}")
            return None

    def installed(self, dep: Dependency) -> None:
        """Whether the module path satisfies the dependency (``Puppet::Module#unmet_dependencies``)."""
        assert dep.name is not None and dep.name_span is not None
        found = modules.find_module(self.modulepath, dep.name)
        span = dep.name_span
        if found is None:
            self.add(span, WARNING, "DEPENDENCY_MISSING", f"'{dep.name}' is not on the module path")
            return
        if found.problem is not None:
            self.add(
                span,
                WARNING,
                "DEPENDENCY_NOT_LOADED",
                f"'{dep.name}' at {found.directory}: Puppet does not load it: {found.problem}",
            )
            return
        if modules.find_by_forge_name(self.modulepath, dep.name) is None:
            who = found.full_name or "a module without a metadata name"
            self.add(
                span,
                WARNING,
                "DEPENDENCY_MISSING",
                f"the module '{found.name}' on the module path is {who}, not '{dep.name}' ({found.directory})",
            )
            return
        if dep.range is None:
            return
        version = found.version or ""
        try:
            installed = semver.parse_version(version)
        except semver.RangeError:
            self.add(
                span,
                WARNING,
                "DEPENDENCY_NOT_SEMVER",
                f"'{dep.name}' is installed with version '{version}', which is not a semantic version",
            )
            return
        if not dep.range.includes(installed):
            want = dep.requirement if dep.requirement is not None else ANY_VERSION
            self.add(
                dep.requirement_span or span,
                WARNING,
                "DEPENDENCY_UNSATISFIED",
                f"'{dep.name}' {found.version} is installed ({found.directory}), which '{want}' does not accept",
            )

    def requirements(self, requirements: JsonValue) -> None:
        for item in self.entries(requirements, "INVALID_REQUIREMENT", "a requirement", DEPENDENCY_KEYS[:2]):
            self.field(
                item, "name", "string", "INVALID_REQUIREMENT", "a requirement needs a 'name' (e.g. puppet)"
            )
            self.requirement_of(item, "INVALID_REQUIREMENT", Dependency(item.start, item.end))

    def os_support(self, support: JsonValue) -> None:
        what = "an entry of operatingsystem_support"
        for item in self.entries(support, "INVALID_OS_SUPPORT", what, OS_KEYS):
            self.field(
                item, "operatingsystem", "string", "INVALID_OS_SUPPORT", f"{what} needs 'operatingsystem'"
            )
            releases = self.field(item, "operatingsystemrelease", "array", "INVALID_OS_SUPPORT", None)
            for release in releases.items if releases is not None else ():
                if release.kind != "string":
                    message = f'a release must be a string ("{release.to_python()}"), not {_a(release)}'
                    self.add(_span(release), ERROR, "INVALID_OS_SUPPORT", message)


def _span(value: JsonValue) -> tuple[int, int]:
    return value.start, value.end


def _key_span(member: Member) -> tuple[int, int]:
    return member.key_start, member.key_end


def _article(kind: str) -> str:
    return {"array": "an array", "object": "an object"}.get(kind, f"a {kind}")


def _a(value: JsonValue) -> str:
    """The JSON type of a value, for a message."""
    if value.kind in ("true", "false"):
        return "a boolean"
    return _article(value.kind) if value.kind != "null" else "null"


def check(data: bytes, modulepath: tuple[str, ...] | list[str] = (), path: str | None = None) -> Metadata:
    """Read and check the metadata.json ``data`` (UTF-8) against the modules on ``modulepath``; ``path``
    (where the file is) adds what its environment makes of the module's directory."""
    root, json_problems = read_json(data)
    out = Metadata(root)
    out.problems.extend(Problem(p.start, p.end, p.severity, p.code, p.message) for p in json_problems)
    if root is None:
        return out
    checker = _Checker(root, tuple(modulepath))
    checker.run()
    if path is not None and root.kind == "object":
        checker.directory(path)
    out.problems.extend(checker.problems)
    out.dependencies = checker.dependencies
    return out


# ------------------------------------------------------------------------------------------------ editor


def _modulepath(file: FileText) -> tuple[str, ...]:
    """The module path the session found for the file; from the environment model when it gave none."""
    if file.modulepath or not file.path:
        return file.modulepath
    return modules.modulepath_for(file.path)


class MetadataAnalysis:
    """The editor's features on a metadata.json (server/analysis/filekinds.py ``FileAnalysis``)."""

    source = SOURCE

    def read(self, file: FileText) -> Metadata:
        return check(file.data, _modulepath(file), file.path)

    def diagnostics(self, file: FileText) -> list[LspDiagnostic]:
        return [
            LspDiagnostic(
                *file.span(p.start, p.end), SEVERITIES[p.severity], p.code, p.message, source=SOURCE
            )
            for p in self.read(file).problems
        ]

    def hover(self, file: FileText, line: int, character: int) -> Hover | None:
        offset = file.offset(line, character)
        metadata = self.read(file)
        dep = metadata.dependency_at(offset)
        if dep is None or dep.name is None:
            return None
        return Hover(dependency_markdown(dep, _modulepath(file)), file.span(dep.start, dep.end))

    def definition(self, file: FileText, line: int, character: int) -> list[Location]:
        offset = file.offset(line, character)
        dep = self.read(file).dependency_at(offset)
        if dep is None or dep.name is None:
            return []
        found = modules.find_module(_modulepath(file), dep.name)
        if found is None:
            return []
        return [Location(found.entry_file, ((0, 0), (0, 0)))]

    def completion(self, file: FileText, line: int, character: int) -> list[CompletionItem]:
        return []

    def symbols(self, file: FileText) -> list[DocumentSymbol]:
        root = self.read(file).root
        if root is None or root.kind != "object":
            return []
        out = []
        for member in root.members:
            whole = file.span(member.key_start, member.value.end)
            detail = member.value.text if member.value.kind == "string" else None
            symbol = DocumentSymbol(
                member.key, detail, SYMBOL_KIND_PROPERTY, whole, file.span(*_key_span(member))
            )
            if member.key == "dependencies" and member.value.kind == "array":
                symbol.children = list(_dependency_symbols(file, member.value))
            out.append(symbol)
        return out


def _dependency_symbols(file: FileText, deps: JsonValue) -> Iterator[DocumentSymbol]:
    for item in deps.items:
        name = item.member("name") if item.kind == "object" else None
        if name is None or name.value.text is None:
            continue
        requirement = item.member("version_requirement")
        detail = requirement.value.text if requirement is not None else None
        yield DocumentSymbol(
            name.value.text,
            detail,
            SYMBOL_KIND_MODULE,
            file.span(item.start, item.end),
            file.span(*_span(name.value)),
        )


def dependency_markdown(dep: Dependency, modulepath: tuple[str, ...]) -> str:
    """What a hover on a dependency says: the range, and the module the module path has for it."""
    assert dep.name is not None
    lines = [f"**{dep.name}** `{dep.requirement if dep.requirement is not None else ANY_VERSION}`"]
    found = modules.find_module(modulepath, dep.name)
    if found is None:
        where = ", ".join(f"`{d}`" for d in modulepath) or "(none)"
        lines.append(f"not on the module path ({where})")
        return "\n\n".join(lines)
    who = f" ({found.full_name})" if found.full_name else ""
    lines.append(f"installed: version {found.version or '(none)'} in `{found.directory}`{who}")
    if found.problem is not None:
        lines.append(f"Puppet does not load it: {found.problem}")
    elif modules.find_by_forge_name(modulepath, dep.name) is None:
        lines.append(f"another author's module: not `{dep.name}`")
    elif dep.range is not None and found.version is not None:
        try:
            ok = dep.range.includes(semver.parse_version(found.version))
            lines.append("satisfies the range" if ok else "does **not** satisfy the range")
        except semver.RangeError:
            lines.append("its version is not a semantic version")
    return "\n\n".join(lines)


ANALYSIS = MetadataAnalysis()

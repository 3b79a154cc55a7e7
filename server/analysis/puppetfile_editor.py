"""The editor's features on a Puppetfile (server/analysis/filekinds.py ``FileAnalysis``) over its reading
by r10k's rules (server/analysis/puppetfile.py): diagnostics, one symbol per module, hover (what the
declaration pins, where r10k installs it and where it resolves on the module path), definition to the
module's directory, completion of option keys.  No pygls here."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

from puppet_xpp.server.analysis import modules
from puppet_xpp.server.analysis.answers import CompletionItem, DocumentSymbol, Hover, Location
from puppet_xpp.server.analysis.document import SEVERITY_ERROR, SEVERITY_WARNING, LspDiagnostic, Span
from puppet_xpp.server.analysis.filekinds import FileText
from puppet_xpp.server.analysis.puppetfile import (
    CLASS_NAMES,
    COMMON_OPTIONS,
    ERROR,
    OPTION_DOCS,
    OPTIONS,
    WARNING,
    Extent,
    Puppetfile,
    PuppetfileModule,
    parse,
)

SOURCE = "puppet-xpp.puppetfile"  # the ``source`` of a Puppetfile's diagnostics
SEVERITIES = {ERROR: SEVERITY_ERROR, WARNING: SEVERITY_WARNING}
SYMBOL_KIND_MODULE = 2  # LSP's SymbolKind.Module
SYMBOL_KIND_PROPERTY = 7  # LSP's SymbolKind.Property


@dataclass(frozen=True)
class Resolved:
    """Where a declared module is: the directory r10k installs it as, and the module of its name on
    the module path (what Puppet loads), with the installed version."""

    install_dir: str | None  # None: an untitled Puppetfile (no directory to resolve from)
    installed: bool
    directory: str | None  # the module path's module of that name (None: none)
    version: str | None
    full_name: str | None


def resolve(puppetfile: Puppetfile, module: PuppetfileModule, file: FileText) -> Resolved:
    """Where ``module`` resolves, for the Puppetfile ``file``."""
    basedir = os.path.dirname(file.path) if file.path else None
    install_dir = puppetfile.install_dir(module, basedir) if basedir is not None else None
    installed = install_dir is not None and os.path.isdir(install_dir)
    directory = version = full_name = None
    # the module path's module of that name (server/analysis/modules.py: the first wins, as in Puppet),
    # else the one r10k installed, when it is installed outside the module path
    found = modules.find_module(file.modulepath, module.short_name)
    if found is None and installed and install_dir is not None:
        found = modules.module_info(module.short_name, install_dir)
    if found is not None:
        directory, version, full_name = found.directory, found.version, found.full_name
    return Resolved(install_dir, installed, directory, version, full_name)


def _span(file: FileText, ext: Extent) -> Span:
    return file.span(ext.start, ext.end)


class PuppetfileAnalysis:
    """The editor's features on a Puppetfile (server/analysis/filekinds.py ``FileAnalysis``)."""

    source = SOURCE

    def __init__(self) -> None:
        # the last reading, by text and directory: the requests on one version (diagnostics, then
        # hover, symbols...) read it once; one entry, as the worker analyses one document at a time
        self.last: tuple[str, str | None, Puppetfile] | None = None

    def read(self, file: FileText) -> Puppetfile:
        basedir = os.path.dirname(file.path) if file.path else None
        last = self.last
        if last is not None and last[0] == file.text and last[1] == basedir:
            return last[2]
        found = parse(file.text, basedir)
        self.last = (file.text, basedir, found)
        return found

    def diagnostics(self, file: FileText) -> list[LspDiagnostic]:
        return [
            LspDiagnostic(*_span(file, p.extent), SEVERITIES[p.severity], p.code, p.message, source=SOURCE)
            for p in self.read(file).problems
        ]

    def symbols(self, file: FileText) -> list[DocumentSymbol]:
        out = []
        for module in self.read(file).modules:
            detail = " ".join(x for x in (module.kind, module.version) if x) or None
            out.append(
                DocumentSymbol(
                    module.name,
                    detail,
                    SYMBOL_KIND_MODULE,
                    _span(file, module.extent),
                    _span(file, module.name_extent),
                )
            )
        return out

    def hover(self, file: FileText, line: int, character: int) -> Hover | None:
        offset = file.offset(line, character)
        puppetfile = self.read(file)
        module = puppetfile.module_at(offset)
        if module is None:
            return self.declaration_hover(puppetfile, file, offset)
        for option in module.options.values():
            if option.key_extent.contains(offset) and option.key in OPTION_DOCS:
                return Hover(f"`:{option.key}` -- {OPTION_DOCS[option.key]}", _span(file, option.key_extent))
        return Hover(self.module_markdown(puppetfile, module, file), _span(file, module.extent))

    def declaration_hover(self, puppetfile: Puppetfile, file: FileText, offset: int) -> Hover | None:
        basedir = os.path.dirname(file.path) if file.path else None
        for name, _method, whole in puppetfile.declarations:
            if not whole.contains(offset):
                continue
            if name == "moduledir":
                where = puppetfile.moduledir_path(basedir) if basedir else puppetfile.moduledir
                return Hover(
                    f"**moduledir**: r10k installs this Puppetfile's modules into `{where}`",
                    _span(file, whole),
                )
            if name == "forge":
                return Hover(
                    f"**forge** `{puppetfile.forge}`: the Forge r10k installs Forge modules from "
                    "(when r10k's settings allow a Puppetfile to choose: forge.allow_puppetfile_override)",
                    _span(file, whole),
                )
        return None

    def module_markdown(self, puppetfile: Puppetfile, module: PuppetfileModule, file: FileText) -> str:
        kind = module.kind or "unknown type"
        lines = [f"**{module.name}** -- {kind} module `{module.short_name}`"]
        if module.kind == "forge":
            pinned = f"version `{module.version}`" if module.version else None
            lines.append(
                pinned or "version not pinned: r10k keeps the one installed, else installs the latest"
            )
        elif module.kind == "git":
            remote = module.options.get("git") or module.options.get("source")
            if remote is not None:
                lines.append(f"git `{remote.value.string or remote.value.text}`")
            for key in ("ref", "tag", "branch", "commit", "version"):
                option = module.options.get(key)
                if option is not None:
                    lines.append(f"{key} `{option.value.string or option.value.text}`")
        elif module.version:
            lines.append(f"version `{module.version}`")
        found = resolve(puppetfile, module, file)
        if found.install_dir is not None:
            state = "installed" if found.installed else "not installed"
            lines.append(f"r10k installs it as `{found.install_dir}` ({state})")
        if found.directory is not None:
            installed = f", version {found.version}" if found.version else ""
            who = f" ({found.full_name})" if found.full_name else ""
            parts = modules.split_full_name(found.full_name) if found.full_name else None
            if module.owner and parts is not None and parts[0].lower() != module.owner.lower():
                who += f", another author's than {module.owner}'s"
            lines.append(f"resolves on the module path to `{found.directory}`{who}{installed}")
        else:
            lines.append("not on the module path")
        return "\n\n".join(lines)

    def definition(self, file: FileText, line: int, character: int) -> list[Location]:
        offset = file.offset(line, character)
        puppetfile = self.read(file)
        module = puppetfile.module_at(offset)
        if module is None:
            return []
        found = resolve(puppetfile, module, file)
        if found.directory is None:
            return []
        # an editor opens files, not directories: the module's metadata.json (its root's defining
        # file), else its init.pp, else the directory itself
        for name in ("metadata.json", os.path.join("manifests", "init.pp")):
            candidate = os.path.join(found.directory, name)
            if os.path.isfile(candidate):
                return [Location(candidate, ((0, 0), (0, 0)))]
        return [Location(found.directory, ((0, 0), (0, 0)))]

    def completion(self, file: FileText, line: int, character: int) -> list[CompletionItem]:
        """Option keys where one may be written: after a comma in a ``mod`` declaration (on its line or
        a line continuing it), those of the type its options choose, not the ones already given."""
        offset = file.offset(line, character)
        before = file.data[:offset].decode("utf-8", "surrogateescape")
        statement = _statement_before(before)
        if statement is None:
            return []
        typed = re.search(r"(?:^|[,(\s])(:?)([a-z_]*)\Z", statement)
        if typed is None or not re.search(r",\s*:?[a-z_]*\Z", statement):
            return []
        colon, prefix = typed.group(1), typed.group(2)
        given = set(re.findall(r":([a-z_]+)\s*=>", statement)) | set(
            re.findall(r"\b([a-z_]+):(?!:)", statement)
        )
        kind = next((t for t in ("git", "svn") if t in given), None)
        if kind is None and "local" in given:
            kind = "local"
        if kind is None:
            written = re.search(r"\btype['\"]?\s*(?::|=>)\s*[:'\"]?([a-z]+)", statement)
            kind = written.group(1) if written and written.group(1) in OPTIONS else None
        keys = list(OPTIONS[kind]) if kind in OPTIONS else sorted(OPTION_DOCS)
        keys += [k for k in COMMON_OPTIONS if k not in keys and k != "overrides"]
        if kind is None and "local" not in keys:
            keys.append("local")
        start = (line, character - len(colon) - len(prefix.encode("utf-8")))
        out = []
        for key in keys:
            if key in given or not key.startswith(prefix) or key == "overrides":
                continue
            new = f":{key} => " if colon else f"{key}: "
            out.append(
                CompletionItem(
                    key,
                    "Property",
                    detail=f"{CLASS_NAMES.get(kind or '', 'r10k')} option",
                    documentation=OPTION_DOCS.get(key),
                    filter_text=f"{colon}{key}",
                    edit=((start, (line, character)), new),
                )
            )
        return out


def _statement_before(before: str) -> str | None:
    """The text of the ``mod`` declaration the end of ``before`` lies in (its lines up to there,
    comments removed), or None when it lies in none: the nearest line starting with ``mod``, every line
    after it ending with a comma (Ruby's continuation of an argument list)."""
    lines = before.split("\n")
    current = lines[-1]
    kept = [current]
    for previous in reversed(lines[:-1]):
        code = re.sub(r"\s*#.*\Z", "", previous).rstrip()
        if re.match(r"\s*mod\b", code):
            if not code.endswith(","):
                return None
            kept.append(code)
            return " ".join(reversed(kept))
        if not code.endswith(",") and code:
            break
        kept.append(code)
    if re.match(r"\s*mod\b", current):
        return current
    return None


ANALYSIS = PuppetfileAnalysis()

"""Facts in the editor (no pygls here): what the fact under the cursor is, what Facter's schema says of
it (server/analysis/builtins.py ``fact_schema_entry``: its type and description), and, where the user's
facts are known, its value.

The user's facts come from one of two places, both chosen by the user, never guessed at start-up:

* a facts file named in the settings (``puppet.facts.file``): ``facter --json`` output (a JSON object of
  facts), or a Puppet facts YAML (``puppet facts show --render-as yaml``, or ``puppet facts find`` /
  the server's cache, whose ``!ruby/object:Puppet::Node::Facts`` keeps the facts under ``values``).
  It is read again when its modification time changes; a file that cannot be read or parsed gives
  its reason in the hover instead of a value;
* one run of ``facter --json --show-legacy`` on request (the language server's ``puppet-xpp.runFacter``
  command), kept until the next run.

A fact under the cursor is ``$facts['os']['family']`` (any key of the chain), ``$facts.dig('os',
'family')``, the top-scope variables ``$::osfamily`` and ``$::os['family']``, and a bare ``$os`` where
no local variable or parameter of that name is visible (Puppet then finds the top-scope fact).
"""

from __future__ import annotations

import functools
import json
import os
import re
import subprocess
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from puppet_xpp.server.analysis import builtins, features
from puppet_xpp.xpp.sources import read_source

FACTER_COMMAND = ("facter", "--json", "--show-legacy")
FACTER_TIMEOUT = 120.0  # seconds: facter on a slow machine with many mounts, never forever


# ----------------------------------------------------------------------------------------------- the user's facts


@dataclass(frozen=True)
class FactValues:
    """The facts of one machine (``values``), where they come from (``source``, shown in the hover), or
    why none could be read (``error``)."""

    values: dict[str, Any]
    source: str
    error: str | None = None


@functools.cache
def _yaml_loader() -> Any:
    """The YAML loader of facts files, made at the first YAML facts file read: PyYAML (~10 ms of imports
    and pattern compiles) is not among what the language server's start needs (issue 31 item 2).

    YAML as Puppet writes facts: Ruby object tags (``!ruby/object:Puppet::Node::Facts``, ``!ruby/sym``)
    read as the plain mappings, strings and lists they hold; nothing is constructed from a tag."""
    import yaml  # type: ignore[import-untyped]

    class FactsYamlLoader(yaml.SafeLoader):  # type: ignore[misc]
        pass

    def ruby_tag(loader: Any, _suffix: str, node: Any) -> Any:
        if isinstance(node, yaml.MappingNode):
            return loader.construct_mapping(node, deep=True)
        if isinstance(node, yaml.SequenceNode):
            return loader.construct_sequence(node, deep=True)
        return loader.construct_scalar(node)

    FactsYamlLoader.add_multi_constructor("!ruby/", ruby_tag)
    return FactsYamlLoader


def parse_facts(text: str) -> dict[str, Any]:
    """The facts of a facts file's ``text``: a JSON object (facter --json), or YAML (a plain mapping of
    facts, or Puppet's facts object with its ``values``).  Raises ValueError with the reason."""
    stripped = text.lstrip()
    if stripped.startswith("{"):
        try:
            data = json.loads(text)
        except ValueError as e:
            raise ValueError(f"not valid JSON: {e}") from None
    else:
        import yaml

        try:
            data = yaml.load(text, Loader=_yaml_loader())  # noqa: S506 (a safe loader; tags read as data)
        except yaml.YAMLError as e:
            raise ValueError(f"not valid YAML: {str(e).splitlines()[0]}") from None
    if isinstance(data, dict) and isinstance(data.get("values"), dict) and "name" in data:
        data = data["values"]  # Puppet::Node::Facts: name, values, timestamp, expiration
    if not isinstance(data, dict):
        raise ValueError("not a mapping of fact names to values")
    return {str(k): v for k, v in data.items()}


@dataclass(eq=False)
class FactSource:
    """Where the session's facts come from: the facts file of the settings (read when asked, again
    after it changes), or the last facter run on request.  Thread-safe: the hover asks on the worker."""

    file: str | None = None
    ran: FactValues | None = None
    _cache: tuple[str, float, FactValues] | None = field(default=None, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def configure(self, settings: object, root: str | None) -> None:
        """Take the facts file from a client settings object (``{"facts": {"file": ...}}``, under
        ``puppet`` or not; a relative path is the workspace root's).  A settings object without it
        keeps the current file; an empty string or null removes it."""
        if not isinstance(settings, dict):
            return
        if isinstance(settings.get("puppet"), dict):
            settings = settings["puppet"]
        assert isinstance(settings, dict)
        facts = settings.get("facts")
        if not isinstance(facts, dict) or "file" not in facts:
            return
        path = facts.get("file")
        if not isinstance(path, str) or not path:
            self.file = None
            return
        path = os.path.expanduser(path)
        if not os.path.isabs(path) and root:
            path = os.path.join(root, path)
        self.file = os.path.normpath(path)

    def current(self) -> FactValues | None:
        """The facts file's facts (when set), else the last facter run's, else None."""
        if self.file is None:
            return self.ran
        path = self.file
        try:
            mtime = os.stat(path).st_mtime
        except OSError as e:
            return FactValues({}, path, f"cannot be read ({e.strerror or e})")
        with self._lock:
            cached = self._cache
            if cached is not None and cached[0] == path and cached[1] == mtime:
                return cached[2]
        src = read_source(path)
        if src.text is None or not src.ok:
            message = src.diagnostic.message if src.diagnostic is not None else "cannot be read"
            got = FactValues({}, path, message)
        else:
            try:
                got = FactValues(parse_facts(src.text), path)
            except ValueError as e:
                got = FactValues({}, path, str(e))
        with self._lock:
            self._cache = (path, mtime, got)
        return got

    def run_facter(self, command: Sequence[str] = FACTER_COMMAND) -> FactValues:
        """Run facter once (on request, on a worker thread) and keep its facts for the hover."""
        try:
            done = subprocess.run(
                list(command), capture_output=True, text=True, timeout=FACTER_TIMEOUT, check=False
            )
        except (OSError, subprocess.SubprocessError) as e:
            return FactValues({}, "facter", f"could not run {command[0]}: {e}")
        try:
            values = parse_facts(done.stdout) if done.stdout.strip() else None
        except ValueError as e:
            values, why = None, str(e)
        else:
            why = (done.stderr.strip().splitlines() or [f"exit status {done.returncode}"])[-1]
        if values is None:
            return FactValues({}, "facter", f"{command[0]} gave no facts: {why}")
        got = FactValues(values, "facter on the language server's machine")
        self.ran = got
        return got


# ----------------------------------------------------------------------------------------------- the fact under the cursor

_VARIABLE = re.compile(r"\$\{?(::)?([a-z][a-z0-9_]*)(?![\w:])")
_KEY = re.compile(r"\[\s*(['\"])([^'\"\]]*)\1\s*\]")
_DIG = re.compile(r"\.dig\(\s*")
_DIG_KEY = re.compile(r"(['\"])([^'\"]*)\1\s*(,\s*)?")


@dataclass(frozen=True)
class FactAt:
    """A fact named at the cursor: its key path (``["os", "family"]``) and the byte span named."""

    path: tuple[str, ...]
    start: int
    end: int


def fact_at(an: features.Analysed, off: int, is_local: Callable[[str], bool]) -> FactAt | None:
    """The fact at byte offset ``off`` (see the module's docstring), or None.  ``is_local(name)``: a
    local variable or parameter ``name`` is visible at ``off`` (then ``$name`` is not the fact)."""
    line_start = an.data.rfind(b"\n", 0, off) + 1
    line_end = an.data.find(b"\n", off)
    line_end = len(an.data) if line_end < 0 else line_end
    line = an.data[line_start:line_end].decode("utf-8", "surrogateescape")
    col = len(an.data[line_start:off].decode("utf-8", "surrogateescape"))

    def at(k: int) -> int:
        return line_start + len(line[:k].encode("utf-8", "surrogateescape"))

    for m in _VARIABLE.finditer(line):
        top, name = m.group(1) is not None, m.group(2)
        keys: list[tuple[str, int, int]] = []  # (key, start, end) in the line
        pos = m.end()
        dig = _DIG.match(line, pos)
        if dig is not None:
            pos = dig.end()
            while (k := _DIG_KEY.match(line, pos)) is not None:
                keys.append((k.group(2), k.start(2), k.end(2)))
                pos = k.end()
        else:
            while (k := _KEY.match(line, pos)) is not None:
                keys.append((k.group(2), k.start(2), k.end(2)))
                pos = k.end()
        on_name = m.start(2) <= col <= m.end(2)
        hit = next((j for j, (_key, s, e) in enumerate(keys) if s <= col <= e), None)
        if not on_name and hit is None:
            continue
        if name == "facts":
            base: tuple[str, ...] = ()
        elif top or not is_local(name):
            base = (name,)
        else:
            return None  # a local variable's keys, not a fact's
        if on_name:
            return FactAt(base, at(m.start(2)), at(m.end(2))) if base else None
        assert hit is not None
        _key, s, e = keys[hit]
        return FactAt(base + tuple(k[0] for k in keys[: hit + 1]), at(s), at(e))
    return None


# ----------------------------------------------------------------------------------------------- the hover

MAX_VALUE_LINES = 24


def value_at(values: dict[str, Any], path: Sequence[str]) -> tuple[bool, Any]:
    """(found, value) of the fact at key ``path`` in ``values`` (a dotted top-level name too)."""
    value: Any = values
    for key in path:
        if isinstance(value, dict) and key in value:
            value = value[key]
        elif isinstance(value, list) and key.isdigit() and int(key) < len(value):
            value = value[int(key)]
        else:
            return False, None
    return True, value


def _shown(value: Any) -> str:
    if isinstance(value, str):
        return f"`{value}`" if value and "`" not in value and "\n" not in value else f"```\n{value}\n```"
    text = json.dumps(value, indent=2, sort_keys=True, default=str)
    lines = text.splitlines()
    if len(lines) > MAX_VALUE_LINES:
        lines = [*lines[:MAX_VALUE_LINES], f"... ({len(text.splitlines()) - MAX_VALUE_LINES} more lines)"]
    return "\n```json\n" + "\n".join(lines) + "\n```" if len(lines) > 1 else f"`{lines[0]}`"


def hover_markdown(fact: FactAt, known: FactValues | None, custom: Sequence[str] = ()) -> str | None:
    """The hover of a fact: its name, type and description from Facter's schema (a module's custom
    fact: where it is defined), and its value where the user's facts are known; None when the name is
    no fact the schema, the workspace or the user's facts know."""
    schema = builtins.fact_schema_entry(fact.path)
    found, value = (
        value_at(known.values, fact.path) if known is not None and not known.error else (False, None)
    )
    dotted = ".".join(fact.path)
    if schema is None and not found and (not fact.path or fact.path[0] not in custom):
        return None
    parts: list[str] = []
    if schema is not None:
        name, entry = schema
        legacy = " (legacy)" if entry.get("hidden") else ""
        parts.append(f"**{dotted}**: {entry['type']}{legacy} fact")
        if name != dotted:
            parts[-1] += f" (`{name}`)"
        if entry["description"]:
            parts.append(entry["description"])
    else:
        parts.append(f"**{dotted}**: " + ("custom fact" if fact.path and fact.path[0] in custom else "fact"))
    if known is not None:
        if known.error:
            parts.append(f"facts file `{known.source}`: {known.error}")
        elif found:
            parts.append(f"value ({known.source}): {_shown(value)}")
        else:
            parts.append(f"not set in {known.source}")
    return "\n\n".join(parts)

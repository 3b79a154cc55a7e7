"""Hiera 5 as the language server sees it: the environment layer (``<env>/hiera.yaml``) and module
layers (``<module>/hiera.yaml``, consulted only for keys in the module's namespace), each layer's
``datadir`` and hierarchy levels (``path``/``paths``/``glob``/``globs``, with ``%{…}`` interpolations
taken as wildcards since facts are unknown while editing), and where a key is set in the YAML/JSON
data files (line and value text, for definition and hover).

Keys are found by scanning the data files' top-level lines (positions are the point; values are shown
as written).  No pygls imports here.

The global layer (Puppet's ``hiera_config`` setting, by default ``$confdir/hiera.yaml``:
``/etc/puppetlabs/puppet/hiera.yaml``, Debian's ``/etc/puppet/hiera.yaml``) is deliberately not read:
it is a setting of the Puppet that compiles the catalog (a server's, or the agent's for ``puppet
apply``), not part of the code, so the file found on the machine that runs the check proves nothing
about the compile -- its confdir and ``hiera_config`` may differ, and its hierarchy's paths are
usually per node (``%{trusted.certname}``) or per environment, read relative to that confdir.  Read
here, it would make a check's findings depend on the machine it runs on (the deep checks' missing class
parameter would come and go with a workstation's /etc), and an empty or absent one there says nothing
of the server's.  So the deep checks' "no Hiera value for the key" means: none in the environment's
and the key's module's layers (what the code ships), as issue 30 states it.
"""

from __future__ import annotations

import glob
import os
import re
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from puppet_xpp.xpp.sources import read_text

# where a key is set: (path, line, column start, column end, value text)
Hit = tuple[str, int, int, int, str]
# path -> the text the editor holds for it (an open, maybe unsaved, buffer), None: read the file
Reader = Callable[[str], "str | None"]


def text_of(path: str, read: Reader | None = None, errors: str = "replace") -> str | None:
    """The text of a Hiera file: the editor's buffer when ``read`` has it, else the file on disk (None:
    not read; ``errors`` as for bytes.decode: ``strict`` raises UnicodeDecodeError)."""
    text = read(path) if read is not None else None
    return text if text is not None else read_text(path, errors=errors)


def yaml_data(path: str, read: Reader | None = None) -> Any:
    """The YAML data of the file ``path`` (``read``: as :func:`text_of`); None when it is absent, not
    UTF-8 or not YAML -- the user's file to fix (Puppet reports it), not a bug of ours: any other
    exception propagates, to be reported (server/analysis/deep/internal.py)."""
    import yaml  # type: ignore[import-untyped]

    try:
        text = text_of(path, read, errors="strict")
        return yaml.safe_load(text) if text is not None else None
    except (yaml.YAMLError, ValueError, OverflowError, RecursionError):  # (ValueError: UnicodeError too)
        return None


@dataclass
class Layer:
    name: str  # 'environment' or the module's name
    root: str  # the directory holding hiera.yaml
    globs: list[str]  # absolute glob patterns of data files, hierarchy order
    module: str | None = None  # keys must start with "<module>::" (module layers)


class HieraCache:
    """The layers seen from each (environment, module roots), read once until :meth:`invalidate`
    (a watched file changed, a folder was added: its ``listeners`` are told); one per language server
    session."""

    def __init__(self) -> None:
        self.layers: dict[tuple[str | None, tuple[str, ...]], list[Layer]] = {}
        self.lock = threading.Lock()
        # called (on the caller's thread) after each invalidation: what else reads Hiera files follows
        # (the deep checks of the open documents: server/lsp/deep.py)
        self.listeners: list[Callable[[], None]] = []

    def invalidate(self) -> None:
        with self.lock:
            self.layers.clear()
        for listener in list(self.listeners):
            listener()

    def layers_for(self, env_root: str | None, module_roots: Iterable[str]) -> list[Layer]:
        """:func:`layers_for`, cached."""
        roots = tuple(module_roots)
        key = (env_root, roots)
        with self.lock:
            hit = self.layers.get(key)
        if hit is not None:
            return hit
        layers = layers_for(env_root, roots)
        with self.lock:
            self.layers[key] = layers
        return layers


_INTERP = re.compile(r"%\{[^}]*\}")


def read_layer(root: str, name: str, module: str | None = None, read: Reader | None = None) -> Layer | None:
    """The layer of ``root/hiera.yaml`` (None: absent, not version 5, or not YAML: validation is not
    this module's job); ``read``: the editor's buffers (:func:`text_of`)."""
    conf = yaml_data(os.path.join(root, "hiera.yaml"), read)
    if not isinstance(conf, dict) or conf.get("version") != 5:
        return None
    defaults = conf.get("defaults")
    if not isinstance(defaults, dict):
        defaults = {}
    out = []
    for level in conf.get("hierarchy") or []:
        if not isinstance(level, dict):
            continue
        datadir = level.get("datadir", defaults.get("datadir", "data"))
        if not isinstance(datadir, str):
            continue
        base = os.path.join(root, datadir)
        pats = []
        for k in ("path", "glob"):
            if isinstance(level.get(k), str):
                pats.append(level[k])
        for k in ("paths", "globs"):
            if isinstance(level.get(k), list):
                pats.extend(p for p in level[k] if isinstance(p, str))
        for p in pats:
            out.append(os.path.join(base, _INTERP.sub("*", p)))
    if not conf.get("hierarchy"):
        out.append(os.path.join(root, "data", "common.yaml"))
    return Layer(name, root, out, module)


def layers_for(env_root: str | None, module_roots: Iterable[str], read: Reader | None = None) -> list[Layer]:
    """The environment layer then the module layers of every module under `module_roots` (``read``:
    the editor's buffers, :func:`text_of`)."""
    layers = []
    if env_root:
        lay = read_layer(env_root, "environment", read=read)
        if lay is not None:
            layers.append(lay)
    seen: set[str] = set()
    for mr in module_roots:
        try:
            names = sorted(os.listdir(mr))
        except OSError:
            continue
        cands = [(mr, os.path.basename(mr))] + [(os.path.join(mr, n), n) for n in names]
        for d, n in cands:
            if d in seen or d == env_root or not os.path.isfile(os.path.join(d, "hiera.yaml")):
                continue
            seen.add(d)
            mod = _module_name(d, n)
            lay = read_layer(d, mod, mod, read)
            if lay is not None:
                layers.append(lay)
    return layers


def _module_name(d: str, fallback: str) -> str:
    """A module's name: metadata.json's ``name`` after its author prefix, else the directory name."""
    try:
        import json

        text = read_text(os.path.join(d, "metadata.json"), errors="strict")
        if text is None:
            return fallback.split("-")[-1]
        n = json.loads(text).get("name", "")
        if isinstance(n, str) and n:
            return re.split(r"[-/]", n, maxsplit=1)[-1]
    except (OSError, ValueError, AttributeError):
        pass
    return fallback.split("-")[-1]


def _files(layer: Layer) -> list[str]:
    out: list[str] = []
    for pat in layer.globs:
        for p in sorted(glob.glob(pat, recursive=True)):
            if p not in out and os.path.isfile(p):
                out.append(p)
    return out


def find(layers: Sequence[Layer], key: str) -> list[Hit]:
    """Where `key` is set: [(path, line, col start, col end, value text)] in lookup order."""
    key = key.lstrip(":")
    rx = re.compile(r"^(['\"]?)(::)?" + re.escape(key) + r"\1\s*:(?=\s|$)(.*)$")
    out: list[Hit] = []
    for lay in layers:
        if lay.module is not None and not key.startswith(lay.module + "::"):
            continue
        for path in _files(lay):
            text = read_text(path, errors="replace")
            if text is None:
                continue
            lines = text.splitlines()
            for i, line in enumerate(lines):
                m = rx.match(line) if line[:1] not in (" ", "\t", "#", "-") else None
                if m is None:
                    continue
                val = m.group(3).strip()
                j = i + 1
                while not val and j < len(lines) and j < i + 12 and lines[j][:1] in (" ", "\t", "-"):
                    val += ("\n" if val else "") + lines[j]
                    j += 1
                if not val:
                    more: list[str] = []
                    while j < len(lines) and len(more) < 10 and lines[j][:1] in (" ", "\t", "-"):
                        more.append(lines[j])
                        j += 1
                    val = "\n".join(more)
                end = 2 * len(m.group(1)) + len(m.group(2) or "") + len(key)
                out.append((path, i, 0, end, val))
    return out


_TOP_KEY = re.compile(r"^(['\"]?)((?:::)?[A-Za-z_][\w:.-]*)\1\s*:(?=\s|$)")


def all_keys(layers: Sequence[Layer], read: Reader | None = None) -> dict[str, str]:
    """Every top-level key of the layers' data files -> the first file that sets it (key completion;
    the deep checks' "is the key set"); ``read``: the editor's buffers (:func:`text_of`)."""
    out: dict[str, str] = {}
    for lay in layers:
        for path in _files(lay):
            text = text_of(path, read)
            if text is None:
                continue
            for line in text.splitlines():
                m = _TOP_KEY.match(line)
                if m and m.group(2) != "---":
                    out.setdefault(m.group(2).lstrip(":"), path)
    return out


def hover_markdown(layers: Sequence[Layer], key: str) -> str | None:
    hits = find(layers, key)
    if not hits:
        return None
    parts = [f"**{key}** (Hiera)"]
    for path, line, _a, _b, val in hits[:8]:
        where = f"{os.path.basename(os.path.dirname(path))}/{os.path.basename(path)}:{line + 1}"
        if "\n" in val:
            parts.append(f"- `{where}`:\n```yaml\n{val}\n```")
        else:
            parts.append(f"- `{where}`: `{val}`")
    return "\n".join(parts)


_LOOKUP = re.compile(rb"(?:lookup|hiera|hiera_array|hiera_hash|hiera_include)\s*\(\s*$")


def key_at(an: Any, off: int) -> tuple[str, int, int, Any] | None:
    """(key, start, end, parameter) when `off` is on the key of ``lookup('key')``/``hiera('key')``
    (parameter None) or on a class parameter's name (automatic parameter lookup ``class::param``: the
    Parameter node), else None."""
    data = an.data
    ls = data.rfind(b"\n", 0, off) + 1
    le = data.find(b"\n", off)
    le = len(data) if le < 0 else le
    line = data[ls:le]
    rel = off - ls
    for m in re.finditer(rb"(['\"])([\w:.-]+)\1", line):
        if m.start() <= rel <= m.end() and _LOOKUP.search(data[max(0, ls - 200) : ls + m.start()]):
            return m.group(2).decode(), ls + m.start(2), ls + m.end(2), None
    # a class parameter's $name
    for m in re.finditer(rb"\$([a-z_]\w*)", line):
        if m.start() <= rel <= m.end():
            name = m.group(1).decode()
            from puppet_xpp.grammar import ast

            prog = an.program
            for d in prog.definitions if prog is not None else ():
                if type(d) is not ast.HostClassDefinition:
                    continue
                for p in d.parameters or []:
                    if (
                        p.name == name
                        and p.offset is not None
                        and p.offset <= ls + m.start() < p.offset + max(p.length, 1)
                    ):
                        return f"{d.name.lstrip(':')}::{name}", ls + m.start(), ls + m.end(), p
    return None

"""Environment and module-path detection, and the language server's settings.

An *environment* is a directory holding ``environment.conf``, or failing that a directory with a
``manifests/`` and a ``modules/`` (or ``site-modules/``) directory (a control repository checkout).
Its module path comes from ``environment.conf``'s ``modulepath`` (relative entries resolved against
the environment, ``$basemodulepath`` dropped), else ``site-modules:modules`` (those that exist);
its main manifest from ``manifest`` (default ``manifests``).

A file that is not in an environment but inside a module (a directory with ``metadata.json`` or with
``manifests/``, ``functions/``, ``types/`` or ``plans/``) gets the module's parent directory as module
path, so that the module-location rules still apply.

No pygls imports here.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

STRICT_LEVELS = ("off", "warning", "error")
MODULE_DIRS = ("manifests", "functions", "types", "plans")


@dataclass
class Settings:
    """User settings (``initializationOptions`` / ``workspace/configuration`` section ``puppet``)."""

    modulepath: tuple = ()  # extra module directories (absolute, or relative to the workspace root)
    strict: str = "warning"  # severity of DUPLICATE_KEY: off | warning | error
    tasks: bool = False  # parse every file in tasks (Bolt plan) mode
    xpp_on_save: bool = True  # write the .xpp of a saved file into its environment's .xpp tree

    @classmethod
    def from_dict(cls, d, base: Settings | None = None, root: str | None = None) -> Settings:
        """Settings from a client dict (camelCase or snake_case keys; unknown keys ignored)."""
        s = Settings(**vars(base)) if base is not None else Settings()
        if not isinstance(d, dict):
            return s
        if isinstance(d.get("puppet"), dict):  # a whole configuration object
            d = d["puppet"]
        mp = d.get("modulepath", d.get("modulePath"))
        if isinstance(mp, str):
            mp = [p for p in mp.split(os.pathsep) if p]
        if isinstance(mp, (list, tuple)):
            out = []
            for p in mp:
                if isinstance(p, str) and p:
                    p = os.path.expanduser(p)
                    if not os.path.isabs(p) and root:
                        p = os.path.join(root, p)
                    out.append(os.path.normpath(p))
            s.modulepath = tuple(out)
        st = d.get("strict")
        if isinstance(st, str) and st in STRICT_LEVELS:
            s.strict = st
        t = d.get("tasks")
        if isinstance(t, bool):
            s.tasks = t
        x = d.get("xppOnSave", d.get("xpp_on_save"))
        if isinstance(x, bool):
            s.xpp_on_save = x
        return s


@dataclass
class Environment:
    root: str  # absolute directory
    modulepath: tuple = ()  # absolute module directories, in order
    manifest: str | None = None  # absolute main manifest (file or directory)
    conf: bool = False  # found through environment.conf

    def module_of(self, path: str):
        """(module dir in the module path, module name, path inside the module) or None."""
        path = os.path.abspath(path)
        for d in self.modulepath:
            prefix = d.rstrip(os.sep) + os.sep
            if path.startswith(prefix):
                rest = path[len(prefix) :].split(os.sep)
                if len(rest) >= 2:
                    return d, rest[0], os.sep.join(rest[1:])
        return None


def _parse_conf(path: str) -> dict:
    """environment.conf: ``key = value`` lines (ini without sections), ``#``/``;`` comments."""
    out = {}
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            for line in f:
                line = line.strip()
                if not line or line[0] in "#;" or line.startswith("["):
                    continue
                if "=" in line:
                    k, v = line.split("=", 1)
                    out[k.strip()] = v.strip().strip('"')
    except OSError:
        pass
    return out


def _resolve(root: str, entries: str) -> list:
    out = []
    for e in entries.split(os.pathsep):
        e = e.strip()
        if not e or e.startswith("$"):  # $basemodulepath and friends: outside the environment
            continue
        e = os.path.expanduser(e)
        out.append(os.path.normpath(e if os.path.isabs(e) else os.path.join(root, e)))
    return out


def environment_at(root: str) -> Environment | None:
    """The environment rooted at ``root``, or None when ``root`` is not an environment directory."""
    root = os.path.abspath(root)
    conf_file = os.path.join(root, "environment.conf")
    if os.path.isfile(conf_file):
        conf = _parse_conf(conf_file)
        mp = (
            _resolve(root, conf["modulepath"])
            if "modulepath" in conf
            else [os.path.join(root, d) for d in ("site-modules", "modules")]
        )
        man = conf.get("manifest")
        manifest = _resolve(root, man)[0] if man and _resolve(root, man) else os.path.join(root, "manifests")
        return Environment(root, tuple(mp), manifest, True)
    has_manifests = os.path.isdir(os.path.join(root, "manifests"))
    mods = [
        os.path.join(root, d)
        for d in ("site-modules", "site", "modules")
        if os.path.isdir(os.path.join(root, d))
    ]
    if has_manifests and mods and not _is_module_dir(root):
        return Environment(root, tuple(mods), os.path.join(root, "manifests"), False)
    return None


def _is_module_dir(d: str) -> bool:
    return os.path.isfile(os.path.join(d, "metadata.json"))


def find_environment(path: str, stop: str | None = None) -> Environment | None:
    """The environment containing ``path`` (searching upwards, not above ``stop`` when given)."""
    d = os.path.abspath(path if os.path.isdir(path) else os.path.dirname(path))
    stop = os.path.abspath(stop) if stop else None
    seen = 0
    while True:
        env = environment_at(d)
        if env is not None:
            # the file must be inside the environment's module path or its own tree
            return env
        if stop is not None and d == stop:
            return None
        parent = os.path.dirname(d)
        if parent == d or seen > 40:
            return None
        d = parent
        seen += 1


def find_module_root(path: str):
    """(modules dir, module name) for a file inside a module directory, else None.

    A module is a directory with ``metadata.json``, or the parent of the ``manifests``/``functions``/
    ``types``/``plans`` directory the file lies in."""
    d = os.path.abspath(os.path.dirname(path))
    for _ in range(40):
        if _is_module_dir(d):
            return os.path.dirname(d), os.path.basename(d)
        if os.path.basename(d) in MODULE_DIRS:
            mod = os.path.dirname(d)
            return os.path.dirname(mod), os.path.basename(mod)
        parent = os.path.dirname(d)
        if parent == d:
            return None
        d = parent
    return None


@dataclass
class FileContext:
    """What the server needs to parse, validate and compile one file."""

    path: str | None
    epp: bool = False
    tasks: bool = False
    modulepath: tuple = ()
    manifest: str | None = None
    env: Environment | None = None
    extra: dict = field(default_factory=dict)


def in_plans_dir(path: str) -> bool:
    parts = os.path.normpath(os.path.abspath(path)).split(os.sep)
    return "plans" in parts[:-1] and "manifests" not in parts[:-1]


def file_context(path: str | None, settings: Settings, roots=()) -> FileContext:
    """Environment, module path and modes for a file (``path`` None for an untitled buffer)."""
    if not path:
        return FileContext(None, tasks=settings.tasks, modulepath=tuple(settings.modulepath))
    epp = path.endswith(".epp")
    tasks = settings.tasks or in_plans_dir(path)
    env = find_environment(path)
    mp: list = []
    manifest = None
    if env is not None:
        mp.extend(env.modulepath)
        manifest = env.manifest
    else:
        m = find_module_root(path)
        if m is not None:
            mp.append(m[0])
        for r in roots:
            for d in ("site-modules", "modules"):
                p = os.path.join(r, d)
                if os.path.isdir(p):
                    mp.append(p)
    for d in settings.modulepath:
        if d not in mp:
            mp.append(d)
    return FileContext(path, epp, tasks, tuple(dict.fromkeys(os.path.normpath(p) for p in mp)), manifest, env)

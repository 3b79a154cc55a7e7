"""The one model of a Puppet environment, and the one rule for which files are Bolt plans.

Every entry point asks this module: ``--validate``, ``--dump``, ``--compile ENVDIR`` and ``--compile FILE``,
the language server and its ``.xpp`` on save.  It follows Puppet's own rules for a directory environment
(``puppet/settings/environment_conf.rb``, ``puppet/node/environment.rb``):

* ``environment.conf`` is optional; only its main section counts (``key = value``; ``#``/``;`` comments).
* ``modulepath`` defaults to ``modules:$basemodulepath``.  Entries are split on the path separator;
  relative ones are relative to the environment; ``$basemodulepath`` expands to what the caller gives (else
  it is dropped with a notice); other entries starting with ``$`` name Puppet settings unknown here and are
  dropped with a warning; a ``$`` elsewhere is literal, as in Puppet (which does not expand
  ``$environment`` there); globs are expanded.  A
  ``site-modules/`` directory is part of the module path only when ``modulepath`` names it (Puppet knows
  no such default; control repositories list it in their ``environment.conf``).
* ``manifest`` defaults to ``manifests`` (file or directory, relative to the environment).

Finding the environment of a file (:func:`find_environment`): the nearest ancestor directory holding
``environment.conf``, or a ``modules/`` directory while not being a module itself (no ``metadata.json``).

Module identity (:func:`infer_module`, :func:`file_context`).  Inside an environment's module path the
module's name is its directory's name (Puppet's own rule, judged by the validator from the module path).
A file no environment claims belongs to the module inferred from its location: the nearest directory
with ``metadata.json``, else the parent of the nearest ``manifests/``, else of the nearest
``functions/``, ``types/`` or ``plans/``.  Its name is what Puppet would install it as: metadata.json's
``name`` after the first ``-`` or ``/`` (``puppetlabs-apache`` cloned as ``puppet-apache/`` is
``apache``); the directory's name only when there is no metadata.json or no valid name in it.  The
location rules then judge what Puppet autoloads (``manifests/``, ``functions/``, ``types/``,
``plans/``) as if the module were installed under that name; a file elsewhere in the module
(``examples/``, ``tests/``, ``spec/``...) is never autoloaded and is checked as Puppet checks an initial
manifest (``puppet apply examples/init.pp``): no location rule.

The plan rule (:func:`is_plan_file`): a file is parsed and validated in tasks mode when it lies in the
``plans/`` directory of its module -- a module of the environment's module path, the environment's own
``plans/``, or for a file outside every module of its environment, the module inferred from its location.
So ``modules/m/manifests/plans/x.pp`` is not a plan, ``site-modules/deploy/plans/app.pp`` is.
"""

from __future__ import annotations

import glob
import json
import os
import re
from dataclasses import dataclass, field
from typing import NamedTuple

from puppet_xpp.grammar.check import CheckConfig
from puppet_xpp.grammar.validator.location import NO_NAMESPACE, namespace_for_file
from puppet_xpp.xpp.compile.layout import XPP_DIR
from puppet_xpp.xpp.project import ProjectConfig, project_for
from puppet_xpp.xpp.sources import read_or_raise

__all__ = [
    "Environment",
    "NotAnEnvironment",
    "FileContext",
    "InferredModule",
    "XPP_DIR",
    "MODULE_NAME",
    "SOURCE_DIRS",
    "load_environment",
    "find_environment",
    "infer_module",
    "metadata_module_name",
    "is_plan_file",
    "file_context",
    "parse_conf",
    "split_path",
    "expand_modulepath",
]

MODULE_NAME = re.compile(r"[a-z][a-z0-9_]*\Z")  # directories of a modulepath entry that are modules
SOURCE_DIRS = ("manifests", "functions", "types", "plans")  # a module's Puppet-language directories
_MAX_DEPTH = 64


class NotAnEnvironment(Exception):
    """The directory given is not a usable Puppet environment (message says why)."""


@dataclass
class Environment:
    root: str  # absolute path (not resolved: a symlinked environment stays as given)
    display: str  # the directory as the user gave it (for messages)
    modulepath: tuple[str, ...]  # absolute directories, in order
    manifest: str  # absolute path of the main manifest (file or directory)
    conf: str | None = None  # environment.conf path when present
    notes: list[tuple[str, str]] = field(default_factory=list)  # (level, message) found while reading

    @property
    def xpp_root(self) -> str:
        return os.path.join(self.root, XPP_DIR)

    @property
    def out_base(self) -> str:
        return os.path.join(self.root, XPP_DIR, "modules")

    def module_of(self, path: str) -> tuple[str, str, str] | None:
        """(modulepath directory, module name, path inside the module) of a file, or None."""
        path = os.path.abspath(path)
        for d in self.modulepath:
            prefix = d.rstrip(os.sep) + os.sep
            if path.startswith(prefix):
                rest = path[len(prefix) :].split(os.sep)
                if len(rest) >= 2:
                    return d, rest[0], os.sep.join(rest[1:])
        return None

    def owns(self, path: str) -> bool:
        """The file is in one of the environment's modules or in its own directory tree."""
        p = os.path.abspath(path)
        return self.module_of(p) is not None or p.startswith(self.root.rstrip(os.sep) + os.sep)


# ------------------------------------------------------------------------------------------------ reading


def parse_conf(path: str) -> dict[str, str]:
    """``environment.conf``: ``key = value`` lines of the main part (``[main]`` or no section); OSError."""
    out: dict[str, str] = {}
    section = "main"
    for line in read_or_raise(path).decode("utf-8", "replace").split("\n"):
        line = line.strip()
        if not line or line[0] in "#;":
            continue
        if line.startswith("[") and line.endswith("]"):
            section = line[1:-1].strip()
            continue
        if section != "main" or "=" not in line:
            continue
        k, v = line.split("=", 1)
        v = v.strip()
        if len(v) >= 2 and v[0] == v[-1] and v[0] in "'\"":
            v = v[1:-1]
        out[k.strip()] = v
    return out


def split_path(value: str) -> list[str]:
    return [e.strip() for e in value.split(os.pathsep) if e.strip()]


def expand_modulepath(
    entries: list[str], base: str, basemodulepath: str | None, notes: list[tuple[str, str]]
) -> list[str]:
    """Absolute directories of a modulepath (``$basemodulepath`` expanded, relative entries against
    ``base``, globs expanded); what cannot be expanded is dropped with a note (Puppet does not expand
    ``$environment`` in a modulepath either)."""
    out: list[str] = []
    for e in entries:
        if e in ("$basemodulepath", "${basemodulepath}"):
            if basemodulepath is None:
                notes.append(
                    (
                        "notice",
                        "the modulepath includes $basemodulepath but no --basemodulepath was "
                        "given: base modules are not compiled",
                    )
                )
                continue
            out.extend(os.path.abspath(os.path.expanduser(b)) for b in split_path(basemodulepath))
            continue
        if e.startswith("$"):  # another setting of Puppet's ($codedir, $confdir, ...): unknown here
            notes.append(("warning", f"modulepath entry {e!r} cannot be expanded here; ignored"))
            continue
        p = os.path.normpath(os.path.join(base, os.path.expanduser(e)))
        if any(c in p for c in "*?["):
            out.extend(sorted(g for g in glob.glob(p) if os.path.isdir(g)))
        else:
            out.append(p)
    return list(dict.fromkeys(out))


def load_environment(
    envdir: str, *, basemodulepath: str | None = None, modulepath: str | None = None
) -> Environment:
    """The environment at ``envdir`` (``modulepath`` given: it replaces the environment's, relative
    entries against the current directory).  Raises NotAnEnvironment."""
    root = os.path.abspath(envdir)
    if not os.path.isdir(root):
        raise NotAnEnvironment(
            f"{envdir}: not a directory" if os.path.exists(root) else f"{envdir}: no such directory"
        )
    conf_path = os.path.join(root, "environment.conf")
    has_conf = os.path.isfile(conf_path)
    if not (
        has_conf
        or os.path.isdir(os.path.join(root, "manifests"))
        or os.path.isdir(os.path.join(root, "modules"))
    ):
        raise NotAnEnvironment(
            f"{envdir}: not a Puppet environment (no environment.conf, manifests/ or modules/)"
        )
    notes: list[tuple[str, str]] = []
    conf: dict[str, str] = {}
    if has_conf:
        try:
            conf = parse_conf(conf_path)
        except OSError as e:
            raise NotAnEnvironment(f"{conf_path}: cannot read: {e.strerror}") from None
    if modulepath is not None:
        mp = expand_modulepath(split_path(modulepath), os.getcwd(), basemodulepath, notes)
    else:
        entries = split_path(conf["modulepath"]) if "modulepath" in conf else ["modules", "$basemodulepath"]
        if "modulepath" not in conf and basemodulepath is None:
            entries = ["modules"]  # Puppet's default; the base modules are simply not known here
        mp = expand_modulepath(entries, root, basemodulepath, notes)
    man = conf.get("manifest")
    if man and not man.startswith("$"):
        manifest = os.path.normpath(os.path.join(root, os.path.expanduser(man)))
    else:
        if man:
            notes.append(("warning", f"manifest setting {man!r} cannot be expanded here; using manifests/"))
        manifest = os.path.join(root, "manifests")
    return Environment(root, envdir, tuple(mp), manifest, conf_path if has_conf else None, notes)


def is_module_dir(d: str) -> bool:
    """A module's root: it holds metadata.json (a module checked out on its own, ``puppet-apache/``)."""
    return os.path.isfile(os.path.join(d, "metadata.json"))


def _is_environment_root(d: str) -> bool:
    if os.path.isfile(os.path.join(d, "environment.conf")):
        return True
    return os.path.isdir(os.path.join(d, "modules")) and not is_module_dir(d)


def find_environment(path: str, *, basemodulepath: str | None = None) -> Environment | None:
    """The environment containing ``path`` (the nearest qualifying ancestor), or None."""
    d = os.path.abspath(path if os.path.isdir(path) else os.path.dirname(path))
    for _ in range(_MAX_DEPTH):
        if _is_environment_root(d):
            try:
                return load_environment(d, basemodulepath=basemodulepath)
            except NotAnEnvironment:
                return None
        parent = os.path.dirname(d)
        if parent == d:
            return None
        d = parent
    return None


class InferredModule(NamedTuple):
    """The module a file no environment claims belongs to (:func:`infer_module`)."""

    parent: str  # the directory holding the module's directory
    directory: str  # the module directory's own name (``puppet-apache``)
    name: str  # the module's name: metadata.json's (``apache``), else the directory's

    @property
    def root(self) -> str:
        return os.path.join(self.parent, self.directory)


def metadata_module_name(module_dir: str) -> str | None:
    """The module name metadata.json gives (``name`` after its first ``-`` or ``/``, as the Forge and
    ``puppet module install`` name the installed directory), or None when there is no readable
    metadata.json or its name is not a valid module name."""
    try:
        data = json.loads(read_or_raise(os.path.join(module_dir, "metadata.json")).decode("utf-8"))
    except (OSError, ValueError):
        return None
    full = data.get("name") if isinstance(data, dict) else None
    if not isinstance(full, str):
        return None
    parts = re.split(r"[-/]", full, maxsplit=1)
    if len(parts) != 2:
        return None
    name = parts[1]
    return name if MODULE_NAME.match(name) else None


def infer_module(path: str) -> InferredModule | None:
    """The module of a file inside a module no environment names: the nearest ancestor with
    ``metadata.json`` (named by it, see :func:`metadata_module_name`), else the parent of the nearest
    ``manifests/``, else of the nearest ``functions/``, ``types/`` or ``plans/`` (named by its
    directory)."""
    ancestors = []
    d = os.path.dirname(os.path.abspath(path))
    for _ in range(_MAX_DEPTH):
        ancestors.append(d)
        parent = os.path.dirname(d)
        if parent == d:
            break
        d = parent
    for d in ancestors:
        if is_module_dir(d):
            base = os.path.basename(d)
            return InferredModule(os.path.dirname(d), base, metadata_module_name(d) or base)
    for names in (("manifests",), SOURCE_DIRS[1:]):
        for d in ancestors:
            if os.path.basename(d) in names:
                mod = os.path.dirname(d)
                base = os.path.basename(mod)
                return InferredModule(os.path.dirname(mod), base, base)
    return None


def inferred_namespace(path: str, module: InferredModule) -> str:
    """The namespace the location rules give ``path`` of the inferred ``module``: as Puppet judges the
    file with the module installed under its name on a module path (``manifests/``, ``functions/``,
    ``types/``, ``plans/``); NO_NAMESPACE elsewhere in the module (never autoloaded: Puppet takes such
    a file only as an initial manifest)."""
    rest = os.path.relpath(os.path.abspath(path), module.root)
    if _first_dir(rest) not in SOURCE_DIRS:
        return NO_NAMESPACE
    # the rule is the validator's own (grammar.validator.location), asked of the installed location
    return namespace_for_file(os.path.join(module.parent, module.name, rest), (module.parent,))


# ------------------------------------------------------------------------------------------------ one file


def _first_dir(rest: str) -> str:
    return rest.split(os.sep, 1)[0]


def is_plan_file(path: str, env: Environment | None = None) -> bool:
    """The plan rule: the file lies in its module's ``plans/`` directory (see the module docstring)."""
    p = os.path.abspath(path)
    if env is not None:
        m = env.module_of(p)
        if m is not None:
            return _first_dir(m[2]) == "plans"
        plans = os.path.join(env.root, "plans") + os.sep
        if p.startswith(plans):
            return True
    inferred = infer_module(p)
    if inferred is None:
        return False
    mod = inferred.root + os.sep
    return p.startswith(mod) and _first_dir(p[len(mod) :]) == "plans"


@dataclass
class FileContext:
    """How one file is parsed and validated: its environment, module path, main manifest and modes."""

    path: str | None
    epp: bool = False
    tasks: bool = False
    modulepath: tuple[str, ...] = ()
    manifest: str | None = None
    env: Environment | None = None
    # the module-location rules' namespace when the module path cannot say it (a module no environment
    # claims: see infer_module); None: the validator judges the path against the module path
    namespace: str | None = None
    # the project configuration that applies to the file (xpp.project): defaults under the caller's
    project: ProjectConfig = field(default_factory=ProjectConfig)

    def level_and_strict(self, level: str | None, strict: str | None) -> tuple[str | None, str | None]:
        """The language level and ``strict`` for this file: the caller's (command line, the editor's
        explicit settings), else the project configuration's, else None (grammar.levels' defaults)."""
        return (
            level if level is not None else self.project.level,
            strict if strict is not None else self.project.strict,
        )

    def check_config(
        self, *, level: str | None = None, strict: str | None = None, file: str | None = None
    ) -> CheckConfig:
        """The parse/validate configuration of this file (``grammar.check``) at ``level``/``strict``.

        ``file`` is the name to record when it is not the file's path (``--compile`` records a name
        relative to the environment); the module-location rules still judge the real path.  ``level``
        and ``strict`` None: the project configuration's, else the level's defaults."""
        level, strict = self.level_and_strict(level, strict)
        path = self.path or ""
        return CheckConfig(
            file=path if file is None else file,
            epp=self.epp,
            tasks=self.tasks,
            level=level,
            strict=strict,
            modulepath=self.modulepath,
            manifest=self.manifest,
            location=None if file is None or file == path else (path or None),
            namespace=self.namespace,
        )


def file_context(
    path: str | None,
    *,
    tasks: bool = False,
    modulepath: list[str] | tuple[str, ...] | None = None,
    manifest: str | None = None,
    extra_modulepath: list[str] | tuple[str, ...] = (),
    project_modulepath: bool = True,
) -> FileContext:
    """The context of one file for every single-file entry point (``path`` None: an unsaved buffer).

    ``tasks`` forces tasks mode; else the plan rule decides.  ``modulepath`` (when not None) replaces the
    module path found from the file's environment or module, as the project configuration's
    ``modulepath`` does when the caller gives none (:mod:`xpp.project`); ``manifest`` replaces the
    environment's; ``extra_modulepath`` (the language server's setting) is appended;
    ``project_modulepath`` False: the project's module path is not used (the editor set its own)."""
    if not path:
        return FileContext(
            None, tasks=tasks, modulepath=tuple(modulepath or extra_modulepath), manifest=manifest
        )
    path = os.path.abspath(path)
    project = project_for(path)
    if modulepath is None and project_modulepath and project.modulepath is not None:
        modulepath = project.modulepath
    env = find_environment(path)
    mp: list[str] = []
    man = None
    namespace = None
    if env is not None:
        mp.extend(env.modulepath)
        man = env.manifest
    else:
        inferred = infer_module(path)
        if inferred is not None:
            mp.append(inferred.parent)
            namespace = inferred_namespace(path, inferred)
    if modulepath is not None:
        mp = [os.path.abspath(os.path.expanduser(d)) for d in modulepath]
        if any(path.startswith(os.path.normpath(d) + os.sep) for d in mp):
            namespace = None  # a module path given names the module: Puppet's rule, by directory
    mp.extend(os.path.abspath(os.path.expanduser(d)) for d in extra_modulepath)
    return FileContext(
        path,
        epp=path.endswith(".epp"),
        tasks=tasks or is_plan_file(path, env),
        modulepath=tuple(dict.fromkeys(os.path.normpath(d) for d in mp)),
        manifest=manifest if manifest is not None else man,
        env=env,
        namespace=None if manifest is not None and _under(path, manifest) else namespace,
        project=project,
    )


def _under(path: str, manifest: str) -> bool:
    """``path`` is the main manifest or lies in it (exempt from the location rules)."""
    m = os.path.abspath(os.path.expanduser(manifest))
    return path == m or path.startswith(m.rstrip(os.sep) + os.sep)

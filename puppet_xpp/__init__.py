"""puppet-xpp: parser, static validator, XPP (PRFC-23) compiler and language server for Puppet.

One import package, named after the distribution. Its subpackages are the repository's top-level folders,
reached through the links ``puppet_xpp/{grammar,lint,xpp,server}``, with one direction of dependency, as
Puppet's ``pops/`` keeps parser, model, validation and serialization apart:

- :mod:`puppet_xpp.grammar` (``grammar/``): lexer, grammar, parser, incremental parser, AST model, issue
  table, validator, language levels and :func:`~puppet_xpp.grammar.check.check`;
- :mod:`puppet_xpp.lint` (``lint/``): puppet-lint's checks and fixes, on grammar's tokens and AST;
- :mod:`puppet_xpp.xpp` (``xpp/``): environments, Pcore serialization, the ``.xpp`` envelope and layout,
  batch compile;
- :mod:`puppet_xpp.server` (``server/``): the language server and the ``puppet-xpp`` command line.

``grammar`` imports nothing of the others; ``lint`` and ``xpp`` import ``grammar``; ``server`` imports
them all (``.importlinter`` holds the contract, ``.ci/check`` runs it).
"""

__version__ = "0.2.0"


def user_cache_dir(*parts: str) -> str:
    """Where puppet-xpp keeps what it can always rebuild (the parser's tables, the installed Puppet's
    version, the workspace index): ``$XDG_CACHE_HOME/puppet-xpp`` (``~/.cache/puppet-xpp`` when unset),
    joined with ``parts``.  The one rule of every cache, here because every layer has one."""
    import os

    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "puppet-xpp", *parts)


def env_cache_dir(variable: str, *parts: str) -> str | None:
    """The directory of a cache the environment variable ``variable`` may move (a path) or turn off
    (empty, ``off``, ``none``, ``0``, ``false``, ``no``: None); unset, :func:`user_cache_dir` of
    ``parts``.  The one rule of every such variable (``PUPPET_XPP_STARTUP_CACHE``,
    ``PUPPET_XPP_INDEX_CACHE``)."""
    import os

    value = os.environ.get(variable)
    if value is None:
        return user_cache_dir(*parts)
    if value.strip().lower() in ("", "off", "none", "0", "false", "no"):
        return None
    return os.path.abspath(os.path.expanduser(value))


def open_cache_dir(directory: str, create: bool) -> int | None:
    """A descriptor of the cache directory ``directory`` (made 0700 with its parents when ``create``), or
    None when it is absent, a link, not a directory, not ours, or cannot be made private.  A cache's
    files are then opened and replaced relative to it (``dir_fd``), never through a link, so a cache
    is never read from or written to a place another user prepared."""
    import os
    import stat

    if create:
        try:
            os.makedirs(os.path.dirname(directory), mode=0o700, exist_ok=True)
            os.mkdir(directory, 0o700)
        except FileExistsError:
            pass
        except OSError:
            return None
    try:
        fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return None
    st = os.fstat(fd)
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.geteuid():
        os.close(fd)
        return None
    if stat.S_IMODE(st.st_mode) & 0o077:
        try:
            os.fchmod(fd, 0o700)
        except OSError:
            os.close(fd)
            return None
    return fd

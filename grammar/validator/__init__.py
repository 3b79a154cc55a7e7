"""Static validation of a parsed Puppet program: Puppet 7's ``Checker4_0`` (and ``TasksChecker`` with
``tasks=True``), with Puppet's issue codes, severities, messages, positions and order.

    from puppet_xpp.grammar.validator import validate
    diagnostics = validate(program, strict="warning", tasks=False, file="x.pp",
                           modulepath=["/etc/puppetlabs/code/modules"], manifest=None)

Every model element is visited in containment order (pre-order, Puppet's attribute order), after the
program itself and the module top-construct check, so the diagnostics come out in Puppet's order.  Each
element gets the ``check_<Class>`` method of its nearest class in the model hierarchy that has one; the
ancestors of the element are in ``self.path`` (``path[-1]`` is the parent).

Settings: ``level`` (``8`` | ``7`` | ``7.23``, see :mod:`puppet_xpp.grammar.levels`) selects Puppet 8's newer checker
or Puppet 7.23's; ``strict`` (``off`` | ``warning`` | ``error``, default: the level's) gives the severity
of DUPLICATE_KEY (``off`` drops it); ``tasks`` selects the tasks checker.  ``modulepath`` and ``manifest`` drive the module-location
checks (ILLEGAL_DEFINITION_LOCATION, ILLEGAL_TOP_CONSTRUCT_LOCATION), see :func:`namespace_for_file`.

Behaviour taken over from Puppet on purpose:

* a heredoc whose static text fails its ``:syntax`` checker (json, base64, pp, epp) stops the validation:
  Puppet raises that error at once, so it is the only diagnostic of the validator returned;
* the pp/epp heredoc checkers parse and validate the heredoc text the way Puppet does, and Puppet *logs*
  what that finds (warnings; errors when there are several) with positions relative to the heredoc text:
  those come first in the result, as ``syntax.LoggedDiagnostic`` (no file offset);
* DUPLICATE_KEY compares keys with Ruby's ``eql?`` semantics as Puppet's literal evaluator does
  (``1`` and ``1.0`` differ; at level 7.23 type references, ``-1`` and other non-literals are never
  compared; the newer checker compares type references, ``X[...]`` and negated literals too);
* where the newer checker's evaluation makes Puppet fail with a Ruby error (``{-true => 1}``: no unary
  minus for ``true``), Puppet reports nothing usable; we report LITERAL_NEGATION_FAILS there and go on;
* unreachable checks of Puppet (MISSING_INDEX, which names an issue that does not exist) are left out.

The package, by concern: ``walk`` (settings, reporting, the walk), ``rules`` (the checks several node
kinds share, heredoc syntax), ``checks`` (``Checker``: the check per node kind), ``tasks``
(``TasksChecker``), ``literals`` (Puppet's literal evaluation and Ruby's renderings), ``model`` (the
containment order, the idem rule), ``location`` (the module-location rules), ``labels`` (node labels in
messages), ``syntax`` (the heredoc ``:syntax`` checkers).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from puppet_xpp.grammar.issues import Diagnostic
from puppet_xpp.grammar.validator.checks import Checker
from puppet_xpp.grammar.validator.literals import literal_key, literal_value, ruby_to_s
from puppet_xpp.grammar.validator.location import BAD_MODULE_FILE, NO_NAMESPACE, namespace_for_file
from puppet_xpp.grammar.validator.model import contents, idem
from puppet_xpp.grammar.validator.tasks import TasksChecker

__all__ = [
    "validate",
    "namespace_for_file",
    "NO_NAMESPACE",
    "BAD_MODULE_FILE",
    "idem",
    "contents",
    "literal_value",
    "literal_key",
    "ruby_to_s",
    "Checker",
    "TasksChecker",
]


def validate(
    program: Any,
    *,
    strict: str | None = None,
    tasks: bool = False,
    file: str | None = None,
    modulepath: Iterable[str] = (),
    manifest: str | None = None,
    level: str | None = None,
) -> list[Diagnostic]:
    """Validate a parsed program; returns the diagnostics in Puppet's order.

    ``level`` is the language level (:mod:`puppet_xpp.grammar.levels`: ``8`` by default, ``7``, ``7.23``): it selects
    the checker and, when ``strict`` is None, the severity of DUPLICATE_KEY.

    ``file`` defaults to the program's locator file; it names the file in diagnostics and drives the
    module-location checks together with ``modulepath`` (directories) and ``manifest`` (the environment's
    manifest file or directory, exempt from those checks).
    """
    if program is None:
        return []
    if file is None:
        loc = getattr(program, "locator", None)
        file = getattr(loc, "file", None) or None
    cls = TasksChecker if tasks else Checker
    checker = cls(strict=strict, file=file, modulepath=modulepath, manifest=manifest, level=level)
    return checker.validate(program)

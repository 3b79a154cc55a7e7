"""The one table of the deep checks' codes: severity, Puppet's words (the message template) and what
we print where Puppet's text holds a node-specific part.

Every deep finding is made from this table (:func:`server.analysis.deep.finding.make`), as every
validation diagnostic is made from :mod:`grammar.issues`; the language server's diagnostic codes and
the rule ids of ``--validate --deep``'s reports are these keys.

The templates are Puppet 7.23's evaluation-error texts (the part after ``Evaluation Error: Error while
evaluating a ..., ``), with ``{name}``-style arguments.  Node-specific parts are left out:

* ``Could not find class ::x for <node>``: we print ``Could not find class ::x`` (no node is known
  statically);
* a resource whose title is computed: ``T[<title>]`` (:data:`TITLE_PLACEHOLDER`) where Puppet prints the
  evaluated title;
* ``Duplicate declaration: T[x] is already declared at (file: F, line: L); cannot redeclare`` keeps the
  file and line of the first declaration (Puppet's own), in the file's name as given to us.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType

__all__ = ["CODES", "DEEP_SOURCE", "TITLE_PLACEHOLDER", "DeepCode"]

# what we print for a resource's title that is not literal (Puppet prints the evaluated title:
# ``File[/tmp/a]``; we print ``File[<title>]``)
TITLE_PLACEHOLDER = "<title>"

# the ``source`` of a deep finding in the editor and the tool name in the CLI's reports
DEEP_SOURCE = "puppet-xpp-deep"


@dataclass(frozen=True)
class DeepCode:
    """One kind of deep finding: ``severity`` (error | warning | note), Puppet's message template, and
    whether Puppet's report of it carries a column (a resource statement's parameter errors carry the
    line only)."""

    severity: str
    template: str
    column: bool = True


CODES = MappingProxyType(
    {
        # include/contain/require of a class that exists nowhere
        "DEEP_UNKNOWN_CLASS": DeepCode("error", "Could not find class ::{name}"),
        # class { 'x': } of a class that exists nowhere (Puppet's words differ from include's)
        "DEEP_UNKNOWN_DECLARED_CLASS": DeepCode("error", "Could not find declared class {name}"),
        # Class['x'] in require/before/notify/subscribe of a class that exists nowhere
        "DEEP_UNKNOWN_CLASS_REFERENCE": DeepCode(
            "error", "Could not find resource '{resource}' in parameter '{param}'", column=False
        ),
        # T['x'] in require/before/notify/subscribe of a resource type that exists nowhere
        "DEEP_UNKNOWN_TYPE_REFERENCE": DeepCode("error", "Resource type not found: {name}"),
        "DEEP_UNKNOWN_RESOURCE_TYPE": DeepCode("error", "Unknown resource type: '{name}'"),
        "DEEP_UNKNOWN_FUNCTION": DeepCode("error", "Unknown function: '{name}'."),
        # {resource}: Class[Foo] or Foo::Bar[title] (a define's, a Ruby type's)
        "DEEP_UNKNOWN_PARAMETER": DeepCode("error", "{resource}: has no parameter named '{param}'"),
        # a core or Ruby type's attribute that does not exist: Puppet's words for a Puppet::Type
        "DEEP_UNKNOWN_ATTRIBUTE": DeepCode(
            "error", "no parameter named '{param}' on {resource}", column=False
        ),
        # {param}: 'x' quoted, or $x where another parameter's default reads the missing x (Puppet's
        # words then: the error of evaluating that default)
        "DEEP_MISSING_PARAMETER": DeepCode("error", "{resource}: expects a value for parameter {param}"),
        # the arity phrase is Puppet's: "expects 2 arguments", "expects between 1 and 2 arguments",
        # "expects at least 1 argument"; got: "got none" | "got 3"
        "DEEP_WRONG_ARITY": DeepCode("error", "'{name}' {expects}, got {got}"),
        # a lambda given to a function that takes no block, or none where one is required
        "DEEP_BLOCK": DeepCode("error", "'{name}' {phrase}"),
        # Puppet's whole text: "Class[Foo]: parameter 'x' expects an Integer value, got String" (the
        # type model's parameter_error), "'f' parameter 'x' expects ..." for a function's argument
        "DEEP_WRONG_TYPE": DeepCode("error", "{message}"),
        "DEEP_DUPLICATE_RESOURCE": DeepCode(
            "error",
            "Duplicate declaration: {resource} is already declared at (file: {file}, line: {line}); "
            "cannot redeclare",
        ),
        # what strict_variables stops: a warning (the setting is off by default)
        "DEEP_UNKNOWN_VARIABLE": DeepCode("warning", "Unknown variable: '{name}'."),
        # a name of a module that is not on the module path: one note per module, no finding per use
        "DEEP_MISSING_MODULE": DeepCode(
            "note", "Module '{module}' is not on the module path: what it defines is not checked"
        ),
        # a bug of the deep checks themselves (server/analysis/deep/internal.py): never published as a
        # diagnostic of the code; --validate --deep reports it as the file's INTERNAL_ERROR at the node,
        # the language server logs it
        "DEEP_INTERNAL_ERROR": DeepCode(
            "error", "Internal error ({type}) in the deep check of this {what}: {reason}"
        ),
    }
)

"""The issue table: every diagnostic code with its default severity and message template.

Codes and message texts are Puppet 7's (they are what users and tools match on).  A template names its
arguments as ``%{name}``; :func:`format_message` fills them in.  ``hard`` issues cannot be demoted below
error.  The validator adds its own rows to ISSUES through :func:`issue`; nothing else holds messages.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Issue:
    code: str
    severity: str  # 'error' | 'warning' | 'deprecation' | 'ignore'
    template: str
    hard: bool = True


ISSUES: dict[str, Issue] = {}


def issue(code: str, template: str, severity: str = "error", hard: bool = True) -> Issue:
    i = Issue(code, severity, template, hard)
    ISSUES[code] = i
    return i


# --- lexer (Puppet's Lexer2) ---
issue(
    "ILLEGAL_BOM",
    "Illegal %{format} Byte Order mark at beginning of input: %{bom} - remove these from the puppet source",
)
issue("NO_INPUT_TO_LEXER", "Internal Error: No string or file given to lexer to process.")
issue("UNCLOSED_MLCOMMENT", "Unclosed multiline comment")
issue("UNCLOSED_QUOTE", "Unclosed quote after %{after} followed by '%{followed_by}'")
issue("ILLEGAL_CLASS_REFERENCE", "Illegal class reference")
issue("ILLEGAL_FULLY_QUALIFIED_CLASS_REFERENCE", "Illegal fully qualified class reference")
issue("ILLEGAL_FULLY_QUALIFIED_NAME", "Illegal fully qualified name")
issue("ILLEGAL_NAME_OR_BARE_WORD", "Illegal name or bare word")
issue("ILLEGAL_NUMBER", "Illegal number '%{value}'")
issue("INVALID_HEX_NUMBER", "Not a valid hex number %{value}")
issue("INVALID_OCTAL_NUMBER", "Not a valid octal number %{value}")
issue("INVALID_DECIMAL_NUMBER", "Not a valid decimal number %{value}")
issue(
    "ILLEGAL_UNICODE_ESCAPE",
    "Unicode escape '\\u' was not followed by 4 hex digits or 1-6 hex digits in {} or was > 10ffff",
    severity="warning",
    hard=False,
)
issue("UNRECOGNIZED_ESCAPE", "Unrecognized escape sequence '\\%{ch}'", severity="warning", hard=False)
issue("HEREDOC_UNCLOSED_PARENTHESIS", "Unclosed parenthesis after '@(' followed by '%{followed_by}'")
issue("HEREDOC_INVALID_SYNTAX", "Invalid syntax in heredoc expected @(endtag[:syntax][/escapes])")
issue("HEREDOC_EMPTY_ENDTAG", "Heredoc with an empty endtag")
issue(
    "HEREDOC_INVALID_ESCAPE",
    "Invalid heredoc escape char. Only t, r, n, s,  u, L, $ allowed. Got '%{actual}'",
)
issue("HEREDOC_MULTIPLE_AT_ESCAPES", "An escape char for @() may only appear once. Got '%{escapes}'")
issue("HEREDOC_WITHOUT_TEXT", "Heredoc without any following lines of text")
issue("HEREDOC_WITHOUT_END_TAGGED_LINE", "Heredoc without end-tagged line")
issue(
    "HEREDOC_DIRTY_MARGIN",
    "Heredoc with text in the margin is not allowed (line %{heredoc_line} in this heredoc)",
)
issue("EPP_UNBALANCED_TAG", "Unbalanced epp tag, reached <eof> without closing tag.")
issue("EPP_UNBALANCED_COMMENT", "Reaching end after opening <%# without seeing %>")
issue("EPP_UNBALANCED_EXPRESSION", "Unbalanced embedded expression - opening <% and reaching end of input")
issue("EPP_INTERNAL_ERROR", "Internal error: %{error}")

# --- parser ---
issue("SYNTAX_ERROR", "Syntax error at %{where}")
# Puppet raises these as plain parse errors without an issue code; we give them codes of our own
# (PARSE_*) so that tools can tell them apart.  The message is Puppet's.
issue("PARSE_VIRTUAL_NOT_RESOURCE", "Virtual (@) can only be applied to a Resource Expression")
issue("PARSE_EXPORTED_NOT_RESOURCE", "Exported (@@) can only be applied to a Resource Expression")
issue("PARSE_RESOURCE_WITHOUT_TITLE_PLUS", "Syntax error resource body without title or hash with +>")
issue("PARSE_NOT_A_RESOURCE", "Expression is not valid as a resource, resource-default, or resource-override")
issue("PARSE_CLASS_KEYWORD", "'class' keyword not allowed at this location")
issue("PARSE_QUOTED_NAME", "A quoted string is not valid as a name here")
issue(
    "PARSE_NOT_CALLABLE_WITHOUT_PARENS",
    "attempt to pass argument list to the function '%{name}' which cannot be called without parentheses",
)
issue("PARSE_ILLEGAL_COMMA", "illegal comma separated argument list")
issue("PARSE_TOO_DEEP", "Expression nesting too deep (more than %{limit} levels)")

# --- validator ---
# Puppet 7's static validator (Checker4_0, TasksChecker, the heredoc syntax checkers).  Arguments that
# Puppet renders through its label provider (a_an, the, ...) are passed already rendered, see
# grammar/validator/labels.py.  Only issues the static validator can raise are listed.
issue("NOT_TOP_LEVEL", "Classes, definitions, and nodes may only appear at toplevel or inside other classes")
issue("NOT_ABSOLUTE_TOP_LEVEL", "%{value} may only appear at toplevel")
issue(
    "CROSS_SCOPE_ASSIGNMENT",
    "Illegal attempt to assign to '%{name}'. Cannot assign to variables in other namespaces",
)
issue("ILLEGAL_ASSIGNMENT", "Illegal attempt to assign to '%{value}'. Not an assignable reference")
issue(
    "ILLEGAL_NUMERIC_ASSIGNMENT",
    "Illegal attempt to assign to the numeric match result variable '$%{varname}'. "
    "Numeric variables are not assignable",
    hard=False,
)
issue("ILLEGAL_ASSIGNMENT_CONTEXT", "Assignment not allowed here")
issue(
    "ILLEGAL_NUMERIC_PARAMETER",
    "The numeric parameter name '$%{name}' cannot be used (clashes with numeric match result variables)",
    hard=False,
)
issue(
    "ILLEGAL_INDEXED_ASSIGNMENT",
    "Illegal attempt to assign via [index/key]. Not an assignable reference",
    hard=False,
)
issue(
    "ILLEGAL_ASSIGNMENT_VIA_INDEX",
    "Illegal attempt to assign to %{value} via [index/key]. Not an assignable reference",
)
issue(
    "APPENDS_DELETES_NO_LONGER_SUPPORTED",
    "The operator '%{operator}' is no longer supported. See http://links.puppet.com/remove-plus-equals",
)
issue("UNSUPPORTED_OPERATOR", "The operator '%{operator}' is not supported.")
issue("UNSUPPORTED_OPERATOR_IN_CONTEXT", "The operator '%{operator}' in %{value} is not supported.")
issue("NOT_RVALUE", "Invalid use of expression. %{value} does not produce a value", hard=False)
issue(
    "ILLEGAL_ATTRIBUTE_APPEND",
    "Illegal +> operation on attribute %{name}. This operator can not be used in %{parent}",
)
# Puppet has two issues with this code (ILLEGAL_SINGLE_TYPE_MAPPING: expected "Type",
# ILLEGAL_REGEXP_TYPE_MAPPING: expected "Tuple[Regexp,String]").
issue(
    "ILLEGAL_TYPE_MAPPING", "Illegal type mapping. Expected a %{expected} on the left side, got %{expression}"
)
issue(
    "ILLEGAL_PARAM_NAME",
    "Illegal parameter name. The given name '%{name}' does not conform to the naming rule /^[a-z_]\\w*$/",
)
issue(
    "ILLEGAL_VAR_NAME",
    "Illegal variable name, The given name '%{name}' does not conform to the naming rule "
    "/^((::)?[a-z]\\w*)*((::)?[a-z_]\\w*)$/",
)
issue(
    "ILLEGAL_NUMERIC_VAR_NAME",
    "Illegal numeric variable name, The given name '%{name}' must be a decimal value if it starts with a digit 0-9",
)
issue(
    "ILLEGAL_CLASSREF", "Illegal type reference. The given name '%{name}' does not conform to the naming rule"
)
issue(
    "ILLEGAL_HOSTNAME_CHARS",
    "The hostname '%{hostname}' contains illegal characters (only letters, digits, '_', '-', and '.' are allowed)",
)
issue("ILLEGAL_HOSTNAME_INTERPOLATION", "An interpolated expression is not allowed in a hostname of a node")
issue("ILLEGAL_EXPRESSION", "Illegal expression. %{expression} is unacceptable as %{feature} in %{container}")
issue("ILLEGAL_QUERY_EXPRESSION", "Illegal query expression. %{expression} cannot be used in a query")
issue("NOT_VIRTUALIZEABLE", "Resource Defaults are not virtualizable")
issue("CLASS_NOT_VIRTUALIZABLE", "Classes are not virtualizable", hard=False)
issue(
    "UNSUPPORTED_EXPRESSION",
    "Expressions of type %{expression} are not supported in this version of Puppet",
    hard=False,
)
issue(
    "ILLEGAL_DEFINITION_NAME", "Unacceptable name. The name '%{name}' is unacceptable as the name of %{value}"
)
issue(
    "ILLEGAL_DEFINITION_LOCATION",
    "Unacceptable location. The name '%{name}' is unacceptable in file '%{file}'",
    hard=False,
)
# Puppet words this "The <label> '<name>' ..." for a named definition, but named definitions are always
# acceptable top constructs, so only this form can occur.
issue(
    "ILLEGAL_TOP_CONSTRUCT_LOCATION",
    "This %{value} is unacceptable as a top level construct in this location",
    hard=False,
)
issue("CAPTURES_REST_NOT_LAST", "Parameter $%{param_name} is not last, and has 'captures rest'")
issue(
    "CAPTURES_REST_NOT_SUPPORTED",
    "Parameter $%{param_name} has 'captures rest' - not supported in %{container}",
)
issue(
    "ILLEGAL_EPP_PARAMETERS",
    "Ambiguous EPP parameter expression. Probably missing '<%-' before parameters to remove leading whitespace",
    hard=False,
)
issue(
    "IDEM_EXPRESSION_NOT_LAST",
    "This %{expression} has no effect. A value was produced and then forgotten "
    "(one or more preceding expressions may have the wrong form)",
    hard=False,
)
issue(
    "RESOURCE_WITHOUT_TITLE",
    "This expression is invalid. Did you try declaring a '%{name}' resource without a title?",
    hard=False,
)
issue(
    "IDEM_NOT_ALLOWED_LAST",
    "This %{expression} has no effect. %{container} can not end with a value-producing expression "
    "without other effect",
)
issue("RESERVED_WORD", "Use of reserved word: %{word}, must be quoted if intended to be a String value")
issue("FUTURE_RESERVED_WORD", "Use of future reserved word: '%{word}'", severity="deprecation", hard=False)
issue(
    "RESERVED_TYPE_NAME",
    "The name: '%{name}' is already defined by Puppet and can not be used as the name of %{expression}.",
)
issue(
    "ILLEGAL_NODE_INHERITANCE",
    "Node inheritance is not supported in Puppet >= 4.0.0. "
    "See http://links.puppet.com/puppet-node-inheritance-deprecation",
    hard=False,
)
issue("DUPLICATE_PARAMETER", "The parameter '%{param_name}' is declared more than once in the parameter list")
# Severity follows the `strict` setting (off: not reported; warning: Puppet 7's default; error).
issue("DUPLICATE_KEY", "The key '%{key}' is declared more than once", severity="warning", hard=False)
issue(
    "ILLEGAL_NONLITERAL_PARAMETER_TYPE",
    "The parameter '$%{name}' must be a literal type, not %{type_class}",
    severity="deprecation",
    hard=False,
)
# ours: Puppet 7.29+/8's literal evaluation of `-x` raises a Ruby NoMethodError for such values
issue(
    "LITERAL_NEGATION_FAILS",
    "Unary minus cannot be applied to %{value} (a Ruby %{ruby_class}): %{puppet} stops validating "
    "this manifest with a Ruby error here",
)
issue("DUPLICATE_DEFAULT", "This %{container} already has a 'default' entry - this is a duplicate")
issue("RESERVED_PARAMETER", "The parameter $%{param_name} redefines a built in parameter in %{container}")
issue(
    "MULTIPLE_ATTRIBUTES_UNFOLD", "Unfolding of attributes from Hash can only be used once per resource body"
)
issue(
    "NUMERIC_OVERFLOW",
    "%{expression} resulted in a value outside of Puppet Integer %{bound} range, got '%{value}'",
)
issue(
    "EXPRESSION_NOT_SUPPORTED_WHEN_SCRIPTING",
    "%{expr} is only available when compiling a catalog",
    hard=False,
)
issue(
    "EXPRESSION_NOT_SUPPORTED_WHEN_COMPILING", "%{expr} is not available when compiling a catalog", hard=False
)
# Heredoc `:syntax` checkers (Puppet raises these at once: validation stops there).
issue("ILLEGAL_JSON", "Invalid produced text having syntax: '%{syntax}'. %{detail}", hard=False)
issue("ILLEGAL_BASE64", "Invalid produced text having syntax: '%{syntax}'. %{detail}", hard=False)
issue("ILLEGAL_PP", "Invalid produced text having syntax: '%{syntax}'. %{detail}", hard=False)
issue("ILLEGAL_EPP", "Invalid produced text having syntax: '%{syntax}'. %{detail}", hard=False)
# Reading input files (puppet-xpp --validate); not raised by Puppet's validator.
issue("NO_SUCH_FILE_OR_DIRECTORY", "No such file or directory: %{file}")
issue("UNREADABLE_FILE", "Could not read file '%{file}': %{reason}")
# puppet-xpp's own: a file Puppet's reader rejects with Ruby's ArgumentError (message is Ruby's), and a
# failure inside puppet-xpp itself on one file (reported for that file; the batch goes on, exit status 2).
issue("INVALID_ENCODING", "invalid byte sequence in UTF-8")
issue("INTERNAL_ERROR", "Internal error (%{type}): %{reason}")
# --- end validator ---

_ARG = re.compile(r"%\{(\w+)\}")
# SYNTAX_ERROR's `where` argument when the parser met the end of the input (grammar/parser.py's _where)
END_OF_INPUT = "end of input"


def format_message(code: str, args: dict[str, Any] | None = None) -> str:
    template = ISSUES[code].template
    if not args:
        return template
    return _ARG.sub(lambda m: str(args.get(m.group(1), m.group(0))), template)


@dataclass
class Diagnostic:
    """One diagnostic: code + arguments (for re-formatting), rendered message, byte position."""

    code: str
    message: str
    offset: int | None
    length: int
    severity: str = "error"
    args: dict[str, Any] = field(default_factory=dict)
    file: str = ""

    @classmethod
    def make(
        cls,
        code: str,
        offset: int | None,
        length: int = 0,
        args: dict[str, Any] | None = None,
        severity: str | None = None,
        file: str = "",
    ) -> Diagnostic:
        args = args or {}
        return cls(
            code, format_message(code, args), offset, length, severity or ISSUES[code].severity, args, file
        )

    @property
    def puppet_positioned(self) -> bool:
        """Does Puppet report a line and column for this diagnostic?  Its parser raises a syntax error at
        the end of the input with the file only; the offset is kept for editors (where to show it)."""
        return self.offset is not None and not (
            self.code == "SYNTAX_ERROR" and self.args.get("where") == END_OF_INPUT
        )

    def line_col(self, locator: Any) -> tuple[int | None, int | None]:
        """Line and column as Puppet reports them (None, None: Puppet gives none)."""
        if not self.puppet_positioned:
            return None, None
        return locator.line_for_offset(self.offset), locator.pos_on_line(self.offset)

    def to_json(self, locator: Any) -> dict[str, Any]:
        line, col = self.line_col(locator)
        return {
            "severity": self.severity,
            "code": self.code,
            "message": self.message,
            "line": line,
            "column": col,
            "offset": self.offset,
            "length": self.length,
        }

"""The issue table: every diagnostic code with its default severity and message template.

Codes and message texts are Puppet 7's (they are what users and tools match on).  A template names its
arguments as ``%{name}``; :func:`format_message` fills them in.  ``hard`` issues cannot be demoted below
error.  The validator adds its own rows to ISSUES through :func:`issue`; nothing else holds messages.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field


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
issue("ILLEGAL_BOM", "Illegal %{format} Byte Order mark at beginning of input: %{bom} - remove these from the puppet source")
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
issue("ILLEGAL_UNICODE_ESCAPE",
      "Unicode escape '\\u' was not followed by 4 hex digits or 1-6 hex digits in {} or was > 10ffff",
      severity="warning", hard=False)
issue("UNRECOGNIZED_ESCAPE", "Unrecognized escape sequence '\\%{ch}'", severity="warning", hard=False)
issue("HEREDOC_UNCLOSED_PARENTHESIS", "Unclosed parenthesis after '@(' followed by '%{followed_by}'")
issue("HEREDOC_INVALID_SYNTAX", "Invalid syntax in heredoc expected @(endtag[:syntax][/escapes])")
issue("HEREDOC_EMPTY_ENDTAG", "Heredoc with an empty endtag")
issue("HEREDOC_INVALID_ESCAPE", "Invalid heredoc escape char. Only t, r, n, s,  u, L, $ allowed. Got '%{actual}'")
issue("HEREDOC_MULTIPLE_AT_ESCAPES", "An escape char for @() may only appear once. Got '%{escapes}'")
issue("HEREDOC_WITHOUT_TEXT", "Heredoc without any following lines of text")
issue("HEREDOC_WITHOUT_END_TAGGED_LINE", "Heredoc without end-tagged line")
issue("HEREDOC_DIRTY_MARGIN", "Heredoc with text in the margin is not allowed (line %{heredoc_line} in this heredoc)")
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
issue("PARSE_NOT_CALLABLE_WITHOUT_PARENS",
      "attempt to pass argument list to the function '%{name}' which cannot be called without parentheses")
issue("PARSE_ILLEGAL_COMMA", "illegal comma separated argument list")
issue("PARSE_TOO_DEEP", "Expression nesting too deep (more than %{limit} levels)")

_ARG = re.compile(r"%\{(\w+)\}")


def format_message(code: str, args: dict | None = None) -> str:
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
    args: dict = field(default_factory=dict)
    file: str = ""

    @classmethod
    def make(cls, code: str, offset: int | None, length: int = 0, args: dict | None = None,
             severity: str | None = None, file: str = "") -> "Diagnostic":
        args = args or {}
        return cls(code, format_message(code, args), offset, length,
                   severity or ISSUES[code].severity, args, file)

    def line_col(self, locator) -> tuple[int | None, int | None]:
        if self.offset is None:
            return None, None
        return locator.line_for_offset(self.offset), locator.pos_on_line(self.offset)

    def to_json(self, locator) -> dict:
        line, col = self.line_col(locator)
        return {"severity": self.severity, "code": self.code, "message": self.message,
                "line": line, "column": col, "offset": self.offset, "length": self.length}

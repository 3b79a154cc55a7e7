"""Lexer conformance: our tokens, warnings and errors against Puppet's own Lexer2 (oracle op ``lex``).

Every expectation comes from real Puppet.  For tokens lexed inside a heredoc, Puppet's offsets are
relative to its SubLocator; the ``lex`` op maps them with ``SubLocator#to_global`` (the mapping
Puppet's parser applies to the nodes built from them), and those global spans are what our tokens
must carry.  Puppet's internal SUBLOCATE token has no counterpart in our stream.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from puppet_xpp.grammar.lexer import MAX_DEPTH, Lexer, concat_end, name_start
from tests.conformance.corpus import corpus_files

# --------------------------------------------------------------------------------------------------
# comparison


def _linecol(data: bytes, off: int):
    line = data.count(b"\n", 0, off) + 1
    ls = data.rfind(b"\n", 0, off) + 1
    return line, len(data[ls:off].decode("utf-8", "surrogateescape")) + 1


def _ours(src: str, epp: bool, tasks: bool):
    lx = Lexer(src, epp=epp, tasks=tasks)
    toks = [(t.type, t.value, t.start_pos, t.end_pos) for t in lx.tokens()]
    return lx, toks


def _theirs(result):
    return [
        (t[0], t[1], t[4][0], t[4][0] + t[4][1]) if t[4] else (t[0], t[1], t[2], t[2] + t[3])
        for t in result["tokens"]
        if t[0] != "SUBLOCATE"
    ]


def compare(src: str, result: dict, epp: bool = False, tasks: bool = False) -> list[str]:
    """Differences between our lexer and Puppet's answer (empty: identical)."""
    data = src.encode("utf-8", "surrogateescape")
    lx, ours = _ours(src, epp, tasks)
    theirs = _theirs(result)
    problems = []
    err = result["error"]
    if err is None:
        if lx.error is not None:
            problems.append(f"we fail with {lx.error.code} at {lx.error.offset}, Puppet does not")
        if ours != theirs:
            for i, (a, b) in enumerate(zip(ours, theirs)):
                if a != b:
                    problems.append(f"token {i}: ours {a} Puppet {b}")
                    break
            else:
                problems.append(f"token count: ours {len(ours)} Puppet {len(theirs)}")
    else:
        assert err.get("issue_code"), f"Puppet crashed: {err}"  # crash cases are tested separately
        if lx.error is None:
            problems.append(f"Puppet fails with {err['issue_code']}, we do not")
        else:
            line, col = _linecol(data, lx.error.offset) if lx.error.offset is not None else (None, None)
            mine = (lx.error.code, line, col, lx.error.message)
            want = (err["issue_code"], err["line"], err["pos"], err["message"])
            if mine != want:
                problems.append(f"error: ours {mine} Puppet {want}")
        # Puppet yields tokens lazily; ours are computed eagerly, so Puppet's are a prefix of ours
        if ours[: len(theirs)] != theirs:
            problems.append(f"tokens before the error differ: ours {ours[: len(theirs)]} Puppet {theirs}")
    warnings = [
        (d.code, *_linecol(data, d.offset), d.message) for d in lx.diagnostics if d.severity == "warning"
    ]
    want_w = [tuple(w) for w in result["warnings"]]
    if warnings != want_w:
        problems.append(f"warnings: ours {warnings} Puppet {want_w}")
    return problems


# --------------------------------------------------------------------------------------------------
# the case table: (source, epp, tasks); expectations come from Puppet

OPS = (
    "a == b => c =~ d = e += f +> g + h -> i -= j - k != l !~ m ! n ~> o ~ p <<| q << r <= s <| t <- u <~ v"
    " < w >> x >= y > z |>> aa |> bb | cc || dd @@ ee @ ff % gg : hh . ii , jj ; kk ? ll * mm } ] )"
)
KW = (
    "and or in case default if elsif else unless class define inherits node undef true false function type"
    " attr private plan apply application site consumes produces"
)

PP = [
    # operators and punctuation, maximal munch
    OPS,
    "$a<-1",
    "$a<~1",
    "$x=-1",
    "1.e5",
    "0.5.foo",
    "1.2.3",
    "a|||b",
    "<<<|",
    "==>",
    "=>>",
    "!==",
    "-->",
    "$a+=1 $b-=2",
    "@@@",
    "@@(",
    "x%y",
    "a:b",
    "a::b:c",
    # keywords, names, words, class references
    KW,
    "a::b::c",
    "::a",
    "::a::b",
    "a-b",
    "a-",
    "a-b-",
    "_x",
    "x::_y",
    "a_-b",
    "a-b::c",
    "a::b-c",
    "a::b::C",
    "if::x",
    "x::if",
    "::if",
    "undef-x",
    "if_x",
    "aB9",
    "a1_b2",
    "_",
    "__",
    "a--b",
    "::_x",
    "::a-b",
    "Foo",
    "Foo::Bar",
    "::Foo",
    "::Foo::Bar",
    "Foo_bar9",
    "A::b",
    "A::3",
    "A::",
    "Foo::bar",
    "::A::b",
    "a::B::c",
    ":: ",
    "::3",
    "a::3",
    "a::$",
    "A",
    "Abc::Def::Ghi",
    # numbers
    "0",
    "00",
    "0777",
    "0x0",
    "0XAB",
    "0xab",
    "0.0",
    "10e23",
    "10e-23",
    "1.234e23",
    "2982383139",
    ".5",
    "1.",
    "+1",
    "08",
    "00.5",
    "038",
    "0x3g",
    "0x",
    "3g",
    "1_000",
    "12abc",
    "1e+5",
    "1.5e",
    "4.3g",
    "1e",
    "1é",
    "a1.5e",
    "1.2e5x",
    "0xG",
    "1E5",
    "0.5e-3",
    "9" * 30,
    "12.",
    "x 1.5e",
    "0.08",
    "01.5",
    "0e1",
    "5.5.5x",
    # variables
    "$x",
    "$::x",
    "$x::y",
    "$Abc",
    "$0x1",
    "$0080",
    "$a::_b",
    "$1abc",
    "$a-b",
    "$",
    "$ = 1",
    "$-x",
    "$a::b::c",
    "$_",
    "$x[1]",
    "$x.y",
    "$::x::y",
    # single-quoted strings
    "'abc'",
    "'a\\'b'",
    "'a\\\\b'",
    "'a\\nb'",
    "'a\nb'",
    "''",
    "'''",
    "''''",
    "'abc",
    "'\t\n\rabcdef",
    "'\\\\'",
    "'\\\\\\''",
    "'a' 'b'",
    "''\\\\'x'",
    "'é'",
    "'\\u0041'",
    # double-quoted strings and escapes
    '"abc"',
    '"a\\nb\\tc\\sd\\re"',
    '"\\$x"',
    '"\\""',
    '"\\\'"',
    '"\\q"',
    '"\\u0041"',
    '"\\u{1F600}"',
    '"\\u{41}\\u0042"',
    '"\\\\u0041"',
    '"\\u00"',
    '"\\u{}"',
    '"\\u{1234567}"',
    '"a\\\nb"',
    '"a\\\r\nb"',
    '"a\\\rb"',
    '"\\u005Cn"',
    '"\\u005C"',
    '"""',
    '""$x',
    '"$"',
    '"a$%b"',
    '"a$$"',
    '"$$x"',
    '"$${x}"',
    '"abc',
    '"abc\\\n',
    '"a\\q\\w\\e"',
    '"é\\q"',
    '"\\\\"',
    '"\\\\\\"',
    '"x\\',
    '"\\u{10FFFF}"',
    '"a\nb"',
    '"\\\n"',
    '"\\u0041\\u0042\\u0043"',
    '"\\u{5C}u0041"',
    '"$x\\q"',
    # interpolation
    '"$x"',
    '"a${b}c"',
    '"${x}"',
    '"${1}"',
    '"${0x10}"',
    '"${a-b}"',
    '"${case}"',
    '"${X}"',
    '"${x.foo}"',
    '"${x[1]}"',
    "\"${facts['os']}\"",
    '"${x.map |$v| { $v }}"',
    '"${x [1]}"',
    '"${x + 1}"',
    '"${x.foo.bar}"',
    '"$x[1]"',
    '"$x.y"',
    '"$x::y::"',
    '"${}"',
    '"a${ }b"',
    "\"${ {a => 1}['a'] }\"",
    '"${ $x ? { 1 => 2 } }"',
    '"${"${x}"}"',
    '"${ /x/ }"',
    '"${x} / 2"',
    '"${ # c\n x }"',
    '"${ /* c */ x }"',
    '"${x}${y}"',
    '"$x$y"',
    '"${x}$y${z}"',
    '"${"a"}"',
    "\"${'a'}\"",
    '"${x}" /a/',
    '"a" /b/',
    '"${ "$x" / 2 }"',
    '"${$x}"',
    '"${::x}"',
    '"${x::y}"',
    '"${x}}"',
    '"${{}}"',
    '"${undef}"',
    '"${1.5}"',
    '"${_x}"',
    '"${x-}"',
    '"${x.y}[1]"',
    '"${x[1][2]}"',
    '"${x(1)}"',
    '"${x.type}"',
    '"${type}"',
    '"${plan}"',
    '"${ x }"',
    '"${\nx\n}"',
    '"${x',
    '"${x\n  ',
    '"${x }',
    "\"${ 'abc' }",
    "\"${ 'abc'",
    '"${x+',
    '"${/* c */ ',
    '"$x',
    '"a$',
    '"${x}',
    '"${x}a',
    '"a$x b',
    '"${ "a"',
    '"${ "a" ',
    '"${ $y',
    '"${ 12 ',
    '"${ Foo',
    '"${ /r/',
    '"${x} ${y',
    # regex vs division
    "$a = 10 / 2 / 3",
    "} / 2 / 3",
    "$x = $y\n/a/",
    "/\\//",
    "/\\/",
    "if /x/ {}",
    "case $x { /a/: {} }",
    "$a =~ /a\nb/",
    "/a\\\\/ / /b/",
    "x / y",
    "[1] / 2",
    ") /a/",
    '"s" /a/',
    "/* c */ /a/",
    "$x = 1 # c\n/a/",
    "1 / 2",
    "Foo /a/",
    "true /a/",
    "undef /a/",
    "x- /a/",
    "{ /a/ }",
    "$x =~ /\\d+/",
    "/a/ /b/",
    "a=>/x/",
    "x and /y/",
    "/",
    "/x",
    "//",
    "$x / /y/",
    "/a\\\\\\/b/",
    "/\\/\\//",
    # [ ( { in context
    "$a[1]",
    "$a [1]",
    "[1]",
    "x\n[1]",
    "x\t[1]",
    "x\r[1]",
    "/* */[1]",
    "x\u00a0[1]",
    "é[1]",
    "foo (1)",
    "foo(1)",
    "foo\n(1)",
    "foo\n  (1)",
    "x\n/* c */ (1)",
    "notice 42.type\n(detailed)",
    "\t(1)",
    "a\r(1)",
    "(1)",
    "x\u3000(1)",
    "# c\n(1)",
    "x /* a\n*/\n(1)",
    "x\n \t\r(1)",
    "$x ? { 1 => 2 }",
    "$x ?{",
    "$x ? /* c */ {",
    "{",
    "$a = {}",
    "$x ? # c\n{",
    # comments and whitespace
    "# c",
    "# c\n$x",
    "/* c */",
    "/* a\nb */ x",
    "/* unclosed",
    "/* a */ /* b */",
    "x # c\r\ny",
    "#",
    "/**/",
    "/*/",
    "x/**/y",
    "\u00a0x",
    "x\u3000y",
    "\f",
    "\v",
    "\\",
    "`",
    "é",
    "x\u2028y",
    "\x00",
    "x\u2003y",
    "\r\n\r\n$x",
    "",
    "   ",
    "\n",
    "a\u200bb",
    "日本",
    # heredocs
    "$a = @(END)\nhello\nEND\n",
    "@(END)\n  hello\n  | END\n",
    "@(END)\nhello\n- END\n",
    "@(END)\n  hello\n  |- END\n",
    '@("END")\nhi $x ${y}\nEND\n',
    "@(END:json)\n{}\nEND\n",
    "@(END:json/t)\na\\tb\nEND\n",
    "@(END/)\n\\t\\n\\$x\\u0041\\\\\nEND\n",
    "@(END/L)\na\\\nb\nEND\n",
    "@(END/$)\n\\$x\nEND\n",
    '@("END"/$)\n\\$x $y\nEND\n',
    '@("END")\n\\$x\nEND\n',
    "@(Verse 8 of The Raven)\nx\nVerse 8 of The Raven\n",
    "@( END )\nx\nEND\n",
    '@(" END ")\n$x\nEND\n',
    "notice({ @(foo) => @(bar) })\nhello\n-foo\nworld\n-bar\n",
    "$x = [1, @(A), @(B)]\na\nA\nb\nB\n$y = 1 [2]",
    "@(END)\nxEND\n",
    "@(END)\n  x | END\n",
    "@(END)\n    a\n  b\n   c\n  | END\n",
    '@("END")\n    a${x}\n  b$y\n   c ${z}\n  |- END\n',
    '@("END")\n  ab${x}cd\n  ef $y gh\n  | END\n',
    '@("END")\n  ${x}\n  | END\n',
    '@("END")\n  $x\n  | END\n',
    '@("END")\n  a\n  ${x}\n  | END\n',
    "$a = @(END) + 1\nx\nEND\n$b",
    "@(END)\r\nx\r\nEND\r\n",
    '@("END")\n${[1]} ${(1)}\nEND\n',
    "@(END)\nEND",
    "@(END)\n\nEND\n",
    "@(END:yaml+json/n)\na\nEND\n",
    '@("END")\n  é ${x}\n  | END\n',
    '@("END")\n  a\n\t| END\n',
    "@(END)\n  a\n  |END\n",
    "@(END)\n|END\n",
    "@(END)\n a\n |-END\n",
    "@(END)\n  a\r\n  |- END\r\n",
    '@("END")\n  x ${"y"} z\n  | END\n',
    '@("END")\n${x}${y}\nEND\n',
    '@("END"/u)\n\\u{41}\nEND\n',
    "@(END/s)\na\\sb\nEND\n",
    "@(END/r)\na\\rb\\n\nEND\n",
    '@("END")\n  a$x\n  b\n  | END\n$z = 1',
    "@(END) @(END)\na\nEND\nb\nEND\n",
    'foo(@(A), "x\n")\na\nA\n',
    "@(END",
    "@(END:x)",
    "@(END/q)",
    "@(END/tt)",
    '@("")',
    "@()",
    "@(END)",
    "@(END)\nabc\n",
    "@(END/t:json)\nEND\n",
    "@(END:Json)\nEND\n",
    "@(:json)\nEND\n",
    "@(END)\n",
    "@(END/é)\nEND\n",
    "@(a\n@(b)\nx\nb\n",
    '@(")\nx\n"\n',
    "@(END)\n  a\n  | END",
    "@(END:json)\nEND\n",
    # where the heredoc text starts and where the line after @(...) continues
    '"${@(E)}\nx\nE\n"',
    '$a = "${@(E)}\nx\nE\n" 1',
    "@(E) # comment\nx\nE\n$y",
    "@(E) /* multi\nline */\nx\nE\n$y",
    "@(E) 'a\nb'\nx\nE\n$y",
    "@(E) 'a\nE\n' $z\n$y",
    "@(E)\nx\nE\n@(F)\ny\nF\n",
    "@(E) @(F)\nx\nE\n\ny\nF\n$q",
    "[@(E)]\nE\n(1)",
    "@(E) (1)\nE\n(1)",
    '"a\n${@(E)}" (1)\nq\nE\n(2)',
    '$a = @("E")\n\u3000ab${x}\n\u3000| E\n',
    "$a = @(E)\n\u00a0\u00a0x\n\u00a0\u00a0| E\n",
    '@("E")\n  \u65e5${x}\u672c\n  |-E\n',
    '"\U0001f600$x"',
    # misc
    "class a::b inherits c { }",
    "define foo($x = 1) { notify { 'x': message => \"${x}\" } }",
    "node /a\\.b/ { }",
    "Foo <| title == 'x' |>",
    "Foo <<| tag == 'x' |>>",
    "a -> b ~> c <- d <~ e",
    "$x = $y ? { default => 1 }",
    "unless $x { } elsif",
    "$h = { 'a' => 1, b => [2, 3] }",
    "function f(Integer $x) >> Integer { $x }",
    "type T = Integer[1, 2]",
    "@foo { 'x': } @@bar { 'y': }",
]
PP_TASKS = [KW, '"${plan}"', '"${apply}"', "plan foo() { }", "apply($x) { }", "$plan"]
EPP = [
    "a <% $x = 1 %> b",
    "<%= $x %>",
    "<%- $x -%>\n",
    "<%# c %>x",
    "a <%# c %>",
    "a <%%",
    "<%% %%>",
    "<%| $a |%>",
    " <%| $a |%>",
    "<%# x",
    "a <%",
    "<% $x = 1",
    "<%= 1 -%>  \n  b",
    "  <%#- c -%>  \nx",
    '<%= "${x}" %>',
    "<%- if $x { -%>\n  y\n<%- } -%>\n",
    "x%>y",
    "<%= $a % 2 %>",
    "<%-| $a |-%>\n",
    "a <% $x = 1 %> b <%- $y -%>  \n c <%= $z -%>\nd",
    "a %%> <%% b",
    "",
    "text only\n",
    "<%=$x%>",
    "<%= $x -%>",
    "<%# a -%>\nb",
    "<%#%>x",
    "<% %>",
    "<%%>",
    "<%= [1] %>",
    "<%= (1) %>",
    "<%=\n(1) %>",
    "<% if true { %>a<% } %>",
    "<%= @(END) %>\nx\nEND\n",
    "  <%- $x %>",
    "\t<%-= $x %>",
    "a\n<%- -%>\n\nb",
    "<%= 'a' -%>\r\nb",
    "<%= $x %> <%# c -%> \n  d",
    "<% $x = /a/ %>",
    "<%= 1 %%>",
    "<% $x %> %> x",
    "<%= $x - %>",
    "<%= $x -%%>",
    "<%= $x %",
]


def _cases():
    out = [(s, False, False) for s in PP]
    out += [(s, False, True) for s in PP_TASKS]
    out += [(s, True, False) for s in EPP]
    return out


CASES = _cases()


@pytest.fixture(scope="module")
def lexed(oracle):
    args = [{"source": s, "epp": e, "tasks": t} for s, e, t in CASES]
    return dict(zip([(s, e, t) for s, e, t in CASES], oracle.call_many("lex", args)))


@pytest.mark.parametrize(
    "src,epp,tasks",
    CASES,
    ids=[repr(c[0])[:60] + ("-epp" if c[1] else "") + ("-tasks" if c[2] else "") for c in CASES],
)
def test_case(lexed, src, epp, tasks):
    result = lexed[(src, epp, tasks)]
    assert isinstance(result, dict), result
    if result["error"] is not None and not result["error"].get("issue_code"):
        pytest.fail(f"Puppet crashes on this case; move it to CRASHES: {result['error']}")
    assert compare(src, result, epp, tasks) == []


LEXER_CODES = {
    "UNCLOSED_MLCOMMENT",
    "UNCLOSED_QUOTE",
    "ILLEGAL_CLASS_REFERENCE",
    "ILLEGAL_FULLY_QUALIFIED_CLASS_REFERENCE",
    "ILLEGAL_FULLY_QUALIFIED_NAME",
    "ILLEGAL_NUMBER",
    "INVALID_HEX_NUMBER",
    "INVALID_OCTAL_NUMBER",
    "INVALID_DECIMAL_NUMBER",
    "HEREDOC_UNCLOSED_PARENTHESIS",
    "HEREDOC_INVALID_SYNTAX",
    "HEREDOC_EMPTY_ENDTAG",
    "HEREDOC_INVALID_ESCAPE",
    "HEREDOC_MULTIPLE_AT_ESCAPES",
    "HEREDOC_WITHOUT_TEXT",
    "HEREDOC_WITHOUT_END_TAGGED_LINE",
    "EPP_UNBALANCED_TAG",
    "EPP_UNBALANCED_COMMENT",
    "EPP_UNBALANCED_EXPRESSION",
}
# Not in the table: ILLEGAL_BOM (test_bom), NO_INPUT_TO_LEXER and EPP_INTERNAL_ERROR (API misuse / internal
# states our Lexer cannot reach), ILLEGAL_NAME_OR_BARE_WORD and HEREDOC_DIRTY_MARGIN (Puppet never raises them).


def test_table_covers_every_lexer_issue(lexed):
    errors = {r["error"]["issue_code"] for r in lexed.values() if r["error"]}
    warnings = {w[0] for r in lexed.values() for w in r["warnings"]}
    assert LEXER_CODES <= errors, LEXER_CODES - errors
    assert {"ILLEGAL_UNICODE_ESCAPE", "UNRECOGNIZED_ESCAPE"} <= warnings


TOKEN_TYPES = set(
    """STRING WORD NAME CLASSREF VARIABLE NUMBER REGEX BOOLEAN DQPRE DQMID DQPOST HEREDOC EPP_START
RENDER_STRING RENDER_EXPR EPP_END EPP_END_TRIM OTHER AND OR IN CASE DEFAULT IF ELSIF ELSE UNLESS CLASS DEFINE INHERITS
NODE UNDEF FUNCTION TYPE ATTR PRIVATE PLAN APPLY ISEQUAL FARROW MATCH EQUALS APPENDS PARROW PLUS IN_EDGE DELETES
MINUS NOTEQUAL NOMATCH NOT IN_EDGE_SUB TILDE LLCOLLECT LSHIFT LESSEQUAL LCOLLECT OUT_EDGE OUT_EDGE_SUB LESSTHAN
RSHIFT GREATEREQUAL GREATERTHAN RRCOLLECT RCOLLECT PIPE ATAT AT MODULO DIV COLON LISTSTART LBRACK WSLPAREN LPAREN
SELBRACE LBRACE RBRACE RBRACK RPAREN DOT COMMA SEMIC QMARK TIMES""".split()
)


def test_table_covers_every_token_type(lexed):
    seen = {t[0] for r in lexed.values() for t in r["tokens"]}
    assert TOKEN_TYPES <= seen, TOKEN_TYPES - seen
    assert seen - TOKEN_TYPES == {"SUBLOCATE"}


# --------------------------------------------------------------------------------------------------
# Puppet crashes on these; we report an issue instead (decisions documented in grammar/lexer.py)

CRASHES = [
    # (source, Puppet's exception class, our expected error code or None for "no error", check)
    ("::", "NoMethodError", "ILLEGAL_FULLY_QUALIFIED_NAME"),
    ("a::", "NoMethodError", "ILLEGAL_FULLY_QUALIFIED_NAME"),
    ("$a::", "NoMethodError", "ILLEGAL_FULLY_QUALIFIED_NAME"),
    ("::A::", "RangeError", "ILLEGAL_FULLY_QUALIFIED_CLASS_REFERENCE"),
    ("$x::y::", "NoMethodError", "ILLEGAL_FULLY_QUALIFIED_NAME"),
    ("$::", "NoMethodError", "ILLEGAL_FULLY_QUALIFIED_NAME"),
    # any heredoc inside a heredoc: Puppet's eager end-of-file error cannot compute its column
    ('$a = @("A")\n  ${@(B)}\n  | A\n  b\n  | B\n', "NoMethodError", "HEREDOC_WITHOUT_END_TAGGED_LINE"),
    ('$a = @("A")\n${@(B)\nb\nB\n}\nA\n', "NoMethodError", None),
    ('$x = "\\u{D800}"', "ArgumentError", "ILLEGAL_UNICODE_ESCAPE"),
    ('$x = "\\u{110000}"', "ArgumentError", "ILLEGAL_UNICODE_ESCAPE"),
    ('@("END")\n  ab${"x}\n  | END\n', "NoMethodError", "UNCLOSED_QUOTE"),
    ("@(END/u)\n  ab\\uZZ\n  | END\n", "NoMethodError", None),
    ('@("END")\n  ab\n  ${3g}\n  | END\n', "NoMethodError", "ILLEGAL_NUMBER"),
    ('$a = @("END"/$)\n  a\\\n  -END\n', "NoMethodError", None),
]


@pytest.fixture(scope="module")
def crashed(oracle):
    return oracle.call_many("lex", [{"source": s} for s, _, _ in CRASHES])


@pytest.mark.parametrize("i", range(len(CRASHES)), ids=[repr(c[0])[:40] for c in CRASHES])
def test_puppet_crash_cases(crashed, i):
    src, cls, code = CRASHES[i]
    err = crashed[i]["error"]
    assert err is not None and err.get("class") == cls and not err.get("issue_code"), err
    lx = Lexer(src)
    lx.tokens()
    if code is None:
        assert lx.error is None
    else:
        assert lx.error is not None and lx.error.code == code


def test_crash_case_positions():
    # '::' at the end: the error is where Puppet reports it for ':: ' (after the '::')
    lx = Lexer("$a::")
    lx.tokens()
    assert (lx.error.offset, [t.type for t in lx.tokens()]) == (4, ["VARIABLE"])
    # a warning inside a heredoc is placed at the mapped global offset of the end of its text part
    lx = Lexer("@(END/u)\n  ab\\uZZ\n  | END\n")
    lx.tokens()
    assert [(d.code, d.offset, d.severity) for d in lx.diagnostics] == [
        ("ILLEGAL_UNICODE_ESCAPE", 18, "warning")
    ]
    lx = Lexer('$a = "${true}" "${false.x}"')
    assert [(t.type, t.value) for t in lx.tokens()][3:4] == [("VARIABLE", "true")]
    assert [(t.type, t.value) for t in lx.tokens()][6:7] == [("VARIABLE", "false")]


def test_float_overflow(oracle):
    # Puppet's lexer accepts 1e400 and its parser then fails with an internal error; we report it.
    res = oracle.call("lex", source="$a = 1e400")
    assert res["error"] is None and res["tokens"][-1][:2] == ["NUMBER", "1e400"]
    crash = oracle.request("parse", source="$a = 1e400")
    assert not crash["ok"] and "NUMBER token does not contain a valid number" in crash["error"]
    lx = Lexer("$a = 1e400")
    lx.tokens()
    assert (lx.error.code, lx.error.offset, lx.error.message) == (
        "INVALID_DECIMAL_NUMBER",
        5,
        "Not a valid decimal number 1e400",
    )


# --------------------------------------------------------------------------------------------------
# byte order marks (raw bytes, so through files)

BOMS = [
    b"\xef\xbb\xbf",
    b"\xfe\xff",
    b"\xff\xfe",
    b"\x00\x00\xfe\xff",
    b"\xff\xfe\x00\x00",
    b"\xf7\x64\x4c",
    b"\xdd\x73\x66\x73",
    b"\x0e\xfe\xff",
    b"\xfb\xee\x28",
    b"\x84\x31\x95\x33",
    b"\xef\xbb",
    b"\xfe",
]


@pytest.mark.parametrize("bom", BOMS, ids=[b.hex() for b in BOMS])
def test_bom(oracle, bom, tmp_path):
    data = bom + b"$x = 1\n"
    path = tmp_path / "bom.pp"
    path.write_bytes(data)
    res = oracle.call("lex", file=str(path))
    lx = Lexer(data.decode("utf-8", "surrogateescape"))
    lx.tokens()
    err = res["error"]
    if err is not None and not err.get("issue_code"):
        # not a byte order mark, but invalid UTF-8: Puppet fails with an ArgumentError before lexing;
        # we lex the bytes (as OTHER tokens, which the parser rejects)
        assert err["class"] == "ArgumentError" and "invalid byte sequence" in err["message"]
        assert lx.error is None and "OTHER" in [t.type for t in lx.tokens()]
    elif err is None:
        assert lx.error is None
        assert compare(data.decode("utf-8", "surrogateescape"), res) == []
    else:
        assert lx.error is not None and lx.error.offset is None
        assert (lx.error.code, lx.error.message) == (err["issue_code"], err["message"])
        assert lx.error.args["format_name"] == err["arguments"]["format_name"]
        assert lx.error.args["bytes"] == err["arguments"]["bytes"]


# --------------------------------------------------------------------------------------------------
# robustness


def test_deep_nesting_is_capped():
    src = '"${' * 5000 + "x" + '}"' * 5000
    lx = Lexer(src)
    lx.tokens()
    assert lx.error is not None and lx.error.code == "PARSE_TOO_DEEP"
    ok = '"${' * (MAX_DEPTH - 1) + "x" + '}"' * (MAX_DEPTH - 1)
    lx = Lexer(ok)
    lx.tokens()
    assert lx.error is None


def test_deep_heredoc_nesting_is_capped():
    src = "".join(f'@("E{i}")\n${{' for i in range(300))
    lx = Lexer(src)
    lx.tokens()
    assert lx.error is not None


def test_random_bytes_never_raise():
    rnd = random.Random(1234)
    alphabet = list(b"$\"'{}[]()@/\\*#%<>=-|:;,.?!~\n\r\t 0123456789abcxyzABC_`^&") + list(range(256))
    for _ in range(3000):
        n = rnd.randrange(0, 40)
        data = bytes(rnd.choice(alphabet) for _ in range(n))
        text = data.decode("utf-8", "surrogateescape")
        for epp in (False, True):
            lx = Lexer(text, epp=epp)
            toks = lx.tokens()
            size = len(data)
            for t in toks:
                assert 0 <= t.start_pos <= t.end_pos <= size, (text, t)
            assert (lx.error is None) or lx.diagnostics[-1] is lx.error


def test_random_fragments_match_puppet(oracle):
    """Random splices of Puppet fragments, checked against Puppet (seeded, so repeatable)."""
    rnd = random.Random(99)
    parts = [
        '"',
        "'",
        "${",
        "}",
        "{",
        "$x",
        "$",
        "\\",
        "\\n",
        "/",
        "/*",
        "*/",
        "#",
        "\n",
        " ",
        "@(E)",
        "E",
        "| E",
        "-",
        "%>",
        "<%",
        "<%=",
        "a",
        "A",
        "::",
        "1",
        "0x",
        ".",
        "[",
        "(",
        "?",
        "=>",
        "é",
        "\t",
        "\\u0041",
        "\\u{",
        '@("E")',
        "|",
        "e5",
        "->",
    ]
    srcs = ["".join(rnd.choice(parts) for _ in range(rnd.randrange(1, 12))) for _ in range(400)]
    cases = [(s, e) for s in srcs for e in (False, True)]
    results = oracle.call_many("lex", [{"source": s, "epp": e} for s, e in cases])
    bad = []
    for (src, epp), res in zip(cases, results):
        if res["error"] is not None and not res["error"].get("issue_code"):
            continue  # Puppet crashed (see CRASHES)
        if any(w for w in res["warnings"]) and "@(" in src:
            continue
        p = compare(src, res, epp)
        if p:
            bad.append((src, epp, p))
    assert bad == []


def _heredoc_source(rnd):
    heads = [
        "@(E)",
        '@("E")',
        "@(E/)",
        '@("E"/)',
        "@(E/L)",
        '@("E"/$)',
        "@(E:json)",
        '@("E":x+y/tn)',
        "@( E )",
        "@(E/u)",
    ]
    body = [
        "a",
        "${x}",
        "$y",
        " ",
        "  ",
        "\t",
        "\\n",
        "\\$",
        "\\\\",
        "\\u0041",
        "\\",
        '${"q"}',
        "${[1]}",
        "${ (1) }",
        "\u00e9",
        "\r",
        "$",
        "${x.y}",
        "${/r/}",
        "${1}",
        "-",
        "|",
        "'",
        '"',
        "#",
        "/*c*/",
        "${ {a=>1} }",
    ]
    ends = ["E", "|E", "| E", "-E", "|-E", " | E", "  |  -  E  ", "\t| E", "xE", "E  ", "E\r"]
    hs = [rnd.choice(heads) for _ in range(rnd.randrange(1, 3))]
    out = ["$a = [" + ", ".join(hs) + rnd.choice(["", " + 1", ' "${z}"', " [1]", " (2)", " /r/"]) + "]\n"]
    for _ in hs:
        margin = rnd.choice(["", " ", "  ", "\t", "    "])
        for _ in range(rnd.randrange(0, 4)):
            out.append(
                rnd.choice([margin, margin, "", " "])
                + "".join(rnd.choice(body) for _ in range(rnd.randrange(0, 6)))
                + rnd.choice(["\n", "\r\n"])
            )
        out.append(margin + rnd.choice(ends) + rnd.choice(["\n", "", "\r\n"]))
    out.append(rnd.choice(["", "$b = 1", "(1)", "[1]", '"${x}"']))
    return "".join(out)


def _epp_source(rnd):
    text = ["a", " ", "  ", "\t", "\n", "\r\n", "%>", "%%>", "<%%", "%", "<", "\u00e9", "-", "#"]
    opens = ["<%", "<%=", "<%-", "<%#", "<%#-", "<%|", "<%-|", "<%%"]
    code = [
        "$x",
        " ",
        "\n",
        "1",
        "+",
        '"${y}"',
        "'s'",
        "{",
        "}",
        "|",
        "[1]",
        "(1)",
        "/r/",
        "# c\n",
        "/* c */",
        "-",
        "%",
        "if",
        "@(E)\nx\nE\n",
    ]
    closes = ["%>", "-%>", "%%>", " -%>", "|%>", "|-%>", ""]
    out = []
    for _ in range(rnd.randrange(1, 5)):
        out.append("".join(rnd.choice(text) for _ in range(rnd.randrange(0, 4))))
        out.append(rnd.choice(opens))
        out.append("".join(rnd.choice(code) for _ in range(rnd.randrange(0, 4))))
        out.append(rnd.choice(closes))
    out.append("".join(rnd.choice(text) for _ in range(rnd.randrange(0, 4))))
    return "".join(out)


@pytest.mark.parametrize("kind", ["heredoc", "epp"])
def test_generated_sources_match_puppet(oracle, kind):
    """Generated heredoc files (margins, escapes, several per line, interpolation) and EPP templates
    (tags, trimming, comments), checked against Puppet (seeded, so repeatable)."""
    rnd = random.Random(7)
    gen, epp = (_heredoc_source, False) if kind == "heredoc" else (_epp_source, True)
    srcs = [gen(rnd) for _ in range(400)]
    results = oracle.call_many("lex", [{"source": s, "epp": epp} for s in srcs])
    bad = []
    for src, res in zip(srcs, results):
        if res["error"] is not None and not res["error"].get("issue_code"):
            continue  # Puppet crashed (lexer issue inside a heredoc text, see CRASHES)
        p = compare(src, res, epp)
        if p:
            bad.append((src, p))
    assert bad == []


# --------------------------------------------------------------------------------------------------
# heredoc DQPOST / ConcatenatedString ends against Puppet's model positions


HEREDOC_MODEL = [
    '$a = @("END")\n  ab${x}cd\n  ef $y gh\n  | END\n',
    '$a = @("END")\n    a${x}\n  b$y\n   c ${z}\n  |- END\n',
    '$a = @("END")\n  ${x}\n  | END\n',
    '$a = @("END")\n  $x\n  | END\n',
    '$a = @("END")\n  $x::y is $z\n    | END\n',
    '$a = @("END")\n  a\n  ${x}\n  | END\n',
    '$a = @("END")\n  x ${"y${z}"} z\n  | END\n',
    '$a = @("END")\n  \u00e9 ${x}\n  | END\n',
    '$a = @("END")\n  a${x}\n  |- END\n',
    'notice(@("A"), @("B"))\n  a${x}\n  | A\n    b${y}c\n    |-B\n',
    '$a = @("END")\n\tx${y}\n\t| END\n',
    '$a = @("END")\n  x${y}\n  y\n   | END\n',
    '$a = @("END")\n  x${y}\r\n  z\r\n  |- END\r\n',
    '$a = @("END")\n  x${y}\n z\n  | END\n',
    '$a = @("END")\nx${y}\nEND\n',
]


@pytest.mark.parametrize("src", HEREDOC_MODEL)
def test_heredoc_derived_positions_match_puppet_model(oracle, src):
    """The two positions not derivable from a heredoc token's own span: a ConcatenatedString's end
    (concat_end of its DQPOST) and the QualifiedName in a leading $x (name_start), against the
    positions of Puppet's model."""
    pos = oracle.call("positions", source=src)
    toks = Lexer(src).tokens()
    checked = 0
    for i, t in enumerate(toks):
        if t.type != "HEREDOC" or toks[i + 1].type != "DQPRE":
            continue
        nest = 0
        for j in range(i + 1, len(toks)):
            nest += {"DQPRE": 1, "DQPOST": -1}.get(toks[j].type, 0)
            if nest == 0:
                break
        pre, post = toks[i + 1], toks[j]
        assert ["ConcatenatedString", pre.start_pos, concat_end(post) - pre.start_pos] in pos
        checked += 1
        if toks[i + 2].type == "VARIABLE" and toks[i + 2].start_pos == pre.start_pos:
            v = toks[i + 2]
            k = pos.index(["VariableExpression", v.start_pos, v.end_pos - v.start_pos])
            assert pos[k + 1] == ["QualifiedName", name_start(v), v.end_pos - v.start_pos - 1]
    assert checked


# --------------------------------------------------------------------------------------------------
# the corpus

PP_FILES = corpus_files("pp")
EPP_FILES = corpus_files("epp")


def _read(path: str) -> str:
    return Path(path).read_bytes().decode("utf-8", "surrogateescape")


@pytest.fixture(scope="module")
def corpus_lexed(oracle):
    files = PP_FILES + EPP_FILES
    return dict(zip(files, oracle.call_many("lex", [{"file": f} for f in files])))


@pytest.mark.skipif(not PP_FILES and not EPP_FILES, reason="corpus not installed")
def test_corpus(corpus_lexed):
    bad = {}
    tokens = 0
    for path, res in corpus_lexed.items():
        if res["error"] is not None and not res["error"].get("issue_code"):
            bad[path] = [f"Puppet crashed: {res['error']}"]
            continue
        p = compare(_read(path), res, epp=path.endswith(".epp"))
        tokens += len(res["tokens"])
        if p:
            bad[path] = p
    print(
        f"\ncorpus: {len(corpus_lexed) - len(bad)}/{len(corpus_lexed)} files identical, {tokens} Puppet tokens"
    )
    assert bad == {}

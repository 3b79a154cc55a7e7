"""Small Puppet sources covering every construct and lexer rule of language.md §1–§2.

Only the sources live here; the expected answers are always asked of real Puppet (see the tests).
"""

CASES = [
    # literals
    "42", "0x2A", "052", "0", "00", "0777", "0XAB", "1.5", "10e23", "10e-23", "1.234e23", "0.0005", "2982383139",
    "'s'", '"s"', "true", "false", "undef", "default", "/re/", "/x\\/y\\.z/", "/a\nb/", "foo", "a::b", "::a::b",
    "Foo", "::Foo::Bar", "Foo::Bar", "$x", "$::a::b", "$1", "$0", "$_x", "$a::_b", "attr", "private",
    "[1, 2,]", "[]", "[ ]", "{a => 1,}", "{}", "{ }", "{'a' => 1, 'b' => [2]}",
    "'it''s'", "'a\\'b\\\\c\\n'", '"a\\tb\\nc\\sd\\$e\\"f\\\\g"', '"\\u0041\\u{1F600}x"', '"héllo ${x} wörld"',
    # operators and precedence
    "1 + 2 * 3", "(1 + 2) * 3", "1 - 2 - 3", "2 * 3 % 4 / 5", "1 << 2 >> 3", "1 < 2 == 3", "1 == 2 > 3",
    "$a + $b in $c", "$b in $c =~ $d", "$b =~ $c * $d", "!$x == $y", "-$x[1]", "!$x.foo", "- 1", "-1", "-0x10",
    "$a and $b or $c and $d", "$a or $b and $c", "!!$a", "*$a", "$a !~ /x/", "$a != $b", "$a >= $b", "$a <= $b",
    "1 + $x ? {1=>2} * 3", "$x ? {1=>2}[0]", "$x ? {1=>2} ? {3=>4}", "$x ? 1 => 2 == 3", "$x ? { default => 1, }",
    "$x ? { 'a' => 1, /b/ => 2, default => 3 }", "$a and $x ? {1 => 2}", "$x = $y ? a => b",
    "$x = 1", "$x = $y = 2", "[$a, $b] = [1, 2]", "$a += 1", "$a -= 1", "$x = a -> b", "a -> b -> c",
    "a ~> b <- c <~ d", "$a<-1", "notice -1",
    # calls
    "notice(1)", "notice(1,)", "notice()", "notice 1", "notice 1, 2", "include a, b", "notice hello world",
    "notice 1, notice 2", "$a = notice 1", "notice {a => 2}", "foo(a=>1, b=>2)", "[1, a=>2, b=>3, 4]",
    "foo({a=>1}, b=>2)", "$x.foo", "$x.foo()", "$x.foo(1)", "$x.foo(1, 2).bar", "$x.type", "type(1)",
    "$a.each |$x| { notice $x }", "$a.each() |$x| { }", "$a.map |$k, $v| { $k }", "foo(1) |$x| { 1 }",
    "foo() |$x, Integer $y = 1, *$z| >> String { 1 }", "$a.each |$x| >> Integer[1,2] { 1 }",
    "notice foo(1) |$x| {}", "foo(1)(2)", "Integer(1)", "Integer[1](2)", "$x(1)", "'s'(1)",
    "foo (1)", "foo\n(1)", "x\n/* c */ (1)", "notice 42.type\n(detailed)", "1.e5", "0.5.foo",
    "$x[1]", "$x [1]", "$x[1,2]", "$x[1][2]", "T[a => 1]", "Hash[String, Integer]", "$facts['os']['family']",
    # strings and interpolation
    '"${x}"', '"$x"', '"${x.foo}"', '"${x[1]}"', "\"${facts['os']}\"", '"${x + 1}"', '"${1}"', '"$x[1]"',
    '"$x.y"', '"$x::y::"', '"${::x}"', '"a${x}b$y"', '"$"', '"a$%b"', '"${x.map |$v| { $v }}"', '"${X}"',
    '"${x.foo.bar}"', '"${case}"', '"${$x}"', '"${"${x}"}"', '"${a}${b}"', '"x${a}"', '"${a}x"',
    "\"${ {a => 1}['a'] }\"", '"${x [1]}"', '"abc\\\n def"',
    # heredoc
    "@(END)\nhello\nEND\n", "@(END)\n  hello\n  |-END\n", "@(END)\n  a\n   b\n  | END\n",
    "@(\"END\")\nhello ${x} and $y\nEND\n", "@(END:json)\n{}\nEND\n", "@(END/t)\na\\tb\nEND\n",
    "@(END/)\na\\tb\\$c\\u0041\nEND\n", "notice({ @(foo) => @(bar) })\nhello\n-foo\nworld\n-bar\n",
    "$a = @(END)\n  x\n  - END\nnotice($a)", "@(Verse 8 of The Raven)\nx\nVerse 8 of The Raven\n",
    "@(\"END\"/L)\na \\\nb ${x}\nEND\n", "notice(@(A), @(B))\na\n|-A\nb\n|-B\n",
    # resources
    "file { 'a': }", "file { 'a': , }", "file { 'a': k => v, k2 +> v2; 'b': }", "file { 'a': ensure => file;}",
    "@file { 'a': }", "@@file { 'a': }", "@@ file { 'a': }", "class { 'x': p => 1 }", "class { 'x': ; 'y': }",
    "File { k => v }", "File['a'] { k => v }", "File['a','b'] { k => v }", "Resource[File] { k => v }",
    "@File { k => v }", "@@File['x'] { k => v }", "file { default: mode => 1; 'a': }", "file { ['a','b']: }",
    "file { $t: }", "$x { 'a': }", "\"file\" { 'a': }", "File { 'a': }", "file { 'a': * => $h }",
    "file { 'a': and => 1, case => 2, class => 3, default => 4, define => 5, else => 6, elsif => 7, if => 8 }",
    "file { 'a': in => 1, inherits => 2, node => 3, or => 4, undef => 5, unless => 6, type => 7, attr => 8 }",
    "file { 'a': function => 1, private => 2, plan => 3, apply => 4 }",
    "notify { message => 'x' }", "file { }", "$x = 1 + file { a: }", "a -> b { t: }", "file { 'a': } -> file { 'b': }",
    "File <| |>", "File <| tag == 'x' |>", "File <<| |>>", "File <<| tag == \"x\" |>> { owner => root }",
    "File <| a == 1 or b == 2 and c != 3 |> { mode => 1, }", "File <| (a == 1) |>", "File <| |> -> File <| |>",
    "Package['a'] -> Service['b']",
    # conditionals
    "if $x { 1 }", "if $x { 1 } else { 2 }", "if $x { 1 } elsif $y { 2 } else { 3 }", "if ($x) {}", "if $x {} else {}",
    "if $x { 1 2 }", "if $x { $a = 1 $b = 2 } elsif $y { 3 } elsif $z { }", "unless $x { 1 }",
    "unless $x { 1 } else { 2 }", "unless $x {}", "case $a { 1, 2: {} default: { 3 } }",
    "case $a { /x/: { 1 } [1]: { 2 } {a=>1}: {} }", "case $a { 1: { $b = 1 $c = 2 } }",
    "if /x/ { }", "notice(1) if $x { } else { 2 }",
    # definitions
    "class a {}", "class a { }", "class a::b inherits c { 1 }", "class a($x, Integer $y = 1) { notice($x) }",
    "class a inherits default {}", "class a($x,) {}", "class a() {}", "class a (\n$x) {}",
    "class a { class b { define c {} } }", "define a { define b {} }", "class a { function b() {} }",
    "define a($x = 1) { notify { $x: } }", "define foo-bar {}", "class Foo {}", "class ::foo {}",
    "node default {}", "node 'a', /b/, default {}", "node kermit.example.com {}", "node a.01.b {}", "node 1.2.3 {}",
    "node kermit . example . com {}", "node a-b {}", "node a, b, {}", "node a inherits b {}", "node \"a${x}\" {}",
    "function f() {}", "function f($x) >> Integer { $x }", "function f(String $x, *$y) { 1 }",
    "function f() >> Optional[Integer[1,2]] {}", "function a::b(Array[String] $x = []) {}",
    "type T = Integer", "type T = Integer[1,2]", "type T = Integer[1,2,]", "type T = Object {attributes => {}}",
    "type T = Object[{}]", "type T = {a => 1}", "type T = [1, 2]", "type T = Foo { x => 1 }",
    "type T = TypeSet { types => {} }", "type T[1] = Integer", "type Foo::Bar = String",
    "type T {}", "type T inherits U { 1 }", "$a = class x {}", "class a { class b {} define d() {} } function f() {} "
    "node default {} type T = Integer",
    "class a { 1 }", "function f() { 1 }", "define d { }",
    # statements and separators
    "$a = 1\n$b = 2", "$a = 1; $b = 2", "notice(1); notice(2)", "", "# just a comment\n", "/* c */",
    "$a = 1 # c\n/* d\ne */ $b = 2", "{ a => 1 } $b = 1", "1; $a = 10", "emerg \"x\"",
    "$x = [\n  1,\n  2,\n]", "$x = {\n  'a' => 1,\n}\n", "  \t\n$x = 1\r\n",
    # unicode and positions
    "$x = 'héllo' # é\nnotice($x)", "notice('日本') $y = \"ü${z}ü\"", "$a = 1\n\n\n$b = [1,\n 2]",
]

TASK_CASES = [
    "plan p() {}", "plan p($x = 1) { apply('h') { notice(1) } }", "plan a::b { $r = run_task('x', $t) }",
    "apply($t,) { }", "class a { plan b {} }", "$x = plan", "file { 'a': plan => 1, apply => 2 }",
]

ERROR_CASES = [
    "notice(1);", "class a { $a = 1; }", "$a = 1;;", "$x.foo(1,)", "foo |$x| {}", "+1", "$a and not $b",
    "else if", "class { }", "class { a => 1 }", "$x = $y { a => 1 }", "notice a => 2", "foo 10, 3",
    "$a = 10, 3", "notice(1), 2", "@file { mode => 1 }", "file { k +> v }", "$y { k => v }", "foo() { k => v }",
    "class class {}", "define class {}", "class a inherits class {}", "class 'foo' {}", "class a inherits \"b\" {}",
    "type foo = Integer", "type MyInt = integer", "type T = $x", "case $a { }", "$a ? { }", "if $x { ; }",
    "unless $x { } elsif $y { }", "node A {}", "node $x {}", "define foo::Bar {}", "[,]", "{,}", "{a => 1;}",
    "$b[]", "Array[String,] $x", "function f(Array[String,] $x) {}", "$a.class", "true => 1",
    "file { 'a': a-b => 1 }", "'a' => 'b' => 1", "\"${}\"", "\"a${ }b\"", "1.2.3", "x ~ y", "a\\b",
    "$x = [1\n$y = 2", "class a {\n  notice(1)\n", "notice('a'\n", "}", "$x = 'abc",
]

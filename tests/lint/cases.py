"""Small manifests, each aimed at one puppet-lint check (or a control comment, or a lexing corner).

The expected problems and fixed text are never written here: the tests ask puppet-lint (the oracle op
``lint``) for them. A case is (name, source) and optionally a file name for the layout check.
"""

from __future__ import annotations

CASES: list[tuple[str, str]] = [
    # arrow_on_right_operand_line
    ("arrow_right", "Package['a'] ->\nService['b']\n"),
    ("arrow_right_sub", "Package['a'] ~>\n  Service['b']\n"),
    ("arrow_right_ok", "Package['a']\n-> Service['b']\n"),
    ("arrow_right_trailing_ws", "Package['a'] -> \nService['b']\n"),
    # autoloader_layout (file name from the table below)
    ("layout_class", "class foo::bar {\n}\n"),
    ("layout_define", "define foo::baz() {\n}\n"),
    # class_inherits_from_params_class (disabled by default) / inherits_across_namespaces
    ("inherits_params", "# doc\nclass foo inherits foo::params {\n}\n"),
    ("inherits_across", "# doc\nclass foo inherits bar {\n}\n"),
    ("inherits_same", "# doc\nclass foo::a inherits foo {\n}\n"),
    # code_on_top_scope (disabled)
    ("top_scope", "$x = 1\n# doc\nclass foo {\n}\nnotice($x)\n"),
    # names
    ("name_dash", "# doc\nclass foo-bar {\n}\n"),
    ("name_upper", "# doc\nclass Foo::Bar {\n}\n"),
    ("name_upper_define", "# doc\ndefine foo::Bar() {\n}\n"),
    # nested_classes_or_defines
    ("nested", "# doc\nclass foo {\n  class bar {\n  }\n  define baz() {\n  }\n  class { 'x': }\n}\n"),
    # parameter_order
    (
        "param_order",
        "# doc\nclass foo($a = 1, $b, String $c, Optional[String] $d, $e = {}, Integer $f) {\n}\n",
    ),
    ("param_order_ok", "# doc\ndefine foo($b, $a = 1) {\n}\n"),
    # right_to_left_relationship
    ("rtl", "Service['a'] <- Package['b']\n"),
    # variable_scope
    (
        "var_scope",
        "# doc\nclass foo($p) {\n  $local = 1\n  notice($p, $local, $other, $::top, $facts['x'], $name)\n"
        "  [$a, $b] = [1, 2]\n  notice($a, $b)\n  $arr.each |$i| {\n    notice($i, $j)\n  }\n}\n",
    ),
    # comments
    ("star_comment", "# doc\nclass foo {\n  /* a comment\n   * more\n   */\n  $x = 1\n}\n"),
    ("star_comment_one", "/* one line */\n$x = 1\n"),
    ("slash_comment", "// a comment\n$x = 1 // after code\n$y = '//' // don't\n"),
    ("slash_comment_crlf", "$x = 1 // c\r\n$y = 2\r\n"),
    ("slash_comment_control", '$x = "a" // lint:ignore:double_quoted_strings\n'),
    # case_without_default
    ("case_no_default", "case $x {\n  'a': {}\n}\n"),
    ("case_default", "case $x {\n  'a': {}\n  default: {}\n}\n"),
    ("case_nested", "case $x {\n  'a': {\n    case $y {\n      default: {}\n    }\n  }\n}\n"),
    # selector_inside_resource
    (
        "selector",
        "file { '/x':\n  ensure => $y ? {\n    true    => present,\n    default => absent,\n  },\n}\n",
    ),
    # documentation
    ("doc_missing", "class foo {\n}\n\n# not adjacent\n\ndefine foo::bar() {\n}\n"),
    ("doc_present", "# Doc\nclass foo {\n}\n"),
    # unquoted_node_name
    ("node_unquoted", "node foo, bar.example.com {\n}\nnode default {\n}\n"),
    ("node_quoted", "node 'foo' {\n}\n"),
    # duplicate_params
    (
        "dup_params",
        "file { '/x':\n  ensure => file,\n  ensure => absent,\n  opts   => { a => 1, a => 2 },\n}\n",
    ),
    # ensure_first_param
    ("ensure_first", "file { '/x':\n  mode   => '0644',\n  owner  => 'root',\n  ensure => file,\n}\n"),
    ("ensure_first_one_line", "file { '/x': mode => '0644', ensure => file }\n"),
    ("ensure_first_class", "class { 'foo':\n  bar    => 1,\n  ensure => present,\n}\n"),
    # ensure_not_symlink_target
    ("symlink_target", "file { '/x':\n  ensure => '/etc/y',\n}\n"),
    # file_mode / unquoted_file_mode
    ("file_mode_bad", "file { '/x':\n  mode => '644',\n}\n"),
    ("file_mode_unquoted", "file { '/x':\n  mode => 644,\n}\n"),
    ("file_mode_unquoted4", "file { '/x':\n  mode => 0644,\n}\n"),
    ("file_mode_sym", "file { '/x':\n  mode => 'u=rw,g+r',\n}\n"),
    ("file_mode_var", "concat { '/x':\n  mode => $m,\n}\n"),
    ("file_mode_other_type", "exec { '/x':\n  mode => 644,\n}\n"),
    # unquoted_resource_title
    ("title_unquoted", "file { foo:\n  ensure => file,\n}\n"),
    ("title_array", "file { ['a', b]:\n  ensure => file,\n}\n"),
    ("title_semicolon", "file { a: ensure => file; 'b': ensure => absent }\n"),
    # double_quoted_strings
    ("dq", '$a = "foo"\n$b = "it\'s"\n$c = "tab\\t"\n$d = "$x"\n$e = "\\$"\n'),
    ("dq_spaces", '$a = "a     b"\n'),
    ("dq_escapes", '$a = "x\\ry"\n$b = "\\u00e9"\n$c = "\\q"\n'),
    # only_variable_string
    ("only_var", '$a = "${x}"\n$b = "$x"\n$c = "${x[\'k\']}"\n$d = "${x}y"\nfoo { \'a\': "${x}" => 1 }\n'),
    ("only_var_dollar", '$a = "${$x}"\n$b = "${::x}"\n'),
    # puppet_url_without_modules
    ("puppet_url", '$a = \'puppet:///foo/bar\'\n$b = "puppet:///modules/foo"\n$c = "puppet:///x/${y}"\n'),
    # quoted_booleans (disabled)
    ("quoted_bool", "$a = 'true'\n$b = \"false\"\n"),
    # single_quote_string_with_variables
    ("sq_var", "$a = '${x}'\n$b = inline_template('<%= ${x} %>')\n"),
    # variables_not_enclosed
    ("unenc", '$a = "x $foo y"\n$b = "$foo-bar"\n$c = "$foo[1] z"\n$d = "$foo[\'a\'][\'b\'] z"\n'),
    ("unenc_adjacent", '$a = "$foo$bar"\n$b = "a$::x::y"\n'),
    # variable_contains_dash / variable_is_lowercase
    ("var_dash", '$foo-bar = 1\nnotice($a-b)\n$x = "${foo-bar}"\n'),
    ("var_upper", "$Foo = 1\nnotice($fooBar, $x['A'])\n"),
    # line lengths
    ("chars140", "$a = '" + "x" * 140 + "'\n$b = 'http://" + "x" * 140 + "'\n"),
    ("chars80", "$a = '" + "x" * 80 + "'\n"),
    # 2sp_soft_tabs / hard_tabs / trailing_whitespace
    ("soft_tabs", "# doc\nclass foo {\n   $x = 1\n}\n"),
    ("hard_tabs", "# doc\nclass foo {\n\t$x = 1\n  $y =\t2\n}\n"),
    ("trailing_ws", "$x = 1  \n$y = 2\t\n  \n"),
    ("trailing_ws_eof", "$x = 1  "),
    # arrow_alignment
    ("arrows", "file { '/x':\n  ensure => file,\n  mode  => '0644',\n  owner    => 'root',\n}\n"),
    ("arrows_nested", "file { '/x':\n  a => {\n    b  => 1,\n    ccc => 2,\n  },\n  dd => 3,\n}\n"),
    ("arrows_same_line", "file { '/x':\n  a => 1, bb => 2,\n  ccc => 3,\n}\n"),
    ("arrows_dq_param", "foo { 'x':\n  \"${a}\" => 1,\n  bb => 2,\n}\n"),
    ("arrows_ok", "file { '/x':\n  ensure => file,\n  mode   => '0644',\n}\n"),
    # control comments
    ("ctl_line", '$x = "a" # lint:ignore:double_quoted_strings\n'),
    ("ctl_line_reason", '$x = "a" # lint:ignore:double_quoted_strings because\n'),
    ("ctl_block", '# lint:ignore:double_quoted_strings reason here\n$x = "a"\n# lint:endignore\n$y = "b"\n'),
    ("ctl_two", '# lint:ignore:double_quoted_strings lint:ignore:140chars why\n$x = "a"\n# lint:endignore\n'),
    ("ctl_all", '# lint:ignore:all\n$x = "a"\n# lint:endignore\n'),
    ("ctl_unclosed", '# lint:ignore:double_quoted_strings\n$x = "a"\n'),
    ("ctl_stray_end", '$x = "a"\n# lint:endignore\n'),
    (
        "ctl_nested",
        '# lint:ignore:trailing_whitespace\n# lint:ignore:double_quoted_strings\n$x = "a" \n# lint:endignore\n$y = "b" \n# lint:endignore\n$z = 1 \n',
    ),
    # lexing corners
    ("crlf", '$x = "a"\r\n$y = 1  \r\n'),
    ("heredoc", '$x = @(END)\n  text ${y}\n  | END\n$z = "b"\n'),
    ("heredoc_interp", '$x = @("END")\n  text ${y} and $z\n  | END\n$w = "b"\n'),
    ("regex", 'if $x =~ /a\\/b/ {\n  $y = "c"\n}\n'),
    ("unicode", "$x = \"héllo\"  \n$y = 'ü' # ü\n"),
    ("interp_expr", "$x = \"${a.map |$v| { $v }} ${b[1]} ${c['d']['e']}\"\n"),
    ("function_call_kw", 'if($x) {\n  notice("y")\n}\n'),
    (
        "types",
        "# doc\nclass foo(Integer $a, Stdlib::Absolutepath $b = '/x', Variant[String, Integer] $c = 1) {\n}\n",
    ),
    ("collector", "File <| title == 'x' |> -> Package <<| tag == \"y\" |>>\n"),
    ("empty", ""),
    ("only_comment", "# hello\n"),
    ("syntax_unterminated", '$x = "abc\n'),
    ("syntax_unterminated_sq", "$x = 'abc\n"),
    ("syntax_bad_char", "$x = 1\n$y = ^\n"),
    ("resource_no_end", "file { 'x':\n  ensure => file\n"),
]

# Cases where our --fix deliberately differs from puppet-lint's, because puppet-lint's fix changes what
# the manifest means (the tests check that: Puppet's parse of puppet-lint's fix differs from the source's,
# ours equals it). See docs/lint.md.
DEVIATIONS: dict[str, str] = {
    "node_unquoted": "unquoted_node_name quotes each label of a dotted name ('a'.'b'), which Puppet rejects",
    "unenc": "variables_not_enclosed moves text brackets into the braces (an index); only_variable_string drops '-bar'",
    "var_dash": 'only_variable_string turns "${foo-bar}" into the subtraction $foo-bar',
    "dq_escapes": "double_quoted_strings single-quotes \\r and \\u escapes, changing the string",
}

# cases linted under a file name (autoloader_layout compares against it)
PATHS: dict[str, str] = {
    "layout_class": "modules/foo/manifests/baz.pp",
    "layout_define": "modules/foo/manifests/baz.pp",
}

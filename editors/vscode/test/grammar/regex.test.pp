# SYNTAX TEST "source.puppet" "regular expressions versus division"
$a = 10 / 2 / 5
#       ^ keyword.operator.arithmetic.puppet - string.regexp.puppet
#           ^ keyword.operator.arithmetic.puppet - string.regexp.puppet
$b = $x/2/$y
#      ^ keyword.operator.arithmetic.puppet - string.regexp.puppet
#        ^ keyword.operator.arithmetic.puppet - string.regexp.puppet
$c = foo() / bar[1] / 'str' / "dq" / $h['k'] / 4
#          ^ keyword.operator.arithmetic.puppet
#                   ^ keyword.operator.arithmetic.puppet
#                           ^ keyword.operator.arithmetic.puppet
#                                  ^ keyword.operator.arithmetic.puppet
#                                            ^ keyword.operator.arithmetic.puppet
$d = $x =~ /^a\/b [0-9]+$/
#          ^^^^^^^^^^^^^^^ string.regexp.puppet
#          ^ punctuation.definition.string.begin.puppet
#             ^^ constant.character.escape.regexp.puppet
#                        ^ punctuation.definition.string.end.puppet
if $facts['os'] !~ /x/ and $y =~ /a\\/ {
#                  ^^^ string.regexp.puppet
#                                ^^^^^ string.regexp.puppet
#                                      ^ punctuation.section.block.begin.puppet - string.regexp.puppet
}
# After `}` a `/` starts a regex (case options); after keywords too.
case $x {
  /^web(\d+)$/: { notice($1) }
# ^^^^^^^^^^^^ string.regexp.puppet
#                         ^ variable.other.readwrite.match.puppet
  default: { }
# ^^^^^^^ constant.language.default.puppet
}
node /^db\d+\.example\.com$/, 'x.example.com' { }
#    ^^^^^^^^^^^^^^^^^^^^^^^ string.regexp.puppet
# <---- storage.type.node.puppet
if /foo/ in $list { }
#  ^^^^^ string.regexp.puppet
#        ^^ keyword.operator.word.puppet
$e = $x ? { /a/ => 1, default => 2 }
#           ^^^ string.regexp.puppet
$f = [/a/, /b/]
#     ^^^ string.regexp.puppet
#          ^^^ string.regexp.puppet
$g = Pattern[/^\d+$/]
#            ^^^^^^^ string.regexp.puppet
$h = $min / 2
#         ^ keyword.operator.arithmetic.puppet - string.regexp.puppet
$i = 1 /* not a regex */ + 2
#      ^^^^^^^^^^^^^^^^^ comment.block.puppet

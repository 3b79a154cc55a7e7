# SYNTAX TEST "source.puppet" "heredocs"
$a = @(END)
#    ^^ punctuation.definition.heredoc.begin.puppet
#      ^^^ entity.name.tag.heredoc.puppet
#         ^ punctuation.definition.heredoc.end.puppet
  literal $x and ${y} \n are not special
# <---------------------------------------- string.unquoted.heredoc.puppet
#         ^^ - variable.other.readwrite.puppet
#                ^^^^ - meta.embedded.line.puppet
#                     ^^ - constant.character.escape.puppet
  | END
# ^ keyword.operator.heredoc.margin.puppet
#   ^^^ entity.name.tag.heredoc.puppet - string.unquoted.heredoc.puppet
$b = 1
# <- punctuation.definition.variable.puppet - meta.heredoc.puppet
#    ^ constant.numeric.integer.decimal.puppet
notice(@("Say hello":json/$t), 2)
#      ^^ punctuation.definition.heredoc.begin.puppet
#        ^ punctuation.definition.tag.begin.puppet
#         ^^^^^^^^^ entity.name.tag.heredoc.puppet
#                  ^ punctuation.definition.tag.end.puppet
#                   ^ punctuation.separator.heredoc.syntax.puppet
#                    ^^^^ storage.type.heredoc.syntax.puppet
#                        ^ punctuation.separator.heredoc.escapes.puppet
#                         ^^ constant.character.escape.heredoc.flags.puppet
#                           ^ punctuation.definition.heredoc.end.puppet
#                            ^ punctuation.separator.comma.puppet
#                              ^ constant.numeric.integer.decimal.puppet
#                               ^ punctuation.section.parens.end.puppet
  {"who": "$name", "n": ${$n + 1}, "m": ${m + 1}, "tab": "\t", "dollar": "\$", "q": "\q"}
# ^^^^^^^^^ string.interpolated.heredoc.puppet
#          ^ punctuation.definition.variable.puppet
#           ^^^^ variable.other.readwrite.puppet
#                       ^^ punctuation.section.embedded.begin.puppet
#                          ^ variable.other.readwrite.puppet
#                            ^ keyword.operator.arithmetic.puppet
#                              ^ constant.numeric.integer.decimal.puppet
#                               ^ punctuation.section.embedded.end.puppet
#                                         ^ string.unquoted.bareword.puppet
#                                                         ^^ constant.character.escape.puppet
#                                                                         ^^ constant.character.escape.puppet
#                                                                                    ^^ string.interpolated.heredoc.puppet - constant.character.escape.puppet
  |- Say hello
# ^ keyword.operator.heredoc.margin.puppet
#  ^ keyword.operator.heredoc.trim.puppet
#    ^^^^^^^^^ entity.name.tag.heredoc.puppet
$c = @(EOT/L)
#         ^ punctuation.separator.heredoc.escapes.puppet
#          ^ constant.character.escape.heredoc.flags.puppet
  continued \
#           ^ constant.character.escape.line-continuation.puppet
  $not_interpolated
# ^^^^^^^^^^^^^^^^^ string.unquoted.heredoc.puppet - variable.other.readwrite.puppet
  END is not the end tag here
# ^^^ string.unquoted.heredoc.puppet - entity.name.tag.heredoc.puppet
  -EOT
# ^ keyword.operator.heredoc.trim.puppet
#  ^^^ entity.name.tag.heredoc.puppet
$h = @(NOESC)
  \t \\ stay as they are without a /escapes part
# ^^ string.unquoted.heredoc.puppet - constant.character.escape.puppet
#    ^^ string.unquoted.heredoc.puppet - constant.character.escape.puppet
  NOESC
# Puppet does not anchor the end line at the start of the line: this heredoc ends at "the END".
$d = @(END)
  this is the END
#             ^^^ entity.name.tag.heredoc.puppet
#         ^^^ string.unquoted.heredoc.puppet
$after = 'x'
# <- punctuation.definition.variable.puppet - meta.heredoc.puppet
#^^^^^ variable.other.readwrite.puppet - string.unquoted.heredoc.puppet
#        ^^^ string.quoted.single.puppet
# The rest of the opening line is code; the body starts on the next line.
$e = [@(A), 'b'] # trailing comment
#       ^ entity.name.tag.heredoc.puppet
#           ^^^ string.quoted.single.puppet
#              ^ punctuation.section.brackets.end.puppet
#                ^^^^^^^^^^^^^^^^^^ comment.line.number-sign.puppet
  body text 'not a string'
#           ^^^^^^^^^^^^^^ string.unquoted.heredoc.puppet - string.quoted.single.puppet
  A
# ^ entity.name.tag.heredoc.puppet
$i = 2
#    ^ constant.numeric.integer.decimal.puppet - meta.heredoc.puppet
# Blanks inside the parentheses are trimmed; internal blanks belong to the tag.
$f = @( Verse 8 : text )
#       ^^^^^^^ entity.name.tag.heredoc.puppet
#               ^ punctuation.separator.heredoc.syntax.puppet
#                 ^^^^ storage.type.heredoc.syntax.puppet
Once upon a midnight
# <---- string.unquoted.heredoc.puppet
Verse 8
# <------- entity.name.tag.heredoc.puppet
$g = 3
#    ^ constant.numeric.integer.decimal.puppet - meta.heredoc.puppet

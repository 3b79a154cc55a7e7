# SYNTAX TEST "source.puppet" "strings, escapes and interpolation"
$a = 'it\'s \\ \n $x ${y}'
#    ^ string.quoted.single.puppet punctuation.definition.string.begin.puppet
#       ^^ constant.character.escape.puppet
#           ^^ constant.character.escape.puppet
#              ^^ string.quoted.single.puppet - constant.character.escape.puppet
#                 ^^ string.quoted.single.puppet - variable.other.readwrite.puppet
#                    ^^^^ string.quoted.single.puppet - meta.embedded.line.puppet
$b = "tab\t nl\n sp\s dq\" sq\' bs\\ dollar\$x u\u00e9 u\u{1F600} bad\q"
#        ^^ constant.character.escape.puppet
#             ^^ constant.character.escape.puppet
#                  ^^ constant.character.escape.puppet
#                       ^^ constant.character.escape.puppet
#                            ^^ constant.character.escape.puppet
#                                 ^^ constant.character.escape.puppet
#                                          ^^ constant.character.escape.puppet
#                                            ^ string.quoted.double.puppet - variable.other.readwrite.puppet
#                                               ^^^^^^ constant.character.escape.puppet
#                                                       ^^^^^^^^^ constant.character.escape.puppet
#                                                                    ^^ invalid.deprecated.unrecognized-escape.puppet
#                                                                      ^ string.quoted.double.puppet punctuation.definition.string.end.puppet
$c = "short $x::y::z, long ${x::y}, trailing $a::, no $ here, $x[1] and $x.y"
#           ^ punctuation.definition.variable.puppet
#            ^^^^^^^ string.quoted.double.puppet variable.other.readwrite.puppet
#                          ^^ punctuation.section.embedded.begin.puppet
#                            ^^^^ meta.embedded.line.puppet variable.other.readwrite.puppet
#                                             ^ variable.other.readwrite.puppet
#                                              ^^ string.quoted.double.puppet - variable.other.readwrite.puppet
#                                                     ^^^^^^ string.quoted.double.puppet - variable.other.readwrite.puppet punctuation.definition.variable.puppet
#                                                              ^ variable.other.readwrite.puppet
#                                                               ^^^ string.quoted.double.puppet - variable.other.readwrite.puppet punctuation.section.brackets.begin.puppet
#                                                                        ^ variable.other.readwrite.puppet
#                                                                         ^^ string.quoted.double.puppet - punctuation.accessor.puppet
# In ${...} a lone name (or a name followed by . or [) is a variable; otherwise it is a bare word.
$d = "${facts['os']} ${x.upcase} ${x [1]} ${y + 1} ${1} ${$z} ${ w }"
#       ^^^^^ variable.other.readwrite.puppet
#             ^^^^ meta.embedded.line.puppet string.quoted.single.puppet
#                      ^ variable.other.readwrite.puppet
#                        ^^^^^^ support.function.puppet
#                                  ^ string.unquoted.bareword.puppet
#                                           ^ string.unquoted.bareword.puppet
#                                                    ^ variable.other.readwrite.puppet
#                                                          ^ variable.other.readwrite.puppet
#                                                                ^ variable.other.readwrite.puppet
# Braces inside an interpolation nest (hashes, lambdas).
$e = "${ {'a' => 1}['a'] } ${[1, 2].map |$v| { $v * 2 }} after"
#         ^^^ string.quoted.single.puppet
#                        ^ punctuation.section.embedded.end.puppet
#                                        ^^^ meta.lambda.parameters.puppet
#                                                        ^^^^^ string.quoted.double.puppet - meta.embedded.line.puppet
$f = 'multi
line' + "multi
# <----- string.quoted.single.puppet
#       ^^^^^^ string.quoted.double.puppet
line $x"
# <---- string.quoted.double.puppet
#     ^ variable.other.readwrite.puppet
$g = "continued \
line"
# <---- string.quoted.double.puppet
#   ^ punctuation.definition.string.end.puppet

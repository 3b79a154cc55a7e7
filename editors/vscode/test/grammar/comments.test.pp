# SYNTAX TEST "source.puppet" "comments"
$a = 1 # a comment with 'quotes' and $vars
#      ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^ comment.line.number-sign.puppet
#      ^ punctuation.definition.comment.puppet
$b = /* block */ 2
#    ^^^^^^^^^^^ comment.block.puppet
#    ^^ punctuation.definition.comment.begin.puppet
#             ^^ punctuation.definition.comment.end.puppet
#                ^ constant.numeric.integer.decimal.puppet
/* a block comment
   spanning lines, with "strings" and # hashes
#                       ^^^^^^^^^ comment.block.puppet - string.quoted.double.puppet
*/ $c = 3
#  ^^ - comment.block.puppet
$d = '# not a comment'
#     ^^^^^^^^^^^^^^^ string.quoted.single.puppet - comment.line.number-sign.puppet
$e = "/* nor this */"
#     ^^^^^^^^^^^^^^ string.quoted.double.puppet - comment.block.puppet
$f = /#not-a-comment/
#    ^^^^^^^^^^^^^^^^ string.regexp.puppet - comment.line.number-sign.puppet
$g = @(END)
  # not a comment in a heredoc body
# ^^^^^^^^^^^^^^^ string.unquoted.heredoc.puppet - comment.line.number-sign.puppet
  END
$h = "${ 1 /* in an interpolation */ } ${ $x # to the end of the line
#          ^^^^^^^^^^^^^^^^^^^^^^^^^ meta.embedded.line.puppet comment.block.puppet
#                                            ^^^^^^^^^^^^^^^^^^^^^^^^ comment.line.number-sign.puppet
}"
# <- punctuation.section.embedded.end.puppet
#^ string.quoted.double.puppet punctuation.definition.string.end.puppet
file { '/x': # after the title
#            ^^^^^^^^^^^^^^^^^ meta.resource.puppet comment.line.number-sign.puppet
  mode => '0644', /* inside */ owner => 'root',
#                 ^^^^^^^^^^^^ comment.block.puppet
#                              ^^^^^ entity.other.attribute-name.puppet
}
#region setup
# <------------- comment.line.number-sign.puppet
class a (
  # a parameter comment
# ^^^^^^^^^^^^^^^^^^^^^ meta.parameters.puppet comment.line.number-sign.puppet
  $x = 1, /* block */
#         ^^^^^^^^^^^ comment.block.puppet
) { }

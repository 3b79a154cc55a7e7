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

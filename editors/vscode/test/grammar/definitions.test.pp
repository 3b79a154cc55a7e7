# SYNTAX TEST "source.puppet" "definitions, keywords, type references, variables, numbers"
class ntp::config (
# <----- storage.type.class.puppet
#     ^^^^^^^^^^^ entity.name.type.class.puppet
#                 ^ punctuation.definition.parameters.begin.puppet
  Optional[String[1]] $server = undef,
# ^^^^^^^^ support.type.puppet
#          ^^^^^^ support.type.puppet
#                 ^ constant.numeric.integer.decimal.puppet
#                     ^ punctuation.definition.variable.puppet
#                      ^^^^^^ variable.parameter.puppet
#                             ^ keyword.operator.assignment.puppet
#                               ^^^^^ constant.language.undef.puppet
  Array[Stdlib::Host] $peers = ['a', 'b'],
#       ^^^^^^^^^^^^ entity.name.type.puppet
#                      ^^^^^ variable.parameter.puppet
#                                    ^^^ string.quoted.single.puppet
  Hash $opts = { 'k' => lookup('x', Integer, 'first', 1) },
#       ^^^^ variable.parameter.puppet
#                       ^^^^^^ support.function.puppet
#                                   ^^^^^^^ support.type.puppet
  Boolean $enable = true,
#          ^^^^^^ variable.parameter.puppet
#                   ^^^^ constant.language.boolean.puppet
) inherits ntp::params {
# <- punctuation.definition.parameters.end.puppet
# ^^^^^^^^ storage.modifier.inherits.puppet
#          ^^^^^^^^^^^ entity.other.inherited-class.puppet
  include ntp::service
# ^^^^^^^ support.function.puppet
#         ^^^^^^^^^^^^ entity.name.type.class.puppet
  contain ::ntp::install
#         ^^^^^^^^^^^^^^ entity.name.type.class.puppet
  if $enable and !$facts['virtual'] {
# ^^ keyword.control.conditional.puppet
#            ^^^ keyword.operator.word.puppet
#                ^ keyword.operator.logical.puppet
#                  ^^^^^ variable.language.puppet
  } elsif $x == 1 or $y != 2 {
#   ^^^^^ keyword.control.conditional.puppet
#            ^^ keyword.operator.comparison.puppet
#                 ^^ keyword.operator.word.puppet
#                       ^^ keyword.operator.comparison.puppet
  } else { notice('no') }
#   ^^^^ keyword.control.conditional.puppet
#          ^^^^^^ support.function.puppet
  unless $x { fail 'x' }
# ^^^^^^ keyword.control.conditional.puppet
#             ^^^^ support.function.puppet
  $list.each |Integer $i, $v| { notice $v }
#       ^^^^ support.function.puppet
#            ^ meta.lambda.parameters.puppet punctuation.definition.parameters.begin.puppet
#             ^^^^^^^ support.type.puppet
#                      ^ variable.parameter.puppet
#                          ^ variable.parameter.puppet
#                               ^^^^^^ support.function.puppet
  $r = $list.my_mod::fn(1).filter |$x| { $x > 1 }
#            ^^^^^^^^^^ entity.name.function.puppet
#                          ^^^^^^ support.function.puppet
#                                           ^ keyword.operator.comparison.puppet
  $n = my_func(2) + mymod::other(3)
#      ^^^^^^^ entity.name.function.puppet
#                   ^^^^^^^^^^^^ entity.name.function.puppet
}
define apache::vhost (Integer $port = 80, *$rest) { }
# <------ storage.type.define.puppet
#      ^^^^^^^^^^^^^ entity.name.type.define.puppet
#                              ^^^^ variable.parameter.puppet
#                                     ^^ constant.numeric.integer.decimal.puppet
#                                         ^ keyword.operator.splat.puppet
#                                           ^^^^ variable.parameter.puppet
function mymod::double(Numeric $x) >> Numeric { $x * 2 }
# <-------- storage.type.function.puppet
#        ^^^^^^^^^^^^^ entity.name.function.puppet
#                                  ^^ punctuation.separator.return-type.puppet
#                                     ^^^^^^^ support.type.puppet
plan mymod::deploy(TargetSpec $targets) { apply($targets) { } }
# <---- storage.type.function.puppet
#    ^^^^^^^^^^^^^ entity.name.function.puppet
#                  ^^^^^^^^^^ entity.name.type.puppet
#                                         ^^^^^ keyword.control.apply.puppet
type Mymod::Port = Integer[1, 65535]
# <---- storage.type.type.puppet
#    ^^^^^^^^^^^ entity.name.type.alias.puppet
#                ^ keyword.operator.assignment.puppet
#                  ^^^^^^^ support.type.puppet
#                             ^^^^^ constant.numeric.integer.decimal.puppet
node 'web01.example.com', default { }
# <---- storage.type.node.puppet
#    ^^^^^^^^^^^^^^^^^^^ string.quoted.single.puppet
#                         ^^^^^^^ constant.language.default.puppet
$a = 0x1F + 0777 + 10 + 1.5 + 2e10 + 3.1e-2 + 0 + 00
#    ^^^^ constant.numeric.integer.hexadecimal.puppet
#           ^^^^ constant.numeric.integer.octal.puppet
#                  ^^ constant.numeric.integer.decimal.puppet
#                       ^^^ constant.numeric.float.puppet
#                             ^^^^ constant.numeric.float.puppet
#                                    ^^^^^^ constant.numeric.float.puppet
#                                             ^ constant.numeric.integer.decimal.puppet
#                                                 ^^ constant.numeric.integer.octal.puppet
$bad = 08 + 1_000 + 3g
#      ^^ invalid.illegal.numeric.puppet
#           ^^^^^ invalid.illegal.numeric.puppet
#                   ^^ invalid.illegal.numeric.puppet
$::top::scope = $trusted['certname'] + $server_facts + $1 + $x::y
#^^^^^^^^^^^^ variable.other.readwrite.puppet
#                ^^^^^^^ variable.language.puppet
#                                       ^^^^^^^^^^^^ variable.language.puppet
#                                                       ^ variable.other.readwrite.match.puppet
#                                                            ^^^^ variable.other.readwrite.puppet
$c += [1]
#  ^^ keyword.operator.assignment.compound.puppet
$d = $e ? { undef => 'u', default => 'd' } << 1
#                 ^^ punctuation.separator.key-value.puppet
#                                          ^^ keyword.operator.bitwise.shift.puppet
# Keywords are whole bare words only.
$e = [if_x, x::if, undef-x, $if, $x.type, type(1), class_name]
#     ^^^^ string.unquoted.bareword.puppet - keyword.control.conditional.puppet
#           ^^^^^ string.unquoted.bareword.puppet - keyword.control.conditional.puppet
#                  ^^^^^^^ string.unquoted.bareword.puppet - constant.language.undef.puppet
#                            ^^ variable.other.readwrite.puppet - keyword.control.conditional.puppet
#                                   ^^^^ entity.name.function.puppet - storage.type.puppet
#                                                  ^^^^^^^^^^ string.unquoted.bareword.puppet - storage.type.puppet
$f = Class['x'] + Resource['file', '/x'] + ::Foo::Bar + Sensitive('s')
#    ^^^^^ support.type.puppet
#                 ^^^^^^^^ support.type.puppet
#                                          ^^^^^^^^^^ entity.name.type.puppet
#                                                       ^^^^^^^^^ support.type.puppet
class ntp (
  $x = 1,) inherits
#          ^^^^^^^^ storage.modifier.inherits.puppet
ntp::params {
# <----------- entity.other.inherited-class.puppet
}

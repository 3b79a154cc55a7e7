# SYNTAX TEST "source.puppet" "resources: types, titles, attributes"
file { '/etc/motd':
# <---- meta.resource.puppet entity.name.type.resource.puppet
#    ^ punctuation.section.block.begin.puppet
#      ^^^^^^^^^^^ meta.title.puppet entity.name.section.title.puppet
#                 ^ punctuation.separator.title.puppet
  ensure  => file,
# ^^^^^^ entity.other.attribute-name.puppet
#         ^^ keyword.operator.attribute.puppet
#            ^^^^ string.unquoted.bareword.puppet
  content => "Hello ${facts['fqdn']}\n",
# ^^^^^^^ entity.other.attribute-name.puppet
#            ^^^^^^ string.quoted.double.puppet - entity.name.section.title.puppet
  unless  => 'test -f /x',
# ^^^^^^ entity.other.attribute-name.puppet - keyword.control.conditional.puppet
  require => Package['ntp'],
# ^^^^^^^ entity.other.attribute-name.puppet - support.function.puppet
#            ^^^^^^^ entity.name.type.puppet - support.type.puppet
#                    ^^^^^ string.quoted.single.puppet - entity.name.section.title.puppet
}
# <- punctuation.section.block.end.puppet
@@nagios::service { "check_${name}": host => $::fqdn }
# <-- storage.modifier.exported.puppet
# ^^^^^^^^^^^^^^^ entity.name.type.resource.puppet
#                   ^^^^^^^ entity.name.section.title.puppet
#                            ^^^^ variable.other.readwrite.puppet
#                                    ^^^^ entity.other.attribute-name.puppet
#                                             ^^^^^^ variable.other.readwrite.puppet
@user { ['alice', 'bob']: ensure => present }
# <- storage.modifier.virtual.puppet
#^^^^ entity.name.type.resource.puppet
#        ^^^^^^^ entity.name.section.title.puppet
#                 ^^^^^ entity.name.section.title.puppet
#                      ^ punctuation.definition.array.end.puppet
#                       ^ punctuation.separator.title.puppet
#                         ^^^^^^ entity.other.attribute-name.puppet
exec { $cmd: path => '/bin'; 'second': path => '/usr/bin' }
#       ^^^ entity.name.section.title.puppet
#                          ^ punctuation.terminator.resource-body.puppet
#                            ^^^^^^^^ entity.name.section.title.puppet
package { default: ensure => latest; 'vim': }
#         ^^^^^^^ constant.language.default.puppet
#                                    ^^^^^ entity.name.section.title.puppet
class { 'apache': mpm => 'prefork' }
# <----- entity.name.type.resource.puppet - entity.name.type.class.puppet
#       ^^^^^^^^ entity.name.section.title.puppet
#                 ^^^ entity.other.attribute-name.puppet
service { 'ntp':
  * => $opts,
# ^ entity.other.attribute-name.splat.puppet
  subscribe +> File['/etc/ntp.conf'],
# ^^^^^^^^^ entity.other.attribute-name.puppet
#           ^^ keyword.operator.attribute.puppet
#              ^^^^ entity.name.type.puppet
  ensure => $x ? { 'a': => 1, default => 'running' },
#              ^ keyword.operator.selector.puppet
}
File { mode => '0644' }
# <---- meta.resource.defaults.puppet entity.name.type.resource.puppet
#      ^^^^ entity.other.attribute-name.puppet
Package <| tag == 'web' and title != 'x' |> -> Service['web']
#       ^^ punctuation.section.collector.begin.puppet
#          ^^^ entity.other.attribute-name.puppet
#              ^^ keyword.operator.comparison.puppet
#                       ^^^ keyword.operator.word.puppet
#                           ^^^^^ entity.other.attribute-name.puppet
#                                        ^^ punctuation.section.collector.end.puppet
#                                           ^^ keyword.operator.relationship.puppet
User <<| |>> ~> Exec['x'] <- Package['y'] <~ Service['z']
#    ^^^ punctuation.section.collector.begin.puppet
#        ^^^ punctuation.section.collector.end.puppet
#            ^^ keyword.operator.relationship.puppet
#                         ^^ keyword.operator.relationship.puppet
#                                         ^^ keyword.operator.relationship.puppet
if $x { file { '/a': } } else { notify { 'b': } }
# <-- keyword.control.conditional.puppet
#       ^^^^ entity.name.type.resource.puppet
#                        ^^^^ keyword.control.conditional.puppet - entity.name.type.resource.puppet
#                               ^^^^^^ entity.name.type.resource.puppet

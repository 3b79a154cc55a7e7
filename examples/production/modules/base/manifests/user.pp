# @summary A local login with a home directory.
define base::user (
  Integer[1000]  $uid,
  Array[String]  $groups = [],
  Enum['present', 'absent'] $ensure = 'present',
  String         $shell  = '/bin/bash',
) {
  user { $title:
    ensure     => $ensure,
    uid        => $uid,
    groups     => $groups,
    shell      => $shell,
    managehome => true,
  }

  unless $ensure == 'absent' {
    file { "/home/${title}/.profile":
      ensure  => file,
      owner   => $title,
      content => "# ${base::greeting($title)}\nexport EDITOR=vi\n",
      require => User[$title],
    }
  }
}

# @summary Baseline configuration for every node.
#
# @param admins  Accounts that get an administrator login.
# @param motd    Text of /etc/motd; `undef` keeps the generated one.
class base (
  Array[Base::Username] $admins = [],
  Optional[String[1]]   $motd   = undef,
) {
  $banner = $motd ? {
    undef   => "Managed by Puppet on ${facts['networking']['fqdn']}\n",
    default => "${motd}\n",
  }

  file { '/etc/motd':
    ensure  => file,
    owner   => 'root',
    group   => 'root',
    mode    => '0644',
    content => $banner,
  }

  $admins.each |Integer $index, Base::Username $name| {
    base::user { $name:
      uid    => 2000 + $index,
      groups => ['sudo'],
    }
  }

  if $facts['os']['family'] == 'Debian' {
    package { ['vim-tiny', 'less']:
      ensure => installed,
    }
  }
}

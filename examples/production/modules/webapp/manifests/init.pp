# @summary A web server with one virtual host per entry of $vhosts.
#
# @param port    Port of the default site.
# @param vhosts  Virtual hosts by server name; see webapp::vhost for the keys.
class webapp (
  Integer[1, 65535] $port = 80,
  Hash[String[1], Hash[String, Data]] $vhosts = {},
) {
  package { 'nginx':
    ensure => installed,
  }

  -> file { '/etc/nginx/sites-enabled/default':
    ensure => absent,
  }

  ~> service { 'nginx':
    ensure => running,
    enable => true,
  }

  $vhosts.each |String $server_name, Hash $options| {
    webapp::vhost { $server_name:
      port => $options['port'] ? {
        undef   => $port,
        default => $options['port'],
      },
      ssl  => $options.dig('ssl') == true,
    }
  }
}

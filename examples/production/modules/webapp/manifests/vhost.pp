# @summary One nginx virtual host.
define webapp::vhost (
  Integer[1, 65535] $port = 80,
  Boolean           $ssl  = false,
  String            $root = "/srv/www/${title}",
) {
  file { $root:
    ensure => directory,
    owner  => 'www-data',
  }

  file { "/etc/nginx/sites-enabled/${title}.conf":
    ensure  => file,
    content => epp('webapp/vhost.conf.epp', {
      'server_name' => $title,
      'port'        => $port,
      'ssl'         => $ssl,
      'root'        => $root,
    }),
    notify  => Service['nginx'],
  }
}

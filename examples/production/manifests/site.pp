# Node classification for the example environment.

# Defaults for every file resource in this environment.
File {
  backup => false,
}

node /^web\d+\.example\.com$/ {
  class { 'base':
    admins => ['alice', 'bob'],
  }

  class { 'webapp':
    port     => 8080,
    vhosts   => {
      'shop.example.com' => { 'port' => 8443, 'ssl' => true },
      'blog.example.com' => {},
    },
  }
}

node default {
  include base
  notify { 'greeting':
    message => base::greeting($trusted['certname']),
  }
}

# frozen_string_literal: true

# Loaded before Puppet runs (`RUBYOPT=-rpuppet_x/xpp/boot`, or a `require` in Puppet Server's Ruby
# set-up): loads Puppet, defines the `xpp` setting (so `--xpp` is a known option) and installs the runtime
# hook.  Nothing in Puppet is patched on disk; with `xpp` off (the default) Puppet behaves as without it.
require 'puppet'
require 'puppet_x/xpp/runtime'

PuppetX::Xpp::Runtime.install

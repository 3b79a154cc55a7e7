# frozen_string_literal: true

# The catalog terminus for Puppet Server (`catalog_terminus = xpp` in puppet.conf's [server] section):
# Puppet's own compiler terminus, loaded through Puppet's autoloader from the JRuby load path, whose
# loading installs the xpp runtime.  Puppet Server has no setting that runs a file at start-up and its
# JRuby ignores RUBYOPT, so this is how `puppet_x/xpp/boot` gets into every JRuby instance there.  The
# compile itself is the compiler terminus's, unchanged; `xpp` (read at each load) still decides.
require 'puppet/indirector/catalog/compiler'
require 'puppet_x/xpp/boot'

class Puppet::Resource::Catalog::Xpp < Puppet::Resource::Catalog::Compiler
  desc 'Compiles catalogs like the compiler terminus, loading Puppet-language files from .xpp (the xpp module).'
end

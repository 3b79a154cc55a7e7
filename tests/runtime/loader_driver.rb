# frozen_string_literal: true

# The Ruby side of tests/test_loader_fuzz.py: one long-running process that loads many `.xpp` documents
# with the runtime's loader and prints one verdict line per document, in order:
#   A                  loaded
#   R <message>        refused with PuppetX::Xpp::FormatError (the runtime then parses the source)
#   X <class: message> anything else (NoMemoryError, SystemStackError, a bug): what Puppet must never see
# Input on standard input: each document as a 4-byte big-endian length, then its bytes.
#
#   ruby [-I OPENVOX_LIB] loader_driver.rb RUNTIME_LIB [gem|nogem]
# `nogem`: the msgpack gem cannot be loaded (as on Puppet Server's JRuby); the run fails if it is.
require 'tmpdir'

lib, mode = ARGV
if mode == 'nogem'
  hide = Dir.mktmpdir
  File.write(File.join(hide, 'msgpack.rb'), "raise LoadError, 'no msgpack gem here'\n")
  $LOAD_PATH.unshift(hide)
end
$LOAD_PATH.unshift(lib)
require 'puppet'
require 'puppet_x/xpp/loader'
abort 'the msgpack gem is loaded in nogem mode' if mode == 'nogem' && defined?(::MessagePack)

input = $stdin.binmode
out = []
loop do
  head = input.read(4)
  break if head.nil?
  data = input.read(head.unpack1('N'))
  begin
    PuppetX::Xpp::Loader.load(data, '/etc/puppetlabs/code/environments/production/manifests/site.pp')
    out << 'A'
  rescue PuppetX::Xpp::FormatError => e
    out << "R #{e.message.scrub.gsub(/\s+/, ' ')[0, 300]}"
  rescue Exception => e # rubocop:disable Lint/RescueException -- the test reports whatever escapes
    out << "X #{e.class}: #{e.message.scrub.gsub(/\s+/, ' ')[0, 300]}"
  end
end
$stdout.write(out.join("\n") + "\n")

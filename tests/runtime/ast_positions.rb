# Test driver (run by tests/runtime/test_jruby_loader.py, in Puppet Server's JRuby): for each [xpp, source]
# pair, the runtime's loaded Program against Puppet's own parse of the source.  Puppet's model `==` ignores
# positions (Positioned#eql? compares no offset or length), so the class, offset and length of every
# positioned node in document order are compared too, with every node on the one Locator of its Program,
# the Locator's text and file.  Writes one JSON object: "results", "ok" or what differs per pair, and
# "no_builder", the AST table's types that the loader builds through Puppet's `new` instead of its flattened
# constructor (asked once Puppet's parser has run, as in a server: a false refusal once sent half of them
# through `new` and an eval'd checker that JRuby interprets), into the file req['out'].
require 'json'
req = JSON.parse(File.read(ARGV[0]))
$LOAD_PATH.unshift(req['runtime_lib'])
require 'puppet'
require 'puppet_x/xpp/runtime'
Puppet.initialize_settings(['--confdir', req['dir'] + '/conf', '--vardir', req['dir'] + '/var'])

def positions(prog)
  out = []
  prog._pcore_all_contents([]) do |m|
    next unless m.is_a?(Puppet::Pops::Model::Positioned)
    out << [m.class.name, m.offset, m.length, m.locator.equal?(prog.locator)]
  end
  out
end

env = Puppet::Node::Environment.create(:x, [])
res = Puppet.override(loaders: Puppet::Pops::Loaders.new(env)) do
  req['pairs'].map do |xpp, src|
    prog = PuppetX::Xpp::Loader.load_file(xpp, src).program
    own = Puppet::Pops::Parser::Parser.new.parse_file(src).model
    if prog.nil? then 'no Program'
    elsif prog != own then 'differs (==)'
    elsif positions(prog) != positions(own) then 'positions or Locator differ'
    elsif prog.locator.file != src || prog.locator.string != own.locator.string then 'Locator text or file differs'
    else 'ok'
    end
  rescue StandardError => e
    "#{e.class}: #{e.message}"
  end
end
reader = PuppetX::Xpp::MsgpackReader
no_builder = reader.table.reject do |name, (klass, min, _max, params, tests)|
  reader::Builder.cached(klass, params, min, tests, name)
end.keys
# (into req['out']: the JVM's compilation log, when asked for, shares stdout)
File.write(req['out'], JSON.generate('results' => res, 'no_builder' => no_builder))

# Loader benchmark inside one Puppet process (run by bench/bench_runtime.py): for a list of
# [source, xpp] pairs, the best of N rounds (CPU time of this process: the machine may be shared) of
#   parse+validate  Puppet's EvaluatingParser#parse_string (what Puppet does for every manifest)
#   xpp loader      PuppetX::Xpp::Loader.load (runtime/xpp, the msgpack gem's C unpacker)
#   Deserializer    Puppet's stock Pcore Deserializer over a 15-line msgpack AbstractReader
# -> one JSON line {"bytes": source bytes, "files": n, "parse": s, "loader": s, "deserializer": s}
require 'json'
req = JSON.parse(File.read(ARGV[0]))
$LOAD_PATH.unshift(req['runtime_lib'])
require 'puppet'
require 'puppet_x/xpp/loader'
require 'msgpack'
Puppet.initialize_settings(['--confdir', req['dir'] + '/conf', '--vardir', req['dir'] + '/var', '--strict', req['strict']])

S = Puppet::Pops::Serialization
class BenchMsgPackReader < S::AbstractReader
  def initialize(data)
    u = MessagePack::Unpacker.new
    u.feed(data)
    super(u)
  end

  def read_payload(data)
    ep = MessagePack::Unpacker.new
    ep.feed(data)
    yield(ep)
  end
end

pairs = req['pairs'].map { |src, xpp| [src, File.binread(src).force_encoding('UTF-8'), File.binread(xpp)] }
bytes = pairs.sum { |_, s, _| s.bytesize }
rounds = req['rounds']
def best(rounds)
  (1..rounds).map do
    GC.start
    t = Process.clock_gettime(Process::CLOCK_PROCESS_CPUTIME_ID)
    yield
    Process.clock_gettime(Process::CLOCK_PROCESS_CPUTIME_ID) - t
  end.min
end
env = Puppet::Node::Environment.create(:bench, [])
res = Puppet.override(loaders: Puppet::Pops::Loaders.new(env), current_environment: env) do
  parser = Puppet::Pops::Parser::EvaluatingParser.new
  parse = best(rounds) { pairs.each { |path, s, _| parser.parse_string(s, path) } }
  loader = best(rounds) { pairs.each { |path, _, x| PuppetX::Xpp::Loader.load(x, path) } }
  deser = best(rounds) do
    pairs.each do |_, _, x|
      payload = x.byteslice(x.index("\n\n") + 2..)
      S::Deserializer.new(BenchMsgPackReader.new(payload), Puppet.lookup(:loaders).private_environment_loader).read
    end
  end
  { 'bytes' => bytes, 'files' => pairs.size, 'parse' => parse, 'loader' => loader, 'deserializer' => deser }
end
puts JSON.generate(res)

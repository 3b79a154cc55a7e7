# Loader benchmark inside one Puppet process (run by bench/bench_runtime.py), over [source, xpp] pairs.
#
# What is timed, per file, all from memory (the files are read before timing):
#   parse+validate  Puppet's EvaluatingParser#parse_string: parse, validate, report (what Puppet does for every
#                   manifest it loads)
#   xpp loader      what the runtime does instead: PuppetX::Xpp::Loader.load (envelope, checksum, payload ->
#                   Program), its usability check against the source, and the replay of the recorded
#                   diagnostics through Puppet's IssueReporter (Runtime.unusable + Runtime.replay)
#   Deserializer    Puppet's stock Pcore Deserializer reading the same payloads (a 15-line msgpack reader);
#                   ~35x slower than the loader, so timed in the first two rounds only; only where the
#                   msgpack gem is installed (not in Puppet Server's JRuby)
#
# How: first every loaded Program is compared with Puppet's own parse of its source (==; the run aborts on
# any difference), then `warmup` untimed rounds (JRuby: its JIT and then the JVM's compile the code of both
# sides over the first tens of passes; a server runs warm for days), then N rounds, each timing every side
# once in a rotating order (interleaved, so a change
# of machine load hits all sides alike); before each timed pass a full GC.start, during it GC runs as
# usual (the same for every side).  CPU time of this process.  Reported: the best and the median pass of
# each side, and the median of the per-round ratios parse / loader.
# -> one JSON line {"bytes", "files", "rounds", "warmup", "same_programs", "<side>": {"best", "median", "gc_runs"},
#                   "ratio_best", "ratio_median"}
require 'json'
req = JSON.parse(File.read(ARGV[0]))
$LOAD_PATH.unshift(req['runtime_lib'])
require 'puppet'
require 'puppet_x/xpp/runtime'
begin
  require 'msgpack'
rescue LoadError
  nil # (Puppet Server's JRuby: no gem, so no stock Deserializer side; the runtime needs none)
end
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

# On JRuby the process's CPU time includes the JIT compiler's and the collector's own threads, which run
# beside the timed code whatever it is: there this thread's CPU time is taken instead (the JVM's).
if RUBY_ENGINE == 'jruby'
  require 'java'
  THREADS = java.lang.management.ManagementFactory.getThreadMXBean
  def cpu
    THREADS.getCurrentThreadCpuTime / 1e9
  end
else
  def cpu
    Process.clock_gettime(Process::CLOCK_PROCESS_CPUTIME_ID)
  end
end

def median(xs)
  s = xs.sort
  s.size.odd? ? s[s.size / 2] : (s[s.size / 2 - 1] + s[s.size / 2]) / 2.0
end

pairs = req['pairs'].map { |src, xpp| [src, File.binread(src).force_encoding('UTF-8'), File.binread(xpp)] }
bytes = pairs.sum { |_, s, _| s.bytesize }
rounds = req['rounds']
rt = PuppetX::Xpp::Runtime
env = Puppet::Node::Environment.create(:bench, [])
res = Puppet.override(loaders: Puppet::Pops::Loaders.new(env), current_environment: env) do
  parser = Puppet::Pops::Parser::EvaluatingParser.new
  loaders = Puppet.lookup(:loaders)
  sides = {
    'parse' => -> { pairs.each { |path, s, _| parser.parse_string(s, path) } },
    'loader' => lambda do
      pairs.each do |path, s, x|
        doc = PuppetX::Xpp::Loader.load(x, path)
        why = rt.unusable(doc, s)
        raise "#{path}: #{why}" if why
        rt.replay(doc, path)
      end
    end,
  }
  if defined?(MessagePack::Unpacker)
    sides['deserializer'] = lambda do
      pairs.each do |_, _, x|
        payload = x.byteslice(x.index("\n\n") + 2..)
        S::Deserializer.new(BenchMsgPackReader.new(payload), loaders.private_environment_loader).read
      end
    end
  end
  same = pairs.count { |path, s, x| PuppetX::Xpp::Loader.load(x, path).program == parser.parse_string(s, path) }
  raise "only #{same} of #{pairs.size} loaded Programs equal Puppet's parse" unless same == pairs.size
  times = Hash.new { |h, k| h[k] = [] }
  gcs = Hash.new(0)
  names = sides.keys
  warmup = req['warmup'].to_i
  (warmup + rounds).times do |r|
    names.rotate(r).each do |name|
      next if name == 'deserializer' && (r < warmup || r >= warmup + 2)
      GC.start
      g = GC.count
      t = cpu
      sides[name].call
      next if r < warmup
      times[name] << cpu - t
      gcs[name] += GC.count - g
    end
  end
  out = { 'bytes' => bytes, 'files' => pairs.size, 'rounds' => rounds, 'warmup' => warmup, 'same_programs' => same,
          'ruby' => "#{RUBY_ENGINE} #{RUBY_ENGINE == 'jruby' ? JRUBY_VERSION : RUBY_VERSION}, Puppet #{Puppet.version}" }
  names.each { |n| out[n] = { 'best' => times[n].min, 'median' => median(times[n]), 'gc_runs' => gcs[n] } }
  out['ratio_best'] = times['parse'].min / times['loader'].min
  out['ratio_median'] = median(times['parse'].zip(times['loader']).map { |a, b| a / b })
  out
end
puts JSON.generate(res)

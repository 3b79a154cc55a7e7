# Test driver (run by tests/runtime/test_puppet_runtime.py under Puppet 7.23 or OpenVox 8): compiles one
# catalog with the xpp runtime installed, switched on or off, and prints one JSON object:
#   {"catalog": {resources, edges, classes}, "loaded": n, "served": n, "parsed": n, "logs": [...]}
# or, when the compile fails, "error": {message, issue_code, file, line, pos} instead of "catalog".
# "loaded" counts the Puppet-language files Puppet asked its parser for (absolute .pp paths, not EPP),
# whether or not the runtime served them.
#
# Mode "read" (argument "read"): for each [xpp, source] pair, the fast loader's Program compared with
# Puppet's own parse of the source (==, and every node shares the Locator) -> {"results": [[ok, why]...]}.
require 'json'
req = JSON.parse(File.read(ARGV[0]))
$LOAD_PATH.unshift(req['runtime_lib'])
require 'puppet_x/xpp/boot'
require 'puppet/test/test_helper'

args = ['--confdir', req['confdir'], '--vardir', req['vardir'], '--codedir', req['codedir'],
        '--environmentpath', req['environmentpath'], '--environment', req['environment'],
        req['xpp'] ? '--xpp' : '--no-xpp']
args += ['--strict', req['strict']] if req['strict']
Puppet.initialize_settings(args)

# Modes "read" and "widen": each [xpp, source] pair of the request through the block (in a loader
# context), a FormatError counted as a failure; prints {"results": [[ok, why]...]} and exits.
def pair_results(req)
  env = Puppet::Node::Environment.create(:x, [])
  out = Puppet.override(loaders: Puppet::Pops::Loaders.new(env)) do
    req['pairs'].map do |xpp, src|
      yield xpp, src
    rescue PuppetX::Xpp::FormatError => e
      [false, "FormatError: #{e.message}"]
    end
  end
  puts JSON.generate('results' => out)
  exit 0
end

if req['mode'] == 'read'
  pair_results(req) do |xpp, src|
    doc = PuppetX::Xpp::Loader.load_file(xpp, src)
    own = Puppet::Pops::Parser::Parser.new.parse_file(src).model
    prog = doc.program
    shared = true
    prog._pcore_all_contents([]) { |m| shared &&= m.locator.equal?(prog.locator) if m.is_a?(Puppet::Pops::Model::Positioned) }
    [prog == own && shared && prog.locator.file == src, prog == own ? (shared ? 'ok' : 'locator not shared') : 'differs']
  end
end

if req['mode'] == 'widen'
  # The same payloads in msgpack's widest encodings (every integer 9 bytes, every string str32, every
  # extension ext32 with its payload widened too): still the same Pcore stream, so the loader must give
  # the same Program as from the file and as Puppet's own parse -- this drives the loader's general
  # decoding paths, which puppet-xpp's shortest encodings never reach.  {"results": [[ok, why]...]}
  def widen(v)
    case v
    when Integer then v >= 0 ? "\xcf".b + [v].pack('Q>') : "\xd3".b + [v].pack('q>')
    when String then (v.encoding == Encoding::BINARY ? "\xc6".b : "\xdb".b) + [v.bytesize].pack('N') + v.b
    when Float then "\xcb".b + [v].pack('G')
    when MessagePack::ExtensionValue
      u = MessagePack::Unpacker.new
      u.feed(v.payload)
      body = +''.b
      u.each { |x| body << widen(x) } # index/count, a REGEXP's source, PCORE_OBJECT_START's sequence
      "\xc9".b + [body.bytesize, v.type].pack('NC') + body
    else MessagePack.pack(v) # nil, true, false
    end
  end
  require 'msgpack' # (this mode rewrites payloads with the gem; the loader itself reads without it)
  pair_results(req) do |xpp, src|
    data = File.binread(xpp)
    cut = data.index("\n\n")
    u = MessagePack::Unpacker.new(allow_unknown_ext: true)
    u.feed(data.byteslice(cut + 2..))
    wide = +''.b
    u.each { |x| wide << widen(x) }
    head = data.byteslice(0, cut).sub(/checksum=sha256-[0-9a-f]+/, "checksum=sha256-#{PuppetX::Xpp.sha256_hex(wide)}")
    prog = PuppetX::Xpp::Loader.load(head + "\n\n" + wide, src).program
    own = Puppet::Pops::Parser::Parser.new.parse_file(src).model
    orig = PuppetX::Xpp::Loader.load(data, src).program
    ok = prog == own && prog == orig && wide.bytesize > data.bytesize - cut
    [ok, ok ? 'ok' : 'differs']
  end
end

if req['mode'] == 'fuzz'
  # Damaged copies of .xpp files: {"format_error": n, "loaded": n, "other": [descriptions]}; with the
  # envelope checksum kept, every payload change must be a FormatError; without it, any outcome but a
  # FormatError or a loaded Program is a failure.
  rng = Random.new(req['seed'])
  env = Puppet::Node::Environment.create(:x, [])
  out = { 'format_error' => 0, 'loaded' => 0, 'other' => [], 'loaded_with_checksum' => 0 }
  Puppet.override(loaders: Puppet::Pops::Loaders.new(env)) do
    docs = req['files'].map { |f| File.binread(f) }
    req['count'].times do |i|
      data = docs[i % docs.size]
      keep = i.even? # keep the checksum, or strip it
      head_end = data.index("\n\n") + 2
      unless keep
        head = data.byteslice(0, head_end - 2).sub(/; checksum=sha256-[0-9a-f]+/, '')
        data = head + "\n\n" + data.byteslice(head_end..)
        head_end = head.bytesize + 2
      end
      d = data.dup
      pos = head_end + rng.rand(d.bytesize - head_end)
      case rng.rand(4)
      when 0 then d = d.byteslice(0, pos)
      when 1 then d.setbyte(pos, d.getbyte(pos) ^ (1 << rng.rand(8)))
      when 2 then d = d.byteslice(0, pos) + d.byteslice(pos + 1 + rng.rand(16)..).to_s
      else d = d.byteslice(0, pos) + rng.bytes(1 + rng.rand(8)) + d.byteslice(pos..)
      end
      next if d == data
      begin
        doc = PuppetX::Xpp::Loader.load(d, '/x.pp')
        out['loaded'] += 1
        out['loaded_with_checksum'] += 1 if keep
        out['other'] << "not a Program: #{doc.program.class}" unless doc.program.nil? || doc.program.is_a?(Puppet::Pops::Model::Program)
      rescue PuppetX::Xpp::FormatError
        out['format_error'] += 1
      rescue Exception => e # rubocop:disable Lint/RescueException
        out['other'] << "#{e.class}: #{e.message[0, 200]}"
      end
    end
  end
  puts JSON.generate(out)
  exit 0
end

$loaded = 0
$parse_cpu = 0.0 # CPU seconds inside the parser's entry points (parse + validate, or the .xpp loader)
def cpu
  Process.clock_gettime(Process::CLOCK_PROCESS_CPUTIME_ID)
end

module CountLoads
  def parse_string(s, f = nil)
    $loaded += 1 if f.is_a?(String) && f.end_with?('.pp') && !is_a?(Puppet::Pops::Parser::EvaluatingParser::EvaluatingEppParser)
    t = cpu
    super
  ensure
    $parse_cpu += cpu - t
  end

  def parse_file(f)
    $loaded += 1 if f.is_a?(String) && f.end_with?('.pp') && !is_a?(Puppet::Pops::Parser::EvaluatingParser::EvaluatingEppParser)
    t = cpu
    super
  ensure
    $parse_cpu += cpu - t
  end
end
Puppet::Pops::Parser::EvaluatingParser.prepend(CountLoads)

logs = []
Puppet::Util::Log.newdestination(Puppet::Test::LogCollector.new(logs))
Puppet::Util::Log.level = (req['log_level'] || 'info').to_sym # 'debug': the runtime's per-file lines too

# One catalog (the environment's main manifest, or `code`): {"catalog" => ...} or {"error" => ...}
def compile_one(req, code)
  Puppet[:code] = code if code
  env = Puppet.lookup(:environments).get!(req['environment'])
  facts = Puppet::Node::Facts.new(req['node'], req['facts'])
  node = Puppet::Node.new(req['node'], environment: env, facts: facts)
  node.merge(req['facts'])
  catalog = Puppet.override(current_environment: env) { Puppet::Parser::Compiler.compile(node) }
  data = catalog.to_data_hash
  { 'catalog' => { 'resources' => data['resources'], 'edges' => data['edges'], 'classes' => data['classes'] } }
rescue Puppet::Error, ArgumentError => e
  cause = e
  cause = cause.cause while !cause.is_a?(Puppet::ParseErrorWithIssue) && cause.cause
  { 'error' => { 'message' => cause.message, 'class' => cause.class.name,
                 'issue_code' => (cause.issue_code.to_s if cause.respond_to?(:issue_code)),
                 'file' => (cause.file if cause.respond_to?(:file)), 'line' => (cause.line if cause.respond_to?(:line)),
                 'pos' => (cause.pos if cause.respond_to?(:pos)) } }
end

served = parsed = 0
if req['classes'] # one catalog per class (`include <class>`), all in this process
  t0 = cpu
  result = { 'catalogs' => req['classes'].map do |c|
    r = compile_one(req, "include #{c}\n")
    st = PuppetX::Xpp::Runtime.stats
    served += st.served
    parsed += st.parsed
    r
  end }
  result['compile_cpu'] = cpu - t0
else
  t0 = cpu
  result = compile_one(req, nil)
  result['compile_cpu'] = cpu - t0
  st = PuppetX::Xpp::Runtime.stats
  served, parsed = st.served, st.parsed
end
result['loaded'] = $loaded
result['parse_cpu'] = $parse_cpu
result['served'] = served
result['parsed'] = parsed
result['logs'] = logs.map { |l| { 'level' => l.level.to_s, 'message' => l.message.to_s, 'file' => l.file, 'line' => l.line, 'pos' => l.pos } }
puts JSON.generate(result)

# Development-time generator of server/analysis/data/builtins-<level>.json: the names, signatures, attributes,
# allowed values and namevars of a Puppet's built-in functions and core resource types, and the names
# of the installed Facter's core facts.  Run from the repository root, once per language level:
#
#     ruby server/analysis/gen_builtins.rb > server/analysis/data/builtins-7.23.json               # Debian's Puppet 7.23
#     ruby -I "$(python3 -c 'from tests.conformance.puppets import openvox_lib; print(openvox_lib())')" \
#         server/analysis/gen_builtins.rb > server/analysis/data/builtins-8.json                   # OpenVox 8
#
# Only facts about the API are written (names, types, value lists, arities) -- no documentation
# prose; the language server shows reference text at run time from an installed Puppet when present.
#
# The helpers (PuppetXppApi) also serve the conformance oracle (tests/conformance/ruby/ops/ruby_api.rb),
# which asks Puppet how it loads a module's functions and types to check server/analysis/ruby_index.py.
require 'json'
require 'puppet'
require 'tmpdir'

# What Puppet itself says about a loaded function or resource type, as plain data.
module PuppetXppApi
  # type aliases by name (not their expansion), as Puppet's reference shows them
  def self.type_s(t)
    return nil if t.nil?
    tf = Puppet::Pops::Types::TypeFormatter.new
    tf.instance_variable_set(:@expanded, false)
    tf.string(t)
  end

  # one signature of a 4.x dispatcher: {params: [{name, type, kind}], return_type}
  def self.signature(d)
    ct = d.type
    tuple = ct.param_types
    types = tuple.types
    size = tuple.size_type
    min = size ? size.from : types.size
    names = d.parameter_names
    params = []
    names.each_with_index do |n, i|
      kind = i >= min ? 'optional' : 'required'
      kind = 'repeated' if d.last_captures_rest? && i == names.size - 1
      params << { 'name' => n.to_s, 'type' => type_s(types[i] || types[-1]), 'kind' => kind }
    end
    if ct.block_type
      bt = ct.block_type
      optional = bt.is_a?(Puppet::Pops::Types::POptionalType)
      params << { 'name' => (d.block_name || 'block').to_s,
                  'type' => type_s(optional ? bt.optional_type : bt),
                  'kind' => optional ? 'optional_block' : 'block' }
    end
    { 'params' => params, 'return_type' => type_s(ct.return_type) }
  end

  def self.signatures(f)
    f.class.respond_to?(:dispatcher) ? f.class.dispatcher.signatures.map { |d| signature(d) } : []
  end

  # collects the type aliases a type refers to (a visitor of Puppet's type acceptor)
  class AliasCollector
    attr_reader :found

    def initialize
      @found = {}
    end

    def visit(type, _guard)
      @found[type.name] = type if type.is_a?(Puppet::Pops::Types::PTypeAliasType)
    end
  end

  # the aliases a function's signatures name (its local types, such as downcase's StringData):
  # {name => the type it stands for, as written with aliases by name}
  def self.aliases(f)
    return {} unless f.class.respond_to?(:dispatcher)
    collector = AliasCollector.new
    f.class.dispatcher.signatures.each { |d| d.type.accept(collector, nil) }
    collector.found.keys.sort.to_h { |n| [n, type_s(collector.found[n].resolved_type)] }
  end

  # a resource type's attributes (metaparameters left out): {name => {kind, values, namevar}}, namevars
  def self.type_info(t)
    attrs = {}
    keys = t.key_attributes.map(&:to_s)
    t.allattrs.each do |a|
      next if Puppet::Type.metaparam?(a)
      kind = t.attrtype(a)
      next if kind.nil?
      klass = t.attrclass(a)
      values = []
      if klass.respond_to?(:value_collection) && klass.value_collection
        klass.value_collection.values.each { |v| values << v.to_s }
        values.uniq!
      end
      attrs[a.to_s] = { 'kind' => kind.to_s, 'values' => values }
      attrs[a.to_s]['namevar'] = true if keys.include?(a.to_s) && kind == :param
    end
    { 'attributes' => attrs, 'namevars' => keys }
  end
end

return unless $PROGRAM_NAME == __FILE__

# Ruby >= 2.7 dropped scanf from the standard library; the scanf function only needs it when called
$LOADED_FEATURES << 'scanf.rb' unless begin; require 'scanf'; rescue LoadError; false; end

Puppet.initialize_settings(['--confdir', Dir.mktmpdir, '--vardir', Dir.mktmpdir, '--codedir', Dir.mktmpdir])

functions = {}
env = Puppet::Node::Environment.create(:gen_builtins, [])
Puppet.override(current_environment: env, loaders: Puppet::Pops::Loaders.new(env)) do
  loader = Puppet.lookup(:loaders).puppet_system_loader
  dir = File.join(File.dirname(Puppet.method(:version).source_location[0]), 'functions')
  Dir.glob(File.join(dir, '*.rb')).map { |p| File.basename(p, '.rb') }.sort.each do |name|
    f = begin
      loader.load(:function, name)
    rescue LoadError, StandardError => e
      warn "#{name}: #{e.class}: #{e.message} (signatures read without its helper library)"
      nil
    end
    if f.nil?
      functions[name] = { 'api' => '4.x', 'signatures' => [] }
      next
    end
    functions[name] = { 'api' => '4.x', 'signatures' => PuppetXppApi.signatures(f) }
    aliases = PuppetXppApi.aliases(f)
    functions[name]['aliases'] = aliases unless aliases.empty?
  end
  # 3.x functions without a 4.x implementation: arity and type only
  Puppet::Parser::Functions.autoloader.loadall(env)
  Puppet::Parser::Functions.environment_module(env).all_function_info.each do |name, info|
    n = name.to_s
    next if functions.key?(n) && !functions[n]['signatures'].empty?
    functions[n] = { 'api' => '3.x', 'arity' => info[:arity], 'rvalue' => info[:type] == :rvalue,
                     'signatures' => [] }
  end
end

types = {}
Puppet::Type.loadall
Puppet::Type.eachtype do |t|
  next if t.name == :component || t.name == :whit
  types[t.name.to_s] = PuppetXppApi.type_info(t)
end

metaparams = Puppet::Type.metaparams.map(&:to_s).sort

facts = {}
begin
  require 'facter'
  dir = File.join(File.dirname($LOADED_FEATURES.find { |f| f.end_with?('/facter.rb') } || ''), 'facter', 'facts')
  Dir.glob(File.join(dir, '{linux,debian,el,sles,freebsd,solaris,macosx,windows,aix,openbsd,bsd}', '**', '*.rb')).sort.each do |file|
    text = File.read(file)
    names = text.scan(/FACT_NAME\s*=\s*'([^']+)'/).flatten
    aliases = text.scan(/ALIASES\s*=\s*(\[[^\]]*\]|'[^']*')/).flatten.join(' ').scan(/'([^']+)'/).flatten
    os_family = file.split('/facts/')[1].split('/')[0]
    names.each { |n| (facts[n] ||= { 'legacy' => false, 'os' => [] })['os'] |= [os_family] }
    aliases.each { |n| (facts[n] ||= { 'legacy' => true, 'os' => [] })['os'] |= [os_family] }
  end
rescue LoadError
end

puts JSON.pretty_generate({
  'generated_from' => { 'puppet' => Puppet.version, 'facter' => (defined?(Facter) ? Facter.version : nil) },
  'functions' => functions.sort.to_h,
  'types' => types.sort.to_h,
  'metaparameters' => metaparams,
  'facts' => facts.sort.to_h,
})

# frozen_string_literal: true
# op "ruby_api": how Puppet itself loads the Ruby functions and resource types of modules, to check the
# language server's static reading of them (server/analysis/ruby_index.py).  The data shapes come from the
# built-ins generator's helpers (server/analysis/gen_builtins.rb, PuppetXppApi).
#
# Args: modulepath (list of module directories), functions (4.x names), functions3 (3.x names),
#       types (resource type names).
# Each module's lib/ is on $LOAD_PATH while the types load (as pluginsync's lib directory is on an agent's),
# so a type's `require 'puppet_x/...'` finds its helpers; the module types loaded by earlier requests (from
# another module path, perhaps) are dropped first: Puppet keeps loaded types by name.
# Result: {functions: {name => {signatures} | {error}}, functions3: {name => {arity, rvalue} | {error}},
#          types: {name => {attributes, namevars} | {error}}}
load File.expand_path('../../../../server/analysis/gen_builtins.rb', __dir__)

Oracle.register('ruby_api') do |req|
  mp = Array(req['modulepath']).map { |d| File.expand_path(d.to_s) }
  env = Puppet::Node::Environment.create(:ruby_api, mp)
  out = { 'functions' => {}, 'functions3' => {}, 'types' => {} }
  guard = lambda do |table, name, &blk|
    table[name] = blk.call
  rescue ScriptError, StandardError => e
    table[name] = { 'error' => "#{e.class}: #{e.message}" }
  end
  Puppet.override({ current_environment: env, loaders: Puppet::Pops::Loaders.new(env) }, 'ruby_api') do
    loader = Puppet.lookup(:loaders).private_environment_loader
    Array(req['functions']).each do |n|
      guard.call(out['functions'], n) do
        f = loader.load(:function, n)
        f ? { 'signatures' => PuppetXppApi.signatures(f) } : { 'error' => 'not found' }
      end
    end
    Array(req['functions3']).each do |n|
      guard.call(out['functions3'], n) do
        Puppet::Parser::Functions.function(n.to_sym, env) or raise ArgumentError, 'not found'
        info = Puppet::Parser::Functions.environment_module(env).get_function_info(n.to_sym)
        { 'arity' => info[:arity], 'rvalue' => info[:type] == :rvalue }
      end
    end
    libs = mp.flat_map { |d| Dir.glob(File.join(d, '*', 'lib')).sort }
    core = File.dirname(Puppet.method(:version).source_location[0])
    saved = $LOAD_PATH.dup
    $LOAD_PATH.concat(libs - $LOAD_PATH)
    (Puppet::Type.instance_variable_get(:@types) || {}).keys.each do |k|
      Puppet::Type.rmtype(k) unless File.exist?(File.join(core, 'type', "#{k}.rb"))
    end
    begin
      Array(req['types']).each do |n|
        guard.call(out['types'], n) do
          t = Puppet::Type.type(n.to_sym)
          t ? PuppetXppApi.type_info(t) : { 'error' => 'not found' }
        end
      end
    ensure
      $LOAD_PATH.replace(saved)
    end
  end
  out
end

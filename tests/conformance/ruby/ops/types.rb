# frozen_string_literal: true
# op "types": whether Puppet's type system accepts a value for a type, and the words it rejects it with, to
# check the deep checks' literal-type reading (server/analysis/deep/types.py).
#
# Args: type (the type's source text, as a parameter declares it), value (a literal's source text, evaluated
#       by Puppet's evaluator), modulepath (list of module directories whose types/*.pp aliases the type may
#       name; optional).
# Result: {instance: bool (TypeCalculator's instance?), message: the error a class parameter of that type
#          given that value raises (TypeMismatchDescriber.validate_parameters, subject "X", parameter "p"),
#          or nil when it is accepted; call: the error a one-parameter function of that type raises when
#          called with the value (describe_signatures), or nil}.
# A type that does not parse or names an unknown type answers ok: false (the oracle's error).
Oracle.register('types') do |req|
  mp = Array(req['modulepath']).map { |d| File.expand_path(d.to_s) }
  @types_envs ||= {}
  env = (@types_envs[mp] ||= Puppet::Node::Environment.create(:types, mp))
  loaders = Puppet::Pops::Loaders.new(env)
  Puppet.override({ current_environment: env, loaders: loaders }, 'types') do
    loader = loaders.private_environment_loader
    type = Puppet::Pops::Types::TypeParser.singleton.parse(req['type'].to_s, loader)
    node = Puppet::Node.new('oracle', environment: env)
    compiler = Puppet::Parser::Compiler.new(node)
    scope = Puppet::Parser::Scope.new(compiler)
    value = Puppet::Pops::Parser::EvaluatingParser.new.evaluate_string(scope, req['value'].to_s)
    tf = Puppet::Pops::Types::TypeFactory
    struct = tf.struct({ 'p' => type })
    message = begin
      Puppet::Pops::Types::TypeMismatchDescriber.validate_parameters('X', struct, { 'p' => value })
      nil
    rescue Puppet::ParseError => e
      e.message
    end
    callable = tf.callable(type)
    sig = Struct.new(:type, :parameter_names, :block_type, :block_name).new(callable, ['p'], nil, 'block')
    args = Puppet::Pops::Types::TypeCalculator.singleton.infer_set([value])
    instance = Puppet::Pops::Types::TypeCalculator.instance?(type, value)
    call = begin
      instance ? nil : Puppet::Pops::Types::TypeMismatchDescriber.singleton.describe_signatures('f', [sig], args)
    rescue StandardError => e # (a Callable parameter type: the describer itself fails)
      "#{e.class}: #{e.message}"
    end
    { 'instance' => instance, 'message' => message, 'call' => call }
  end
end

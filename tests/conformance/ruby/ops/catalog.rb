# frozen_string_literal: true
# op "catalog": compiles one catalog in-process, as a Puppet server compiles a node's catalog, so that the
# tests can hold the deep checks (server/analysis/deep) to what a real compile reports: the error that stops
# it (message, file, line, column, class, issue code) or the resources it made, and the warnings it logged.
#
# Args: environment (the environment directory: its environment.conf and hiera.yaml are Puppet's to read),
#       modulepath (list; default: the environment's own, from environment.conf or <environment>/modules),
#       manifest (the main manifest file or directory; default the environment's) or code (the main
#       manifest's text, as `puppet apply -e`), node (name, default "node.example.com"), facts (a hash),
#       strict_variables (bool, default Puppet's), strict ("off" | "warning" | "error", default Puppet's).
# Result: {ok: true, resources: n, classes: [...], warnings: [...]} when the catalog compiles, else
#         {ok: false, message, full_message, class, issue_code, file, line, column, warnings}.
# Each warning: {message, file, line, column}.  Every compile is independent (a fresh environment object,
# so its parsed manifests and its 3.x functions are its own); the settings it changes are put back.
module OracleCatalog
  module_function

  # Puppet's settings as the request asks, for the duration of the block.
  def with_settings(values)
    old = values.keys.to_h { |k| [k, Puppet[k]] }
    values.each { |k, v| Puppet[k] = v }
    yield
  ensure
    old&.each { |k, v| Puppet[k] = v }
  end

  # The environment the request names: its directory gives environment.conf (Hiera's environment layer reads
  # it through the environments loader), the request may override its module path and manifest.
  def environment(req)
    dir = File.expand_path(req['environment'].to_s)
    raise ArgumentError, "#{dir} is not a directory" unless File.directory?(dir)

    conf = Puppet::Settings::EnvironmentConf.load_from(dir, [])
    modulepath = if req['modulepath']
                   Array(req['modulepath']).map { |d| File.expand_path(d.to_s, dir) }
                 else
                   conf.modulepath.split(File::PATH_SEPARATOR).map { |d| File.expand_path(d, dir) }
                 end
    manifest = req['manifest'] ? File.expand_path(req['manifest'].to_s, dir) : File.expand_path(conf.manifest, dir)
    name = File.basename(dir).gsub(/[^a-z0-9_]/, '_')
    name = "env_#{name}" unless name.match?(/\A[a-z]/)
    [Puppet::Node::Environment.create(name.to_sym, modulepath, manifest), dir]
  end

  # The first exception of the cause chain that knows where it happened (else the innermost): Puppet wraps
  # a located error in "... on node x" errors that have no position.
  def located(error)
    chain = []
    e = error
    while e && !chain.include?(e)
      chain << e
      e = e.cause
    end
    chain.find { |x| x.is_a?(Puppet::ExternalFileError) && x.line } || chain.last
  end

  def error_answer(error)
    e = located(error)
    located_error = e.is_a?(Puppet::ExternalFileError)
    message = if e.is_a?(Puppet::ParseErrorWithIssue)
                e.basic_message
              elsif located_error
                Exception.instance_method(:to_s).bind_call(e)
              else
                e.message
              end
    {
      'ok' => false, 'message' => message, 'full_message' => error.message, 'class' => e.class.name,
      'issue_code' => (e.issue_code&.to_s if e.respond_to?(:issue_code)),
      'file' => (e.file if located_error), 'line' => (e.line if located_error),
      'column' => (e.pos if located_error)
    }
  end

  def warnings(logs)
    logs.select { |l| l.level == :warning }.map do |l|
      { 'message' => l.message.to_s, 'file' => l.file, 'line' => l.line, 'column' => l.pos }
    end
  end

  def compile(req)
    env, dir = environment(req)
    settings = {}
    settings[:code] = req['code'].to_s if req['code']
    settings[:strict_variables] = !!req['strict_variables'] if req.key?('strict_variables')
    settings[:strict] = req['strict'].to_sym if req['strict']
    settings[:code] = '' unless req['code'] # (a previous request's code must not stand for the manifest)
    node_name = (req['node'] || 'node.example.com').to_s
    facts = Puppet::Node::Facts.new(node_name, (req['facts'] || {}).dup)
    node = Puppet::Node.new(node_name, environment: env, facts: facts)
    node.merge(facts.values)
    environments = Puppet::Environments::StaticDirectory.new(env.name, dir, env)
    answer, logs = Oracle.capture_logs do
      with_settings(settings) do
        Puppet.override({ environments: environments, current_environment: env }, 'puppet-xpp catalog op') do
          catalog = Puppet::Parser::Compiler.compile(node)
          { 'ok' => true, 'resources' => catalog.resources.size, 'classes' => catalog.classes }
        end
      end
    rescue Puppet::Error, ArgumentError, TypeError, NameError => e
      error_answer(e)
    end
    answer.merge('warnings' => warnings(logs))
  end
end

Oracle.register('catalog') { |req| OracleCatalog.compile(req) }

#!/usr/bin/env ruby
# frozen_string_literal: true
#
# puppet-xpp conformance oracle: a long-running process that answers questions about the Puppet
# language by asking the real Puppet (the installed Debian package) in-process.
#
# Protocol: one JSON request per line on stdin, `{"id": N, "op": "NAME", ...args}`; one JSON answer per
# line on stdout, `{"id": N, "ok": true, "result": ...}` or
# `{"id": N, "ok": false, "error": "...", "class": "...", ...}` (parse errors add issue_code, line, pos, file).
# Optional request key `_cwd`: the directory that relative paths in the request are relative to.
#
# Ops are plugins in ops/<name>.rb (loaded at start), each calling
#   Oracle.register("name") { |req| ...; json_able_result }
# A block may raise; the exception becomes an `ok: false` answer. Helpers for ops: Oracle.source_of,
# Oracle.parse, Oracle.with_tasks, Oracle.environment, Oracle.error_data, Oracle.capture_logs.

require 'json'
require 'fileutils'
require 'tmpdir'

# The protocol owns the real stdout. Anything Puppet (or an op) prints goes to stderr instead.
PROTOCOL_OUT = STDOUT.dup
PROTOCOL_OUT.sync = true
STDOUT.reopen(STDERR)
$stdout = STDOUT
STDIN.set_encoding(Encoding::UTF_8)

require 'puppet'
require 'puppet/pops'
require 'puppet/pops/pn'

module Oracle
  @ops = {}
  @tmp = Dir.mktmpdir('puppet-xpp-oracle-')
  at_exit { FileUtils.rm_rf(@tmp) }

  Puppet.initialize_settings([
    '--confdir', File.join(@tmp, 'conf'),
    '--vardir', File.join(@tmp, 'var'),
    '--codedir', File.join(@tmp, 'code'),
    '--logdir', File.join(@tmp, 'log'),
    '--rundir', File.join(@tmp, 'run'),
  ])

  # Log destination that hands every Puppet log message to the current collector (if any).
  # It is installed once, so that Puppet never queues messages for lack of a destination.
  class LogSink
    attr_accessor :collector
  end
  SINK = LogSink.new
  Puppet::Util::Log.newdesttype :puppet_xpp_oracle do
    match 'Oracle::LogSink'
    def initialize(sink)
      @sink = sink
    end

    def handle(msg)
      c = @sink.collector
      c << msg if c
    end
  end
  Puppet::Util::Log.close_all
  Puppet::Util::Log.newdestination(SINK)

  EMPTY_ENV = Puppet::Node::Environment.create(:oracle, [])

  class << self
    attr_reader :ops

    def register(name, &block)
      @ops[name.to_s] = block
    end

    # The text and file name of a request: `source` (text, with optional `path` as the file name) or
    # `file` (read as UTF-8, like `puppet parser dump` does; the path is also the file name).
    # Returns [text, file_name_or_nil].
    def source_of(req)
      if req.key?('file') && !req['file'].nil?
        file = req['file'].to_s
        [Puppet::FileSystem.read(file, :encoding => 'utf-8'), file]
      elsif req.key?('source')
        path = req['path']
        [req['source'].to_s, path.nil? || path.empty? ? nil : path.to_s]
      else
        raise ArgumentError, "request needs 'source' or 'file'"
      end
    end

    # Whether a request is EPP: explicit `epp`, else by the file name extension.
    def epp?(req, file)
      return !!req['epp'] if req.key?('epp')
      !file.nil? && file.end_with?('.epp')
    end

    # Runs the block with Puppet[:tasks] set as given, restoring the old value afterwards.
    def with_tasks(tasks)
      old = Puppet[:tasks]
      Puppet[:tasks] = !!tasks
      begin
        yield
      ensure
        Puppet[:tasks] = old
      end
    end

    # Parses source text with Puppet's own parser (no validation) and returns the model (a Program).
    # Raises Puppet::ParseError (usually ParseErrorWithIssue) on syntax/lexer errors.
    def parse(source, file: nil, epp: false, tasks: false)
      with_tasks(tasks) do
        parser = epp ? Puppet::Pops::Parser::EppParser.new : Puppet::Pops::Parser::Parser.new
        result = parser.parse_string(source, file)
        result.respond_to?(:model) ? result.model : result
      end
    end

    # Parses the request's source/file, honouring its `epp` and `tasks` flags.
    def parse_request(req)
      source, file = source_of(req)
      parse(source, file: file, epp: epp?(req, file), tasks: req['tasks'])
    end

    # Puppet environment for the module-location checks, cached by (modulepath, manifest).
    def environment(modulepath, manifest)
      return EMPTY_ENV if (modulepath.nil? || modulepath.empty?) && manifest.nil?
      @envs ||= {}
      key = [Array(modulepath).map(&:to_s), manifest&.to_s]
      @envs[key] ||= begin
        mp = key[0].map { |d| File.expand_path(d) }
        mf = key[1].nil? ? Puppet::Node::Environment::NO_MANIFEST : File.expand_path(key[1])
        Puppet::Node::Environment.create(:oracle, mp, mf)
      end
    end

    # Collects the Puppet::Util::Log messages logged while the block runs. Returns [block_value, logs].
    def capture_logs
      logs = []
      old = SINK.collector
      SINK.collector = logs
      begin
        value = yield
      ensure
        SINK.collector = old
      end
      [value, logs]
    end

    # JSON-able description of an exception (for `ok: false` answers and for ops that report errors).
    def error_data(e)
      data = { 'error' => e.message, 'class' => e.class.name }
      if e.is_a?(Puppet::ParseErrorWithIssue)
        data['error'] = e.basic_message
        data['issue_code'] = e.issue_code&.to_s
        data['full_message'] = e.to_s
        data['arguments'] = plain_arguments(e.arguments)
      end
      if e.is_a?(Puppet::ExternalFileError)
        unless e.is_a?(Puppet::ParseErrorWithIssue)
          # the message without the " (file: .., line: .., column: ..)" suffix that to_s appends
          data['error'] = Exception.instance_method(:to_s).bind_call(e)
          data['full_message'] = e.to_s
        end
        data['file'] = e.file
        data['line'] = e.line
        data['pos'] = e.pos
      end
      data
    end

    def plain_arguments(args)
      return nil unless args.is_a?(Hash)
      args.each_with_object({}) do |(k, v), h|
        h[k.to_s] = [String, Integer, Float, TrueClass, FalseClass, NilClass].any? { |c| v.is_a?(c) } ? v : v.to_s
      end
    end

    def handle(req)
      id = req['id']
      op = @ops[req['op'].to_s]
      return { 'id' => id, 'ok' => false, 'error' => "unknown op #{req['op'].inspect}", 'class' => 'ArgumentError' } unless op
      cwd = req['_cwd']
      Dir.chdir(cwd) if cwd && cwd != Dir.pwd
      result, _logs = capture_logs { op.call(req) }
      { 'id' => id, 'ok' => true, 'result' => result }
    rescue StandardError, ScriptError, SystemStackError => e
      { 'id' => id, 'ok' => false }.merge(error_data(e))
    end

    def dump(obj)
      JSON.generate(obj, max_nesting: false, allow_nan: true)
    end

    def serve
      Puppet.override({ current_environment: EMPTY_ENV, loaders: Puppet::Pops::Loaders.new(EMPTY_ENV) },
                      'puppet-xpp oracle') do
        STDIN.each_line do |line|
          next if line.strip.empty?
          begin
            req = JSON.parse(line)
            answer = handle(req)
          rescue JSON::ParserError => e
            answer = { 'id' => nil, 'ok' => false, 'error' => e.message, 'class' => e.class.name }
          end
          begin
            text = dump(answer)
          rescue StandardError => e
            text = dump({ 'id' => answer['id'], 'ok' => false, 'error' => "cannot encode answer: #{e.message}",
                          'class' => e.class.name })
          end
          PROTOCOL_OUT.write(text, "\n")
        end
      end
    end
  end

  register('ping') { |_req| { 'puppet' => Puppet.version, 'ruby' => RUBY_VERSION, 'ops' => Oracle.ops.keys.sort } }

  # Parse only: ok if Puppet's parser accepts the source (no validation); the error otherwise.
  register('parse') do |req|
    Oracle.parse_request(req)
    true
  end
end

# A broken op file must not take the other ops down: its op answers with the load error instead.
Dir[File.join(__dir__, 'ops', '*.rb')].sort.each do |f|
  begin
    require f
  rescue StandardError, ScriptError => e
    warn "oracle: cannot load #{f}: #{e.class}: #{e.message}"
    failure = "op file #{File.basename(f)} failed to load: #{e.class}: #{e.message}"
    Oracle.register(File.basename(f, '.rb')) { |_req| raise LoadError, failure }
  end
end

Oracle.serve if $PROGRAM_NAME == __FILE__

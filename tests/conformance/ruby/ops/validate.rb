# frozen_string_literal: true
# op "validate": Puppet's static validation (parser + Checker4_0, or TasksChecker with tasks) of one source,
# collecting *all* diagnostics (EvaluatingParser stops at the first error; this does not).
#
# Args: source | file (+ path), epp (default: by .epp extension), tasks (bool),
#       strict ("off" | "warning" | "error", default Puppet's default "warning"),
#       modulepath (list of dirs) and manifest (path): the environment the module-location checks
#       (ILLEGAL_DEFINITION_LOCATION, ILLEGAL_TOP_CONSTRUCT_LOCATION) consult. Without them no location
#       check applies (as for `puppet apply -e`).
# Result: list of {severity, code, message, line, pos, offset, length, file}, in this order:
#   lexer warnings Puppet logged while parsing (UNRECOGNIZED_ESCAPE, ILLEGAL_UNICODE_ESCAPE; offset/length nil),
#   then either the one syntax/lexer error (severity "error"; offset/length nil) or the validator's
#   diagnostics in Puppet's order. severity is "error", "warning" or "deprecation".
module OracleValidate
  STRICT = { 'off' => :off, 'warning' => :warning, 'error' => :error }.freeze

  def self.entry(severity, code, message, file, line, pos, offset = nil, length = nil)
    { 'severity' => severity.to_s, 'code' => code&.to_s, 'message' => message,
      'line' => line, 'pos' => pos, 'offset' => offset, 'length' => length, 'file' => file }
  end

  def self.diagnostic(d)
    at = d.source_pos
    positioned = at.is_a?(Puppet::Pops::Model::Positioned)
    entry(d.severity, d.issue.issue_code, d.issue.format(d.arguments), d.file,
          positioned ? at.line : nil, positioned ? at.pos : nil,
          positioned ? at.offset : nil, positioned ? at.length : nil)
  end

  def self.with_strict(value)
    strict = STRICT.fetch((value || 'warning').to_s) { raise ArgumentError, "strict must be off, warning or error" }
    old = Puppet[:strict]
    Puppet[:strict] = strict
    begin
      yield
    ensure
      Puppet[:strict] = old
    end
  end

  def self.run(req)
    source, file = Oracle.source_of(req)
    env = Oracle.environment(req['modulepath'], req['manifest'])
    found = []
    _, logs = Oracle.capture_logs do
      with_strict(req['strict']) do
        Puppet.override({ current_environment: env }, 'puppet-xpp oracle validate') do
          Oracle.with_tasks(req['tasks']) do
            begin
              model = Oracle.parse(source, file: file, epp: Oracle.epp?(req, file), tasks: req['tasks'])
              acceptor = Puppet::Pops::Validation::Acceptor.new
              Puppet::Pops::Validation::ValidatorFactory_4_0.new.validator(acceptor).validate(model)
              acceptor.diagnostics.each { |d| found << diagnostic(d) }
            rescue Puppet::ParseError => e
              data = Oracle.error_data(e)
              found << entry(:error, data['issue_code'], data['error'], data['file'], data['line'], data['pos'])
            end
          end
        end
      end
    end
    lexer = logs.select { |l| l.respond_to?(:issue_code) && l.issue_code }.map do |l|
      entry(l.level == :err ? :error : l.level, l.issue_code, l.message, l.file, l.line, l.pos)
    end
    lexer + found
  end
end

Oracle.register('validate') { |req| OracleValidate.run(req) }

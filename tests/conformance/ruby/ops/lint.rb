# frozen_string_literal: true
# op "lint": puppet-lint 3.0.1 (Debian's puppet-lint package), in-process, on one manifest.
#
# Args: source | file (+ path: the file name puppet-lint is told, for autoloader_layout; default: file),
#       checks (list of enabled check names; default: puppet-lint's default set),
#       fix (bool), relative (bool: --relative).
# Result: {problems: [{check, kind, message, line, column, reason}], manifest: fixed text or nil,
#          crashed: nil or the message of an exception puppet-lint did not handle ("Whoops")}.
# Problems are in puppet-lint's report order; with fix, fixed ones have kind "fixed". `manifest` is what
# `puppet-lint --fix` would write (nil when it would not write: no fix asked, or a syntax error).
require 'stringio'
require 'puppet-lint'

module OracleLint
  CONFIG = PuppetLint.configuration
  DEFAULT_ENABLED = CONFIG.checks.select { |c| CONFIG.send("#{c}_enabled?") }.map(&:to_s).freeze

  def self.configure(req)
    enabled = req['checks'].nil? ? DEFAULT_ENABLED : req['checks'].map(&:to_s)
    CONFIG.checks.each do |c|
      CONFIG.send(enabled.include?(c.to_s) ? "enable_#{c}" : "disable_#{c}")
    end
    CONFIG.fix = !!req['fix']
    CONFIG.relative = !!req['relative']
  end

  def self.problem(p)
    { 'check' => p[:check].to_s, 'kind' => p[:kind].to_s, 'message' => p[:message], 'line' => p[:line],
      'column' => p[:column], 'reason' => p[:reason] }
  end

  def self.run(req)
    source, file = Oracle.source_of(req)
    path = req['path'] || file
    configure(req)
    PuppetLint::Lexer.heredoc_queue.clear
    linter = PuppetLint.new
    linter.code = source
    linter.path = path
    out = StringIO.new
    old = $stdout
    $stdout = out
    crashed = nil
    begin
      linter.run
    rescue SystemExit
      crashed = out.string[/^error:\n```\n(.*?)\n/m, 1] || 'exit'
    ensure
      $stdout = old
    end
    return { 'problems' => [], 'manifest' => nil, 'crashed' => crashed } if crashed

    problems = linter.problems || []
    syntax = problems.any? { |p| p[:check] == :syntax }
    manifest = req['fix'] && !syntax ? linter.manifest : nil
    { 'problems' => problems.map { |p| problem(p) }, 'manifest' => manifest, 'crashed' => nil }
  end
end

Oracle.register('lint') { |req| OracleLint.run(req) }

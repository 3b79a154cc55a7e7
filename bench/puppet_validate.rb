#!/usr/bin/env ruby
# frozen_string_literal: true
#
# Speed of Puppet's own static validator (Checker4_0), for comparison with puppet-xpp's (bench/bench_validate.py).
#
#   ruby bench/puppet_validate.rb [--rounds N] [--modulepath DIR[:DIR]] FILE... | @LISTFILE
#
# Reads and parses the files first (not timed; .epp with the EPP parser; files Puppet cannot parse are
# skipped), then validates every model N rounds (default 5), each into a fresh acceptor, with the given module
# path as the current environment (so the module-location checks run). Prints one JSON line:
#   {"files": validated, "skipped": n, "bytes": total, "rounds": N, "diagnostics": per_round,
#    "best_s": best_round_seconds, "mean_s": mean_round_seconds, "files_per_s": files / best_s}

require_relative '../tests/conformance/ruby/oracle' # Puppet settings + environment set-up, no serving

rounds = 5
modulepath = []
files = []
args = ARGV.dup
until args.empty?
  a = args.shift
  case a
  when '--rounds' then rounds = Integer(args.shift)
  when '--modulepath' then modulepath = args.shift.split(File::PATH_SEPARATOR)
  when /\A@(.+)/ then files.concat(File.readlines(Regexp.last_match(1), chomp: true).reject(&:empty?))
  else files << a
  end
end
abort 'usage: puppet_validate.rb [--rounds N] [--modulepath DIRS] FILE... | @LISTFILE' if files.empty? || rounds < 1

env = Oracle.environment(modulepath, nil)
times = []
count = 0
models = []
skipped = 0
bytes = 0
Puppet.override({ current_environment: env, loaders: Puppet::Pops::Loaders.new(env) }, 'puppet-xpp bench') do
  pp_parser = Puppet::Pops::Parser::Parser.new
  epp_parser = Puppet::Pops::Parser::EppParser.new
  files.each do |f|
    text = File.read(f, encoding: 'utf-8')
    begin
      models << (f.end_with?('.epp') ? epp_parser : pp_parser).parse_string(text, f).model
      bytes += text.bytesize
    rescue Puppet::ParseError
      skipped += 1
    end
  end
  factory = Puppet::Pops::Validation::ValidatorFactory_4_0.new
  rounds.times do
    GC.start
    count = 0
    t0 = Process.clock_gettime(Process::CLOCK_MONOTONIC)
    models.each do |model|
      acceptor = Puppet::Pops::Validation::Acceptor.new
      begin
        factory.validator(acceptor).validate(model)
      rescue Puppet::ParseError
        count += 1 # a heredoc syntax checker raised
      end
      count += acceptor.diagnostics.size
    end
    times << Process.clock_gettime(Process::CLOCK_MONOTONIC) - t0
  end
end

best = times.min
PROTOCOL_OUT.puts(JSON.generate(
  'files' => models.size, 'skipped' => skipped, 'bytes' => bytes, 'rounds' => rounds, 'diagnostics' => count,
  'best_s' => best.round(6), 'mean_s' => (times.sum / times.size).round(6),
  'files_per_s' => (models.size / best).round(1)
))

#!/usr/bin/env ruby
# frozen_string_literal: true
#
# Speed of Puppet's own parser, for comparison with puppet-xpp's.
#
#   ruby bench/puppet_parse.rb [--rounds N] [--validate] FILE... | @LISTFILE
#
# Reads the files (not timed), then parses all of them in-process, N rounds (default 5); .epp files with the
# EPP parser. With --validate each file is also statically validated (as EvaluatingParser does, all
# diagnostics collected). Prints one JSON line:
#   {"files": n, "bytes": total, "rounds": N, "mode": "parse"|"validate", "errors": files_failing,
#    "best_s": best_round_seconds, "mean_s": mean_round_seconds, "mb_per_s": bytes / best_s / 1e6}

require_relative '../tests/conformance/ruby/oracle' # Puppet settings + environment set-up, no serving

rounds = 5
validate = false
files = []
args = ARGV.dup
until args.empty?
  a = args.shift
  case a
  when '--rounds' then rounds = Integer(args.shift)
  when '--validate' then validate = true
  when /\A@(.+)/ then files.concat(File.readlines(Regexp.last_match(1), chomp: true).reject(&:empty?))
  else files << a
  end
end
abort 'usage: puppet_parse.rb [--rounds N] [--validate] FILE... | @LISTFILE' if files.empty? || rounds < 1

sources = files.map { |f| [f, File.read(f, encoding: 'utf-8'), f.end_with?('.epp')] }
bytes = sources.sum { |_, s, _| s.bytesize }

times = []
errors = 0
Puppet.override({ current_environment: Oracle::EMPTY_ENV, loaders: Puppet::Pops::Loaders.new(Oracle::EMPTY_ENV) },
                'puppet-xpp bench') do
  pp_parser = Puppet::Pops::Parser::Parser.new
  epp_parser = Puppet::Pops::Parser::EppParser.new
  factory = Puppet::Pops::Validation::ValidatorFactory_4_0.new
  rounds.times do
    GC.start
    errors = 0
    t0 = Process.clock_gettime(Process::CLOCK_MONOTONIC)
    sources.each do |file, text, epp|
      begin
        model = (epp ? epp_parser : pp_parser).parse_string(text, file).model
        if validate
          acceptor = Puppet::Pops::Validation::Acceptor.new
          factory.validator(acceptor).validate(model)
          errors += 1 if acceptor.errors?
        end
      rescue Puppet::ParseError
        errors += 1
      end
    end
    times << Process.clock_gettime(Process::CLOCK_MONOTONIC) - t0
  end
end

best = times.min
PROTOCOL_OUT.puts(JSON.generate(
  'files' => files.size, 'bytes' => bytes, 'rounds' => rounds, 'mode' => validate ? 'validate' : 'parse',
  'errors' => errors, 'best_s' => best.round(6), 'mean_s' => (times.sum / times.size).round(6),
  'mb_per_s' => (bytes / best / 1e6).round(4)
))

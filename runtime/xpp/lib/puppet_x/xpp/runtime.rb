# frozen_string_literal: true

# The PRFC-23 runtime hook: with the Puppet setting `xpp` on, every Puppet-language file Puppet parses
# (main manifests, autoloaded classes and defines, functions, type aliases, plans) is taken from the
# environment's `.xpp` tree when that file is usable, else parsed as Puppet always does.
#
# Where: `<env>/.xpp/modules/<module>/<path in the module, .pp -> .xpp>` for a file of a module on the
# environment's module path, `<env>/.xpp/modules/environment/<path in the environment>` for the
# environment's own files (the layout `puppet-xpp --compile` writes).
#
# Usable: it loads (envelope, checksum, payload), was made from the current source (the source embedded in
# the Program, or the recorded source-sha256, equals the file), and was validated under the running
# Puppet's settings (language level, `strict`, `tasks`) when it records them.  Otherwise one warning names
# the .xpp, the reason and the .pp that is parsed instead.
#
# A usable .xpp replays what Puppet's parse + validate would do: the lexer's warnings are logged, a syntax
# error is raised, validation diagnostics go through Puppet's own IssueReporter (warnings logged, errors
# raised with the same message, file, line and column).
require 'puppet_x/xpp/loader'

module PuppetX
  module Xpp
    module Runtime
      LEXER_ISSUES = %w[UNRECOGNIZED_ESCAPE ILLEGAL_UNICODE_ESCAPE].freeze
      MISSING = 'it does not exist'
      JSON_HEAD = 'application/vnd.puppet.pcore+json'
      # `@(TAG:syntax` somewhere in a source: only then can it hold a heredoc with a syntax (a cheap test
      # before walking the AST).
      HEREDOC_WITH_SYNTAX = /@\([^)\r\n]*:/.freeze
      # One compile's (or, outside a compile, the thread's) counts; `fallbacks` (reason => the .xpp, or
      # the .pp when it has none, in load order) is set only inside a compile: its files are then summed up
      # in one warning at the end (each file's own line at debug level) instead of one warning each.
      Stats = Struct.new(:served, :parsed, :seconds, :fallbacks)
      # how many files of each reason the summary names
      SUMMARY_FILES = 3
      # An Issue-like object that renders the recorded message (the record carries Puppet's rendering).
      RecordedIssue = Struct.new(:issue_code, :message) do
        def format(_args = nil)
          message
        end

        def demotable?
          false
        end
      end
      SourcePos = Struct.new(:offset, :length, :line, :pos, :file)

      class << self
        def install
          Puppet.settings.define_settings(:main, xpp: {
            default: false,
            type: :boolean,
            desc: 'Load Puppet-language files from the environment\'s .xpp tree (PRFC-23) when a usable ' \
                  'one exists (see the xpp module\'s README).',
          }) unless Puppet.settings.setting(:xpp)
          Puppet::Pops::Parser::EvaluatingParser.prepend(ParserHook)
          Puppet::Parser::Compiler.singleton_class.prepend(CompilerHook)
        end

        def enabled?
          Puppet[:xpp] == true
        rescue StandardError
          false
        end

        def stats
          Thread.current[:puppet_x_xpp_stats] ||= Stats.new(0, 0, 0.0)
        end

        # A new compile's counts (`summarize`: collect the fallbacks for #fallback_summary).
        def reset_stats(summarize: false)
          Thread.current[:puppet_x_xpp_stats] = Stats.new(0, 0, 0.0, summarize ? {} : nil)
        end

        # The one warning of a compile that parsed files instead of loading their .xpp: how many, and per
        # reason the count and the first few files (nil when every file was served).
        def fallback_summary(st, node)
          return nil if st.fallbacks.nil? || st.fallbacks.empty?
          groups = st.fallbacks.map do |reason, files|
            shown = files.first(SUMMARY_FILES).join(', ')
            shown += ", and #{files.size - SUMMARY_FILES} more" if files.size > SUMMARY_FILES
            "#{files.size} because #{reason} (#{shown})"
          end
          hint = ''
          if st.fallbacks.key?(MISSING)
            envdir = (node.environment.configuration.path_to_env rescue nil) || 'ENVDIR'
            hint = "; `puppet-xpp --compile #{envdir}` writes the missing files"
          end
          # (JSON-encoded files are parsed too, but said once per process, not here: #json_skipped)
          format('xpp: not using the .xpp of %d of %d manifests (parsed instead), node %s: %s%s; each file at debug level',
                 st.fallbacks.each_value.sum(&:size), st.parsed + st.served, node.name, groups.join('; '), hint)
        end

        # The language level of the running Puppet, as puppet-xpp names it: 8, 7 (7.29+) or 7.23.
        def level
          @level ||= begin
            major, minor = Puppet.version.split('.').map(&:to_i)
            if major >= 8 then '8'
            elsif major == 7 && minor >= 29 then '7'
            else '7.23'
            end
          end
        end

        # The .xpp of source `file` in the current environment, or nil when it lies outside its layout (no
        # .xpp was ever meant for it: `puppet apply /tmp/x.pp`, an environment without a directory).
        def xpp_path_for(file)
          env = Puppet.lookup(:current_environment) { nil }
          return nil unless env
          conf = env.configuration rescue nil
          envdir = conf&.path_to_env
          return nil unless envdir
          envdir = File.expand_path(envdir)
          file = File.expand_path(file)
          base = File.join(envdir, '.xpp', 'modules')
          env.full_modulepath.each do |dir|
            prefix = File.expand_path(dir) + '/'
            next unless file.start_with?(prefix)
            mod, inner = file[prefix.size..].split('/', 2)
            return File.join(base, mod, xpp_name(inner)) if inner
          end
          prefix = envdir + '/'
          return File.join(base, 'environment', xpp_name(file[prefix.size..])) if file.start_with?(prefix)
          rel = outside_manifest(conf, file)
          rel && File.join(base, 'environment', 'manifests', xpp_name(rel))
        end

        # `file`'s path below `manifests/` when it is the environment's configured main manifest
        # (environment.conf's `manifest`, else `default_manifest`) lying outside the environment and its
        # module path: its file name, or its path inside a manifest directory (docs/xpp-format.md).  The
        # manifest `puppet apply FILE` names replaces the environment's only for that run: not this one.
        def outside_manifest(conf, file)
          manifest = conf.manifest
          return nil unless manifest.is_a?(String) && !manifest.empty?
          manifest = File.expand_path(manifest)
          return File.basename(file) if file == manifest
          prefix = manifest + '/'
          file[prefix.size..] if file.start_with?(prefix)
        rescue StandardError
          nil
        end

        def xpp_name(rel)
          rel.end_with?('.pp') ? rel[0...-3] + '.xpp' : rel + '.xpp'
        end

        # The Program of `file` from its .xpp, or what the block (Puppet's own parse) returns.
        def load(file, source)
          t0 = Process.clock_gettime(Process::CLOCK_MONOTONIC)
          st = stats
          xpp = xpp_path_for(file)
          if xpp.nil? # never compiled (not in the layout): parsed, as without the runtime, without a warning
            Puppet.debug("xpp: #{file} lies outside the environment's .xpp layout; parsing it")
            return yield
          end
          doc = nil
          reason =
            if !File.exist?(xpp)
              MISSING
            else
              begin
                data = read_xpp(xpp)
                if data.start_with?(JSON_HEAD)
                  json_skipped(st, xpp, file)
                  return yield
                end
                source ||= File.binread(file)
                doc = Loader.load(data, file)
                unusable(doc, source)
              rescue FormatError => e
                e.message
              end
            end
          if reason
            st.parsed += 1
            line = "xpp: not using #{xpp || "an .xpp for #{file}"}: #{reason}; parsing #{file} instead"
            if st.fallbacks
              Puppet.debug(line)
              (st.fallbacks[reason] ||= []) << (xpp || file)
            else
              Puppet.warning(line)
            end
            return yield
          end
          st.served += 1
          replay(doc, file)
        ensure
          st.seconds += Process.clock_gettime(Process::CLOCK_MONOTONIC) - t0 if st
        end

        def read_xpp(xpp)
          File.binread(xpp)
        rescue SystemCallError, IOError => e
          raise FormatError, "cannot read #{xpp}: #{e.message}"
        end

        # A JSON-encoded .xpp (`puppet-xpp --compile --format json`) is for reading by people and tools:
        # Puppet's own Pcore deserializer reads it about 8x slower than Puppet parses the source (0.11x
        # parse + validate, 175 corpus files on Puppet 7.23 and OpenVox 8), so the runtime parses the
        # source instead and says so once per process; each file at debug level.
        def json_skipped(st, xpp, file)
          st.parsed += 1
          Puppet.debug("xpp: not using #{xpp}: it is JSON-encoded (for inspection only); parsing #{file} instead")
          return if @json_said
          @json_said = true
          Puppet.warning("xpp: .xpp files in the JSON encoding (e.g. #{xpp}) are for inspection only and are " \
                         'not loaded (reading them is slower than parsing); their sources are parsed instead. ' \
                         'Compile with the default encoding (msgpack) for Puppet to use them.')
        end

        # Why `doc` cannot stand for `source` under the running settings (nil: it can).
        def unusable(doc, source)
          p = doc.params
          v = p['puppet-version']
          return "it was validated at language level #{v.tr('_', '.')}, this Puppet is #{level}" if v && v.tr('_', '.') != level
          s = p['strict']
          return "it was validated with strict=#{s}, running with strict=#{Puppet[:strict]}" if s && s != Puppet[:strict].to_s
          t = p['tasks']
          return "it was validated with tasks=#{t}, running with tasks=#{!!Puppet[:tasks]}" if t && (t == 'true') != !!Puppet[:tasks]
          if doc.program
            return 'it is stale (its source differs from the file)' unless same_bytes?(doc.program.locator.string, source)
          else
            d = p['source-sha256']
            return 'it holds neither a program nor diagnostics' if doc.diagnostics.empty?
            return 'it has neither a program nor a source digest: cannot tell whether it is current' unless d
            return 'it is stale (its source digest differs from the file)' if d != Xpp.sha256_hex(source.b)
          end
          nil
        end

        # Byte equality whatever the encodings say (no copies when they are the same).
        def same_bytes?(a, b)
          a.bytesize == b.bytesize && (a.encoding == b.encoding ? a == b : a.b == b.b)
        end

        # Puppet's parse + validate outcome from the recorded diagnostics; returns the Program.
        def replay(doc, file)
          recs = doc.diagnostics
          program = doc.program
          heredocs = program ? checked_heredocs(program) : []
          # nothing to replay (most files): Puppet's IssueReporter does nothing for an empty acceptor
          return program if recs.empty? && heredocs.empty? && program
          raise_recorded(recs.find { |r| r['severity'] == 'error' }, file) if program.nil?
          # what a heredoc's syntax checker said at compile time (its error, and what it logged: no offset)
          # depends on the libraries of the Puppet that compiled; the running Puppet's checkers say it again
          recs = recs.reject { |r| checker_record?(r) } unless heredocs.empty?
          lexer, rest = recs.partition { |r| LEXER_ISSUES.include?(r['issue_code']) && !r['offset'].nil? }
          lexer.each { |r| log(:warning, r, file) }
          unless heredocs.empty?
            checker = HeredocChecker.new
            heredocs.each { |h| checker.assert_external_syntax(nil, h.text_expr.value, h.syntax, h.text_expr) }
          end
          acceptor = Puppet::Pops::Validation::Acceptor.new
          rest.each do |r|
            if r['offset'].nil? && !r['line'].nil? # logged by a heredoc syntax checker
              log(r['severity'] == 'error' ? :err : :warning, r, nil)
              next
            end
            sev = r['severity'].to_s.to_sym
            pos = SourcePos.new(r['offset'], r['length'], r['line'], r['pos'], file)
            issue = RecordedIssue.new(r['issue_code'].to_s.to_sym, r['message'].to_s)
            acceptor.accept(Puppet::Pops::Validation::Diagnostic.new(sev, issue, file, pos, symbolize(r['arguments'])))
          end
          Puppet::Pops::IssueReporter.assert_and_report(acceptor, emit_warnings: true)
          program
        end

        # Raises the recorded error of a file without a Program as Puppet's parser raises it.  A syntax
        # error carries the file (and a line and column except at the end of the input, recorded without);
        # invalid UTF-8 is Ruby's ArgumentError and a byte order mark Puppet's error without a file: Puppet's
        # evaluator then wraps both at the call that loaded the file (`include`, autoloading), as here.
        def raise_recorded(err, file)
          err ||= { 'message' => 'unknown error', 'issue_code' => 'SYNTAX_ERROR' }
          code = err['issue_code'].to_s
          case code
          when 'INVALID_ENCODING' then raise ArgumentError, err['message']
          when 'ILLEGAL_BOM'
            raise Puppet::ParseErrorWithIssue.new(err['message'], nil, nil, nil, nil, :ILLEGAL_BOM, symbolize(err['arguments']))
          when 'SYNTAX_ERROR' # Puppet's parser gives no arguments
            raise Puppet::ParseErrorWithIssue.new(err['message'], file, err['line'], err['pos'], nil, :SYNTAX_ERROR)
          else
            raise Puppet::ParseErrorWithIssue.new(err['message'], file, err['line'], err['pos'], nil, code.to_sym,
                                                  symbolize(err['arguments']))
          end
        end

        # The heredocs Puppet's validator hands to a syntax checker, in its order (Checker4_0 visits the
        # Program, then its contents depth first): static text and a syntax for which a checker is
        # registered in the running Puppet.
        def checked_heredocs(program)
          text = program.locator.string
          return [] unless text.match?(HEREDOC_WITH_SYNTAX)
          found = []
          checker = nil
          program._pcore_all_contents([]) do |m|
            next unless m.is_a?(Puppet::Pops::Model::HeredocExpression)
            syntax = m.syntax
            next if syntax.nil? || syntax.empty? || !m.text_expr.is_a?(Puppet::Pops::Model::LiteralString)
            checker ||= HeredocChecker.new
            found << m if checker.checker_for_syntax(nil, syntax)
          end
          found
        end

        # A record of a heredoc's syntax checker: its error (ILLEGAL_JSON, ILLEGAL_PP, ...: arguments
        # `syntax` and `detail`) or a diagnostic it logged (no offset: positioned in the heredoc's text).
        def checker_record?(r)
          r['offset'].nil? || (r['arguments'].is_a?(Hash) && r['arguments'].key?('syntax') && r['arguments'].key?('detail'))
        end

        def log(level, r, file)
          Puppet::Util::Log.create(level: level, message: r['message'], issue_code: r['issue_code'].to_s.to_sym,
                                   file: file, line: r['line'], pos: r['pos'])
        end

        def symbolize(h)
          h.is_a?(Hash) ? h.each_with_object({}) { |(k, v), o| o[k.to_sym] = v } : {}
        end
      end

      # Puppet's own heredoc checking (the evaluator's ExternalSyntaxSupport, which its validator uses).
      class HeredocChecker
        include Puppet::Pops::Evaluator::ExternalSyntaxSupport
      end

      # Prepended to Puppet::Pops::Parser::EvaluatingParser (not its EPP subclass: templates are not loaded
      # from .xpp).
      module ParserHook
        def parse_string(s, file_source = nil)
          return super unless Runtime.applies?(self, file_source)
          Runtime.load(file_source, s) { super }
        end

        def parse_file(file)
          return super unless Runtime.applies?(self, file)
          Runtime.load(file, nil) { super }
        end
      end

      # A file name (absolute, or relative to the working directory as Puppet reads it) of a .pp file.
      def self.applies?(parser, file)
        file.is_a?(String) && file.end_with?('.pp') && enabled? &&
          !parser.is_a?(Puppet::Pops::Parser::EvaluatingParser::EvaluatingEppParser)
      end

      # Prepended to Puppet::Parser::Compiler's class: one summary line per compile.
      module CompilerHook
        def compile(node, *args) # no **kw: JRuby 9.3 (Ruby 2.6) passes an empty one on as a positional {}
          return super unless Runtime.enabled?
          Runtime.reset_stats(summarize: true)
          begin
            super
          ensure
            st = Runtime.stats
            summary = Runtime.fallback_summary(st, node)
            Puppet.warning(summary) if summary
            st.fallbacks = nil # later loads of this thread, outside a compile, warn file by file
            Puppet.info(format('xpp: %d manifests loaded from .xpp, %d parsed instead (fell back), %.1f ms loading, node %s',
                               st.served, st.parsed, st.seconds * 1000, node.name))
          end
        end
      end
    end
  end
end

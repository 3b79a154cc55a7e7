# frozen_string_literal: true

# What the loader checks of a whole `.xpp` document once its payload is read, as `puppet-xpp --verify`
# (xpp/verify.py, xpp/result.py) does: the top value is an Xpp::ParseResult (or a bare Program), the
# diagnostics are Puppet Data of the documented shape (keys, severity, issue code, message, arguments, the
# Locator's file, positions inside the source, line and column agreeing with the Locator), and the
# Locator's line index is its text's.  Why here and not left to the runtime: a record Puppet cannot replay
# (a cyclic or non-Data argument, a position outside the source) would fail inside Puppet's issue
# reporting instead of falling back to the source with one warning.
module PuppetX
  module Xpp
    module DocumentChecks
      PARSE_RESULT = 'Xpp::ParseResult'
      KEYS = %w[severity issue_code message arguments file offset length line pos].freeze
      SEVERITIES = %w[error warning deprecation].freeze
      POSITION_KEYS = %w[offset length line pos].freeze

      # The byte offset of every line start of `b` (a binary String): 0, then one after each LF.
      def self.line_starts(b)
        idx = [0]
        i = 0
        while (i = b.index("\n", i))
          i += 1
          idx << i
        end
        idx
      end

      # Is `index` (an Array of Integers) the line index of `b` (a binary String)?  Checked without building
      # one: as many entries as lines, 0 first, then increasing, each just after an LF.
      def self.line_starts?(b, index)
        return false unless index.size == b.count("\n") + 1 && index[0] == 0
        size = b.bytesize
        prev = 0
        i = 1
        while i < index.size
          x = index[i]
          return false unless x > prev && x <= size && b.getbyte(x - 1) == 10
          prev = x
          i += 1
        end
        true
      end

      # [program, diagnostics] of the top value `top` of a msgpack payload; `source`: the reader's record
      # of the Locator (MsgpackReader#source; nil when none was read).  Raises FormatError.
      def self.parse_result(top, source)
        if top.is_a?(Puppet::Pops::Model::Program)
          program = top
          diags = []
        else
          unless top.is_a?(MsgpackReader::Included) && top.type_name == PARSE_RESULT
            raise FormatError, 'XPP payload is not an Xpp::ParseResult or a Program'
          end
          attrs = top.attrs
          unless attrs.key?('program') && attrs.key?('diagnostics')
            raise FormatError, 'Xpp::ParseResult type lacks the program/diagnostics attributes'
          end
          program = attrs['program']
          diags = attrs['diagnostics']
          unless program.nil? || program.is_a?(Puppet::Pops::Model::Program)
            raise FormatError, 'Xpp::ParseResult.program must be a Program or undef'
          end
          unless diags.is_a?(Array) && diags.all? { |d| d.is_a?(Hash) }
            raise FormatError, 'Xpp::ParseResult.diagnostics must be an array of hashes'
          end
          data!(diags)
        end
        diagnostics!(diags, program ? source : nil)
        [program, diags]
      end

      # Raises FormatError unless `v` is Data with String hash keys (iterative: input may be deep).
      def self.data!(v)
        stack = [v]
        until stack.empty?
          x = stack.pop
          case x
          when nil, String, Integer, Float, true, false then next
          when Array then stack.concat(x)
          when Hash
            x.each do |k, y|
              raise FormatError, 'diagnostic hash keys must be strings' unless k.is_a?(String)
              stack << y
            end
          else
            raise FormatError, "diagnostics must be data, found #{x.class}"
          end
        end
      end

      # Raises FormatError unless every diagnostic record has the documented shape; `source` as for
      # #parse_result (nil when there is no Program: positions are then not checked against a text).
      def self.diagnostics!(records, source)
        records.each_with_index do |r, k|
          what = "diagnostic #{k}"
          extra = r.keys - KEYS
          raise FormatError, "#{what}: unknown keys #{extra.sort.inspect}" unless extra.empty?
          raise FormatError, "#{what}: severity #{r['severity'].inspect}" unless SEVERITIES.include?(r['severity'])
          code = r['issue_code']
          raise FormatError, "#{what}: issue_code must be a non-empty string" unless code.is_a?(String) && !code.empty?
          raise FormatError, "#{what}: message must be a string" unless r['message'].is_a?(String)
          raise FormatError, "#{what}: arguments must be a hash" if r.key?('arguments') && !r['arguments'].is_a?(Hash)
          file = r['file']
          raise FormatError, "#{what}: file must be a string" unless file.nil? || file.is_a?(String)
          if source && !file.nil? && file != source[0]
            raise FormatError, "#{what}: file #{file.inspect} is not the Locator's file"
          end
          POSITION_KEYS.each do |key|
            v = r[key]
            unless v.nil? || (v.is_a?(Integer) && !v.negative?)
              raise FormatError, "#{what}: #{key} must be a non-negative integer or undef"
            end
          end
          off = r['offset']
          next if off.nil? || source.nil?
          len = r['length'] || 0
          _, size, index, b = source
          raise FormatError, "#{what}: position #{off}+#{len} is outside the source (#{size} bytes)" if off + len > size
          next if r['line'].nil?
          nr = index.bsearch_index { |x| x > off } || index.size # the line: line starts at or before off
          start = index[nr - 1]
          pos = b.byteslice(start, off - start).force_encoding(Encoding::UTF_8).scrub.length + 1
          unless r['line'] == nr && r['pos'] == pos
            raise FormatError, "#{what}: line/pos #{r['line']}:#{r['pos'].inspect} do not match offset #{off} (#{nr}:#{pos})"
          end
        end
      end
    end
  end
end

# frozen_string_literal: true

# The fast reader of `.xpp` files (PRFC-23 documents written by puppet-xpp): the envelope, the checksum and
# the Pcore msgpack payload, read with the msgpack gem's C unpacker and turned into Puppet's own AST
# objects (Puppet::Pops::Model::*) directly.
#
# Why not Puppet's stock Pcore Deserializer: it resolves every type name through the type parser and
# asserts every attribute against its Pcore type, which makes it several times slower than parsing the
# source.  Here each AST type name maps to its Ruby class once (a constructor table built from the classes'
# own `initialize` signatures), nodes are created with `Class.new(*values)` in wire order, and the single
# Locator of the file is built once and shared, with the file name Puppet uses at run time.
#
# Safety: the envelope's `checksum=sha256-...` (when present; puppet-xpp always writes it) is verified
# before anything is read, so a damaged or truncated file cannot load as a different AST.  Without it, the
# structure is still checked (extension codes, counts, table indexes, value kinds of the envelope fields).
# Any problem raises PuppetX::Xpp::FormatError and nothing else.
require 'digest'
require 'msgpack'

module PuppetX
  module Xpp
    # The one error class of malformed, truncated or unusable `.xpp` input.
    class FormatError < StandardError; end

    # A loaded document: the Program (nil after a syntax error), the diagnostic records (hashes with String
    # keys, see docs/xpp-format.md) and the envelope parameters.
    Document = Struct.new(:program, :diagnostics, :params)

    module Envelope
      HEAD = /\Aapplication\/vnd\.puppet\.pcore\+(msgpack|json)(?=[ \t\r\n;]|\z)/.freeze
      PARAM = /\G[ \t\r\n]*;[ \t\r\n]*([A-Za-z0-9_-]+)[ \t\r\n]*=[ \t\r\n]*([A-Za-z0-9_-]+)/.freeze
      TAIL = /\G[ \t\r\n]*\z/.freeze
      BLANK = /\r?\n\r?\n/.freeze
      MAX_HEADER = 4096

      # [format, params, payload] of an .xpp document (a binary String); raises FormatError.
      def self.split(data)
        m = BLANK.match(data.byteslice(0, MAX_HEADER + 4))
        raise FormatError, 'not an XPP document (no envelope ended by a blank line)' unless m
        head = data.byteslice(0, m.begin(0))
        t = HEAD.match(head)
        raise FormatError, "not an XPP document: no 'application/vnd.puppet.pcore+msgpack|json' envelope" unless t
        params = {}
        pos = t.end(0)
        while (p = PARAM.match(head, pos))
          raise FormatError, "XPP envelope repeats the parameter #{p[1]}" if params.key?(p[1])
          params[p[1]] = p[2]
          pos = p.end(0)
        end
        raise FormatError, 'malformed XPP envelope' unless TAIL.match(head, pos)
        raise FormatError, 'XPP envelope needs document-type=xpp' unless params['document-type'] == 'xpp'
        raise FormatError, "unsupported XPP version #{params['version'].inspect}" unless params['version'] == '1'
        payload = data.byteslice(m.end(0), data.bytesize - m.end(0))
        sum = params['checksum']
        if sum
          raise FormatError, 'unsupported XPP checksum (expected sha256-<hex>)' unless sum =~ /\Asha256-[0-9a-f]{64}\z/
          unless Digest::SHA256.hexdigest(payload) == sum[7..]
            raise FormatError, 'XPP payload does not match its checksum (damaged or truncated file)'
          end
        end
        [t[1], params, payload]
      end
    end

    # Reads one msgpack Pcore payload.  Not thread-safe: use one instance per thread (Loader.reader).
    class MsgpackReader
      INNER_TABULATION = 0x00
      TABULATION = 0x01
      ARRAY_START = 0x10
      MAP_START = 0x11
      PCORE_OBJECT_START = 0x12
      OBJECT_START = 0x13
      REGEXP = 0x30
      EXT = Object.new.freeze # what the unpacker returns for an extension: the details are in @code/@arg
      OPEN = Object.new.freeze # a serializer-table entry whose value is still being read
      PTYPE = Struct.new(:name, :values)
      LOCATOR = 'Puppet::AST::Locator'
      MAX_DEPTH = 2000

      # type name -> [class, required count, max count], from Puppet's model classes
      def self.table
        @table ||= begin
          t = {}
          Puppet::Pops::Model.constants.each do |c|
            k = Puppet::Pops::Model.const_get(c)
            next unless k.is_a?(Class) && k.respond_to?(:_pcore_type)
            pt = k._pcore_type
            next if pt.nil? || (pt.respond_to?(:abstract?) && pt.abstract?)
            ps = k.instance_method(:initialize).parameters
            t[pt.name] = [k, ps.count { |kind, _| kind == :req }, ps.size].freeze
          end
          t.freeze
        end
      end

      def initialize
        @u = MessagePack::Unpacker.new
        @u.register_type(INNER_TABULATION) { |p| @code = INNER_TABULATION; @arg = uint(p); EXT }
        @u.register_type(TABULATION) { |p| @code = TABULATION; @arg = uint(p); EXT }
        @u.register_type(ARRAY_START) { |p| @code = ARRAY_START; @arg = uint(p); EXT }
        @u.register_type(MAP_START) { |p| @code = MAP_START; @arg = uint(p); EXT }
        @u.register_type(OBJECT_START) { |p| @code = OBJECT_START; @arg = uint(p); EXT }
        @u.register_type(PCORE_OBJECT_START) { |p| @code = PCORE_OBJECT_START; @arg = p; EXT }
        @u.register_type(REGEXP) { |p| @code = REGEXP; @arg = p; EXT }
        @table = self.class.table
      end

      # The top-level value of `payload`; `file` becomes the Locator's file name.
      def read(payload, file)
        @u.reset
        @u.feed(payload)
        @wtab = []
        @stab = []
        @file = file
        @locator = nil
        @depth = 0
        v = value
        raise FormatError, 'unexpected data after the XPP payload' unless @u.buffer.empty?
        v
      rescue EOFError
        raise FormatError, 'truncated XPP payload'
      rescue FormatError
        raise
      rescue SystemStackError
        raise FormatError, 'XPP payload nested too deeply'
      rescue StandardError => e # msgpack's MalformedFormatError, UnknownExtTypeError, a bad constructor call...
        raise FormatError, "malformed XPP payload (#{e.class}: #{e.message})"
      ensure
        @wtab = @stab = nil
      end

      private

      def uint(p)
        b = p.getbyte(0)
        return b if b && b < 0x80 && p.bytesize == 1
        v = MessagePack.unpack(p)
        raise FormatError, 'bad extension payload' unless v.is_a?(Integer) && v >= 0
        v
      end

      def value
        v = @u.read
        unless EXT.equal?(v)
          @wtab << v if v.is_a?(String)
          raise FormatError, "unexpected #{v.class} in a Pcore stream" if v.is_a?(Array) || v.is_a?(Hash)
          return v
        end
        code = @code
        arg = @arg
        if code == INNER_TABULATION
          t = @wtab.fetch(arg) { raise FormatError, "INNER_TABULATION index #{arg} out of range" }
          return t if t.is_a?(String)
          code, arg = t
          return object(arg) if code == PCORE_OBJECT_START
          return included(arg) if code == OBJECT_START
          return regexp(arg) if code == REGEXP
          raise FormatError, 'bad INNER_TABULATION target'
        end
        case code
        when TABULATION
          v = @stab.fetch(arg) { raise FormatError, "TABULATION index #{arg} out of range" }
          raise FormatError, 'cyclic reference in XPP payload' if OPEN.equal?(v)
          v
        when ARRAY_START
          a = []
          @stab << a
          nest { arg.times { a << value } }
          a
        when MAP_START
          h = {}
          @stab << h
          nest { arg.times { k = value; h[k] = value } }
          h
        when PCORE_OBJECT_START
          marker = [code, object_start(arg)]
          @wtab << marker
          object(marker[1])
        when OBJECT_START
          @wtab << [code, arg]
          included(arg)
        when REGEXP
          src = MessagePack.unpack(arg)
          raise FormatError, 'bad REGEXP payload' unless src.is_a?(String)
          @wtab << [code, src]
          regexp(src)
        end
      end

      def nest
        @depth += 1
        raise FormatError, 'XPP payload nested too deeply' if @depth > MAX_DEPTH
        r = yield
        @depth -= 1
        r
      end

      # [type name, attribute count] of a PCORE_OBJECT_START payload; segments enter the writer table
      def object_start(p)
        u = MessagePack::Unpacker.new
        u.feed(p)
        n = u.read
        raise FormatError, 'bad PCORE_OBJECT_START' unless n.is_a?(Integer) && n.between?(1, 16)
        segs = Array.new(n) do
          s = u.read
          if s.is_a?(Integer)
            s = @wtab.fetch(s) { raise FormatError, 'bad PCORE_OBJECT_START segment index' }
            raise FormatError, 'bad PCORE_OBJECT_START segment index' unless s.is_a?(String)
          elsif s.is_a?(String)
            @wtab << s
          else
            raise FormatError, 'bad PCORE_OBJECT_START segment'
          end
          s
        end
        count = u.read
        raise FormatError, 'bad PCORE_OBJECT_START' unless count.is_a?(Integer) && count >= 0 && u.buffer.empty?
        [segs.join('::'), count]
      end

      def object(marker)
        name, count = marker
        idx = @stab.size
        @stab << OPEN
        info = @table[name]
        if info
          klass, min, max = info
          unless count.between?(min, max)
            raise FormatError, "Feature count mismatch for #{name}. Expected #{min} - #{max}, actual #{count}"
          end
          vals = nest { Array.new(count) { value } }
          check_positioned(name, vals) if min >= 3
          obj = klass.new(*vals)
        elsif name == LOCATOR
          raise FormatError, 'a second Locator in one XPP payload' if @locator
          vals = nest { Array.new(count) { value } }
          string, _file, index = vals
          raise FormatError, 'bad Locator' unless count.between?(2, 3) && string.is_a?(String) && (index.nil? || index.is_a?(Array))
          raise FormatError, 'bad Locator line index' unless index.nil? || index.all? { |i| i.is_a?(Integer) }
          obj = @locator = Puppet::Pops::Parser::Locator::Locator19.new(string, @file, index)
        elsif name.start_with?('Pcore::')
          obj = PTYPE.new(name, nest { Array.new(count) { value } })
        else
          raise FormatError, "No implementation mapping found for Puppet Type #{name}"
        end
        @stab[idx] = obj
      end

      def check_positioned(name, vals)
        return if vals[0].equal?(@locator) && vals[1].is_a?(Integer) && vals[2].is_a?(Integer)
        raise FormatError, "#{name}: locator, offset and length expected" unless name == 'Puppet::AST::Program'
      end

      # An included object (OBJECT_START): the type, then the values; only Xpp::ParseResult is known.
      def included(count)
        raise FormatError, 'bad OBJECT_START' unless count >= 1
        type = value
        unless type.is_a?(PTYPE) && type.name == 'Pcore::ObjectType' && type.values[0].is_a?(Hash)
          raise FormatError, 'OBJECT_START must be followed by a Pcore::ObjectType'
        end
        init = type.values[0]
        attrs = init['attributes']
        raise FormatError, "unknown included type #{init['name']}" unless init['name'] == 'Xpp::ParseResult' && attrs.is_a?(Hash)
        names = attrs.keys
        raise FormatError, 'Xpp::ParseResult: too many values' if count - 1 > names.size
        idx = @stab.size
        @stab << OPEN
        vals = nest { Array.new(count - 1) { value } }
        h = {}
        names.each_with_index { |n, i| h[n] = i < vals.size ? vals[i] : default_of(attrs[n]) }
        @stab[idx] = h
      end

      def default_of(a)
        a.is_a?(Hash) ? a['value'] : nil
      end

      def regexp(src)
        r = Regexp.new(src)
        @stab << r
        r
      rescue RegexpError => e
        raise FormatError, "bad regexp in XPP payload: #{e.message}"
      end
    end

    module Loader
      # The reader of the calling thread (a MsgpackReader keeps state while reading).
      def self.reader
        Thread.current[:puppet_x_xpp_reader] ||= MsgpackReader.new
      end

      # A Document from the bytes of an .xpp file; `file` is the source path Puppet uses at run time (the
      # Locator's and the diagnostics' file).  Raises FormatError.
      def self.load(data, file)
        data = data.b
        fmt, params, payload = Envelope.split(data)
        top = fmt == 'msgpack' ? reader.read(payload, file) : read_json(payload, file)
        program, diags = unwrap(top)
        Document.new(program, diags, params)
      end

      def self.load_file(path, file)
        load(File.binread(path), file)
      rescue SystemCallError, IOError => e
        raise FormatError, "cannot read #{path}: #{e.message}"
      end

      def self.unwrap(top)
        return [top, []] if top.is_a?(Puppet::Pops::Model::Program)
        raise FormatError, 'XPP payload is not an Xpp::ParseResult or a Program' unless top.is_a?(Hash) && top.key?('program')
        program = top['program']
        diags = top['diagnostics'] || []
        raise FormatError, 'Xpp::ParseResult.program must be a Program or undef' unless program.nil? || program.is_a?(Puppet::Pops::Model::Program)
        raise FormatError, 'Xpp::ParseResult.diagnostics must be an array of hashes' unless diags.is_a?(Array) && diags.all? { |d| d.is_a?(Hash) }
        [program, diags]
      end

      # The JSON encoding: read with Puppet's own JSON reader and Deserializer (slow; msgpack is the
      # machine format), then the Locator gets the run-time file name.
      def self.read_json(payload, file)
        s = Puppet::Pops::Serialization
        top = s::Deserializer.new(s::JSON::Reader.new(payload.force_encoding('UTF-8')), Puppet::Pops::Loaders.static_loader).read
        top = { 'program' => top.program, 'diagnostics' => top.diagnostics } if top.respond_to?(:program) && top.respond_to?(:diagnostics)
        prog = top.is_a?(Hash) ? top['program'] : top
        prog.locator.instance_variable_set(:@file, file.dup.freeze) if prog.respond_to?(:locator)
        top
      rescue FormatError
        raise
      rescue StandardError => e
        raise FormatError, "malformed XPP JSON payload (#{e.class}: #{e.message})"
      end
    end
  end
end

# frozen_string_literal: true

# The fast reader of `.xpp` files (PRFC-23 documents written by puppet-xpp): the envelope, the checksum and
# the Pcore msgpack payload, decoded byte by byte (see MsgpackReader#value) and turned into Puppet's own AST
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
begin
  require 'msgpack'
rescue LoadError # Puppet Server's JRuby has no msgpack gem: the plain-Ruby reader of the same API
  require 'puppet_x/xpp/msgpack_pure'
end
require 'openssl'

module PuppetX
  module Xpp
    # the msgpack gem's API where extension payloads are decoded (the hot path reads bytes itself)
    MP = defined?(::MessagePack::Unpacker) ? ::MessagePack : PureMsgpack
    # The one error class of malformed, truncated or unusable `.xpp` input.
    class FormatError < StandardError; end

    # A loaded document: the Program (nil after a syntax error), the diagnostic records (hashes with String
    # keys, see docs/xpp-format.md) and the envelope parameters.
    Document = Struct.new(:program, :diagnostics, :params)

    # SHA-256 hex digest through OpenSSL (Puppet loads it anyway), one digest object per thread: about 4x
    # faster than Digest::SHA256.hexdigest on the corpus, where the payload checksum was the largest cost of
    # loading after the payload itself.
    def self.sha256_hex(data)
      d = (Thread.current[:puppet_x_xpp_sha256] ||= OpenSSL::Digest.new('SHA256'))
      d.reset
      d.update(data)
      d.hexdigest
    end

    module Envelope
      WS = '[ \t\r\n]*'
      NAME = '[A-Za-z0-9_-]+'
      # the whole header checked by one match (the parameters captured as one run); that run, its blanks
      # deleted, is then split on ';' and '=' (a regex scan over the 64-digit values costs more than the match)
      HEAD = %r{\Aapplication/vnd\.puppet\.pcore\+(msgpack|json)((?:#{WS};#{WS}#{NAME}#{WS}=#{WS}#{NAME})*)#{WS}\z}.freeze
      BLANK = /\r?\n\r?\n/.freeze
      MAX_HEADER = 4096
      CHECKSUM = /\Asha256-[0-9a-f]{64}\z/.freeze
      START = %r{\Aapplication/vnd\.puppet\.pcore\+(msgpack|json)(?=[ \t\r\n;]|\z)}.freeze

      # [format, params, payload] of an .xpp document (a binary String); raises FormatError.
      def self.split(data)
        m = BLANK.match(data)
        raise FormatError, 'not an XPP document (no envelope ended by a blank line)' unless m && m.begin(0) <= MAX_HEADER
        head = data.byteslice(0, m.begin(0))
        t = HEAD.match(head)
        unless t
          raise FormatError, 'malformed XPP envelope' if START.match?(head)
          raise FormatError, "not an XPP document: no 'application/vnd.puppet.pcore+msgpack|json' envelope"
        end
        kv = t[2].delete(" \t\r\n").tr('=', ';').split(';')
        kv.shift # the empty string before the first ';'
        params = Hash[*kv]
        if params.size * 2 != kv.size
          seen = {}
          dup = kv.each_slice(2).find { |k, _| seen.key?(k) || !(seen[k] = true) }
          raise FormatError, "XPP envelope repeats the parameter #{dup[0]}"
        end
        raise FormatError, 'XPP envelope needs document-type=xpp' unless params['document-type'] == 'xpp'
        raise FormatError, "unsupported XPP version #{params['version'].inspect}" unless params['version'] == '1'
        payload = data.byteslice(m.end(0), data.bytesize - m.end(0))
        sum = params['checksum']
        if sum
          raise FormatError, 'unsupported XPP checksum (expected sha256-<hex>)' unless CHECKSUM.match?(sum)
          unless Xpp.sha256_hex(payload) == sum[7..]
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
      OPEN = Object.new.freeze # a serializer-table entry whose value is still being read
      PTYPE = Struct.new(:name, :values)
      LOCATOR = 'Puppet::AST::Locator'
      MAX_DEPTH = 2000

      # type name -> [class, required count, max count, initialize parameters], from Puppet's model classes.
      #
      # The builder is a flattened constructor: Puppet's generated initializers call `super` through up to
      # six classes, each XOR-ing its own attributes' hashes into @hash; that call chain costs more than
      # reading the payload.  For each class a single method sets every instance variable and @hash in one
      # frame.  Which attributes enter @hash (and the default values) is observed on instances made by
      # Puppet's own `new`, and the builder is kept only if, on sample values, it yields instances with
      # exactly the same instance variables and hash as `new`; otherwise that class uses `new`.
      def self.table
        @table ||= begin
          t = {}
          Puppet::Pops::Model.constants.each do |c|
            k = Puppet::Pops::Model.const_get(c)
            next unless k.is_a?(Class) && k.respond_to?(:_pcore_type)
            pt = k._pcore_type
            next if pt.nil? || (pt.respond_to?(:abstract?) && pt.abstract?)
            ps = k.instance_method(:initialize).parameters
            req = ps.count { |kind, _| kind == :req }
            t[pt.name] = [k, req, ps.size, ps].freeze
          end
          t.freeze
        end
      end

      # Flattened constructors (see MsgpackReader.table).
      module Builder
        Sample = Struct.new(:n) # a distinct value per attribute, with a distinct hash
        DEFAULTS = {}.compare_by_identity
        METHOD = :__puppet_x_xpp_init # the one method added to each model class (called by name in #value: no __send__)

        BUILT = {}.compare_by_identity # class -> builder or false; made on first use (a run loads few types)
        LOCK = Mutex.new

        def self.cached(klass, params, req)
          b = BUILT[klass]
          return b || nil unless b.nil?
          LOCK.synchronize { BUILT[klass] = self.for(klass, params, req) || false }
          BUILT[klass] || nil
        end

        # A lambda(vals) -> instance, or nil when the class must use `new`.
        def self.for(klass, params, req)
          names = params.map { |_, n| n }
          return nil unless params.all? { |kind, _| kind == :req || kind == :opt } && names.all?
          base = klass.new(*Array.new(req) { |i| Sample.new(i) })
          defaults = names.each_with_index.map { |n, i| i < req ? nil : base.instance_variable_get(:"@#{n}") }.freeze
          return nil unless base.instance_variables.sort == (names.map { |n| :"@#{n}" } + [:@hash]).sort
          h0 = Puppet::Pops::Model::PopsObject.new.hash
          vals = Array.new(names.size) { |i| Sample.new(100 + i) }
          ref = klass.new(*vals)
          # an attribute enters @hash when flipping its value changes the hash
          hashed = names.each_index.select do |i|
            alt = vals.dup
            alt[i] = Sample.new(1000 + i)
            klass.new(*alt).hash != ref.hash
          end
          expr = (["#{h0}"] + hashed.map { |i| "v#{i}.hash" }).join(' ^ ')
          DEFAULTS[klass] = defaults
          args = names.each_index.map { |i| i < req ? "v#{i}" : "v#{i} = #{name}::DEFAULTS[#{klass.name}][#{i}]" }
          sets = names.each_index.map { |i| "@#{names[i]} = v#{i}" }
          klass.class_eval("def #{METHOD}(#{args.join(', ')})\n@hash = #{expr}\n#{sets.join("\n")}\nself\nend",
                           __FILE__, __LINE__)
          build = ->(*vs) { klass.allocate.__send__(METHOD, *vs) }
          [vals, vals.first(req)].each do |vs|
            a = klass.new(*vs)
            b = build.call(*vs)
            same = a.hash == b.hash && a.instance_variables.sort == b.instance_variables.sort &&
                   a.instance_variables.all? { |iv| a.instance_variable_get(iv).equal?(b.instance_variable_get(iv)) }
            return nil unless same
          end
          build
        rescue StandardError
          nil
        end
      end


      def initialize
        @table = self.class.table
      end

      # The top-level value of `payload` (a binary String); `file` becomes the Locator's file name.
      def read(payload, file)
        @s = payload
        @n = payload.bytesize
        @p = 0
        @wtab = []
        @stab = []
        @file = file
        @locator = nil
        @locator_idx = -1
        @depth = 0
        @in_type = 0
        v = value
        raise FormatError, 'unexpected data after the XPP payload' unless @p == @n
        v
      rescue EOFError
        raise FormatError, 'truncated XPP payload'
      rescue FormatError
        raise
      rescue SystemStackError
        raise FormatError, 'XPP payload nested too deeply'
      rescue StandardError => e # msgpack's MalformedFormatError (extension payloads), a bad constructor call...
        raise FormatError, "malformed XPP payload (#{e.class}: #{e.message})"
      ensure
        @wtab = @stab = @s = nil
      end

      private

      def uint(p)
        v = MP.unpack(p)
        raise FormatError, 'bad extension payload' unless v.is_a?(Integer) && v >= 0
        v
      end

      # The payload is decoded here with String#getbyte, not by the msgpack gem's Unpacker.  Why: about half
      # the values of a payload are Pcore extensions (table references, object starts), which the gem hands
      # one by one to a Ruby block with a new String; here the usual shapes (a node's type reference, its
      # Locator reference, offset and length, a name or a short string) are recognised inline without any
      # allocation, and the rest is decoded by #other.  The gem also built whole msgpack arrays and maps,
      # which never belong in a Pcore stream, before they could be refused (a damaged length once asked
      # for gigabytes: NoMemoryError); here their first byte is refused.  Strings are sliced out of the
      # payload.  Reading past the end raises EOFError.

      # The next value.  Writer-table markers are kept as [code, ...] arrays: a PCORE_OBJECT_START marker
      # holds what its first sight established ([code, kind, class or name, count, name, builder]), so a
      # repeat costs one table lookup.  Positioned nodes (most of a payload) are built at the end of this
      # method, not in a called one (one Ruby call less per node).
      def value
        s = @s
        p = @p
        c = s.getbyte(p)
        if c == 0xd4 # fixext 1: an extension with a 1-byte payload (the usual small index or count)
          code = s.getbyte(p + 1)
          a = s.getbyte(p + 2)
          raise EOFError unless a
          @p = p + 3
          if code == INNER_TABULATION && a < 0x80 then arg = a
          elsif code == PCORE_OBJECT_START || code == REGEXP then arg = @s.byteslice(p + 2, 1)
          elsif a < 0x80 then arg = a
          else arg = ext_arg(code, @s.byteslice(p + 2, 1)) # not a positive fixint: an error
          end
        elsif c.nil?
          raise EOFError
        elsif c == 0xd5 && s.getbyte(p + 2) == 0xcc && (code = s.getbyte(p + 1)) != PCORE_OBJECT_START && code != REGEXP
          # fixext 2 holding a uint 8 (an index past 127)
          arg = s.getbyte(p + 3)
          raise EOFError unless arg
          @p = p + 4
        elsif c < 0x80 # positive fixint
          @p = p + 1
          return c
        elsif c >= 0xa0 && c <= 0xbf # fixstr
          n = c & 0x1f
          raise EOFError if p + n >= @n
          @p = p + 1 + n
          v = @s.byteslice(p + 1, n).force_encoding(Encoding::UTF_8)
          @wtab << v
          return v
        elsif c == 0xcd # uint 16 (the Locator's line offsets)
          raise EOFError if p + 2 >= @n
          @p = p + 3
          return (s.getbyte(p + 1) << 8) | s.getbyte(p + 2)
        elsif c == 0xc0
          @p = p + 1
          return nil
        else
          code, arg = other(c, p)
          return arg if code.nil? # a plain value
        end
        case code
        when 0x00 # INNER_TABULATION
          marker = @wtab[arg]
          raise FormatError, "INNER_TABULATION index #{arg} out of range" if marker.nil?
          return marker if marker.is_a?(String)
          case marker[0]
          when 0x12 then nil # an object of a type seen before: built below
          when 0x13 then return included(marker[1])
          when 0x30 then return regexp(marker[1])
          else raise FormatError, 'bad INNER_TABULATION target'
          end
        when 0x12 # PCORE_OBJECT_START
          marker = marker_for(arg)
        when 0x01 # TABULATION
          v = @stab.fetch(arg) { raise FormatError, "TABULATION index #{arg} out of range" }
          raise FormatError, 'cyclic reference in XPP payload' if v.equal?(OPEN) || (v.is_a?(Puppet::Pops::Model::PopsObject) && v.hash.nil?)
          raise FormatError, "#{v.name} outside an included object's type" if v.is_a?(PTYPE) && @in_type.zero?
          return v
        when 0x10 # ARRAY_START
          a = []
          @stab << a
          raise FormatError, 'XPP payload nested too deeply' if (@depth += 1) > MAX_DEPTH
          i = 0
          while i < arg
            # small integers inline (a Locator's line offsets are most of a payload's arrays)
            p = @p
            c = s.getbyte(p)
            if c && c < 0x80 then @p = p + 1; a << c
            elsif c == 0xcd && p + 2 < @n then @p = p + 3; a << ((s.getbyte(p + 1) << 8) | s.getbyte(p + 2))
            else a << value
            end
            i += 1
          end
          @depth -= 1
          return a
        when 0x11 # MAP_START
          h = {}
          @stab << h
          raise FormatError, 'XPP payload nested too deeply' if (@depth += 1) > MAX_DEPTH
          arg.times { k = value; h[k] = value }
          @depth -= 1
          return h
        when 0x13 # OBJECT_START
          @wtab << [OBJECT_START, arg]
          return included(arg)
        when 0x30 # REGEXP
          src = MP.unpack(arg)
          raise FormatError, 'bad REGEXP payload' unless src.is_a?(String)
          @wtab << [REGEXP, src]
          return regexp(src)
        else
          raise FormatError, "unknown Pcore extension type #{code}"
        end
        return object(marker) unless marker[1] == :positioned
        # A positioned node: TABULATION(the Locator), offset, length, then the other attributes.  The
        # usual encodings are decoded inline; any other goes through #value and is checked.
        obj = marker[2].allocate
        @stab << obj # (a reference to it before its initializer ran is refused as cyclic: see TABULATION)
        p = @p
        if s.getbyte(p) == 0xd4 && s.getbyte(p + 1) == TABULATION && s.getbyte(p + 2) == @locator_idx
          p += 3
        else
          @p = p
          l = value
          raise FormatError, "#{marker[4]}: locator, offset and length expected" unless l.equal?(@locator) && l
          p = @p
        end
        off = s.getbyte(p)
        if off && off < 0x80 then p += 1
        elsif off == 0xcd && p + 2 < @n then off = (s.getbyte(p + 1) << 8) | s.getbyte(p + 2); p += 3
        elsif off == 0xcc && p + 1 < @n then off = s.getbyte(p + 1); p += 2
        elsif off == 0xce && p + 4 < @n
          off = (s.getbyte(p + 1) << 24) | (s.getbyte(p + 2) << 16) | (s.getbyte(p + 3) << 8) | s.getbyte(p + 4)
          p += 5
        else p = integer(p, marker); off = @int
        end
        len = s.getbyte(p)
        if len && len < 0x80 then p += 1
        elsif len == 0xcc && p + 1 < @n then len = s.getbyte(p + 1); p += 2
        else p = integer(p, marker); len = @int
        end
        @p = p
        raise FormatError, 'XPP payload nested too deeply' if (@depth += 1) > MAX_DEPTH
        case marker[3]
        when 3 then obj.__puppet_x_xpp_init(@locator, off, len)
        when 4
          # one more attribute, often a string (a name, a literal): inline when it is a short one or a
          # reference to one
          c = s.getbyte(p)
          if c && c >= 0xa0 && c <= 0xbf # fixstr
            n = c & 0x1f
            raise EOFError if p + n >= @n
            @p = p + 1 + n
            v = s.byteslice(p + 1, n).force_encoding(Encoding::UTF_8)
            @wtab << v
          elsif c == 0xd4 && s.getbyte(p + 1) == INNER_TABULATION && (v = s.getbyte(p + 2)) && v < 0x80 &&
                (v = @wtab[v]).is_a?(String)
            @p = p + 3
          else
            v = value
          end
          obj.__puppet_x_xpp_init(@locator, off, len, v)
        when 5 then obj.__puppet_x_xpp_init(@locator, off, len, value, value)
        when 6 then obj.__puppet_x_xpp_init(@locator, off, len, value, value, value)
        else
          n = marker[3] - 3
          rest = Array.new(n)
          i = 0
          while i < n
            rest[i] = value
            i += 1
          end
          obj.__puppet_x_xpp_init(@locator, off, len, *rest)
        end
        @depth -= 1
        obj
      end

      # An offset or length in another encoding than #value's inline ones: the value at `p` into @int (it must
      # be an Integer); returns the position after it.
      def integer(p, marker)
        @p = p
        @int = value
        raise FormatError, "#{marker[4]}: locator, offset and length expected" unless @int.is_a?(Integer)
        @p
      end

      # The value starting with byte `c` at `p` that #value does not decode inline: [nil, plain value] or
      # [extension code, argument] (an index or count, or the payload of PCORE_OBJECT_START and REGEXP).
      def other(c, p)
        if c >= 0xe0 # negative fixint
          @p = p + 1
          return [nil, c - 0x100]
        end
        case c # (only Integer literals: Ruby dispatches with a jump table)
        when 0xc2 then @p = p + 1; [nil, false]
        when 0xc3 then @p = p + 1; [nil, true]
        when 0xcc then [nil, fixed(p, 1, 'C')]
        when 0xcd then [nil, fixed(p, 2, 'n')]
        when 0xce then [nil, fixed(p, 4, 'N')]
        when 0xcf then [nil, fixed(p, 8, 'Q>')]
        when 0xd0 then [nil, fixed(p, 1, 'c')]
        when 0xd1 then [nil, fixed(p, 2, 's>')]
        when 0xd2 then [nil, fixed(p, 4, 'l>')]
        when 0xd3 then [nil, fixed(p, 8, 'q>')]
        when 0xca then [nil, fixed(p, 4, 'g')]
        when 0xcb then [nil, fixed(p, 8, 'G')]
        when 0xd9 then str(p + 2, fixed(p, 1, 'C'), Encoding::UTF_8)
        when 0xda then str(p + 3, fixed(p, 2, 'n'), Encoding::UTF_8)
        when 0xdb then str(p + 5, fixed(p, 4, 'N'), Encoding::UTF_8)
        when 0xc4 then str(p + 2, fixed(p, 1, 'C'), Encoding::BINARY)
        when 0xc5 then str(p + 3, fixed(p, 2, 'n'), Encoding::BINARY)
        when 0xc6 then str(p + 5, fixed(p, 4, 'N'), Encoding::BINARY)
        when 0xd5 then ext(p + 1, 2)
        when 0xd6 then ext(p + 1, 4)
        when 0xd7 then ext(p + 1, 8)
        when 0xd8 then ext(p + 1, 16)
        when 0xc7 then ext(p + 2, fixed(p, 1, 'C'))
        when 0xc8 then ext(p + 3, fixed(p, 2, 'n'))
        when 0xc9 then ext(p + 5, fixed(p, 4, 'N'))
        when 0xde, 0xdf then raise FormatError, 'unexpected Hash in a Pcore stream'
        when 0xdc, 0xdd then raise FormatError, 'unexpected Array in a Pcore stream'
        else
          raise FormatError, 'unexpected Hash in a Pcore stream' if c < 0x90 # fixmap
          raise FormatError, 'unexpected Array in a Pcore stream' if c < 0xa0 # fixarray
          raise FormatError, format('malformed XPP payload (invalid byte 0x%02x)', c)
        end
      end

      # The `size`-byte number after the type byte at `p` (String#unpack1 directive `dir`); moves past it.
      def fixed(p, size, dir)
        raise EOFError if p + size >= @n
        @p = p + 1 + size
        @s.byteslice(p + 1, size).unpack1(dir) # (no unpack1 offset: on JRuby 9.3, Puppet Server's Ruby 2.6)
      end

      def str(p, n, enc)
        raise EOFError if p + n > @n
        @p = p + n
        v = @s.byteslice(p, n).force_encoding(enc)
        @wtab << v
        [nil, v]
      end

      # An extension: its type byte at `p`, then `n` payload bytes.
      def ext(p, n)
        raise EOFError if p + n >= @n
        @p = p + 1 + n
        code = @s.getbyte(p)
        body = @s.byteslice(p + 1, n)
        return [code, body] if code == PCORE_OBJECT_START || code == REGEXP
        bb = @s.getbyte(p + 1)
        arg =
          if n == 2 && bb == 0xcc then @s.getbyte(p + 2) # uint 8
          elsif n == 3 && bb == 0xcd then (@s.getbyte(p + 2) << 8) | @s.getbyte(p + 3) # uint 16
          else ext_arg(code, body)
          end
        [code, arg]
      end

      KNOWN = [INNER_TABULATION, TABULATION, ARRAY_START, MAP_START, PCORE_OBJECT_START, OBJECT_START, REGEXP].freeze

      # The index or count an extension of type `code` holds in `body` (a msgpack non-negative integer).
      def ext_arg(code, body)
        raise FormatError, "unknown Pcore extension type #{code}" unless KNOWN.include?(code)
        uint(body)
      end

      def values(count)
        raise FormatError, 'XPP payload nested too deeply' if (@depth += 1) > MAX_DEPTH
        vals = Array.new(count)
        i = 0
        while i < count
          vals[i] = value
          i += 1
        end
        @depth -= 1
        vals
      end

      MARKERS = {} # PCORE_OBJECT_START payload bytes -> [[index, segment name, ...], [new segments], marker]
      MARKERS_MAX = 4096

      # The marker of a PCORE_OBJECT_START payload, entered in the writer table after its new segments.
      # The same payload bytes recur in every file (the first marker of a file writes "Puppet", "AST" and
      # later ones refer to them by index), so a decoded payload is remembered process-wide; a hit still
      # enters the segments in this file's table and checks that the indexes name the same segments.
      def marker_for(p)
        hit = MARKERS[p]
        if hit
          checks, strings, marker = hit
          # the indexes must name the same segments here (checked before anything enters the table)
          ok = true
          i = 0
          while i < checks.size
            unless @wtab[checks[i]] == checks[i + 1]
              ok = false
              break
            end
            i += 2
          end
          if ok
            @wtab.concat(strings)
            @wtab << marker
            return marker
          end
        end
        size = @wtab.size
        marker = object_start(p)
        segs = []
        names = marker[4].split('::')
        raw = @wtab[size..] # the literal segments this payload entered
        k = 0
        # rebuild the segment list: literal where this payload entered a string, else the index it used
        u = MP::Unpacker.new
        u.feed(p)
        u.read.times do
          sg = u.read
          if sg.is_a?(String)
            segs << raw[k].freeze
            k += 1
          else
            segs << sg
          end
        end
        checks = []
        segs.each_with_index { |sg, i| checks.push(sg, names[i]) unless sg.is_a?(String) }
        strings = segs.select { |sg| sg.is_a?(String) }
        MARKERS[p.dup.freeze] = [checks.freeze, strings.freeze, marker].freeze if !hit && MARKERS.size < MARKERS_MAX
        @wtab << marker
        marker
      end

      # The marker of a PCORE_OBJECT_START payload (segments enter the writer table, then the marker):
      # [code, :node, class, count] | [code, :locator, nil, count] | [code, :ptype, name, count]
      def object_start(p)
        u = MP::Unpacker.new
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
        name = segs.join('::')
        info = @table[name]
        if info
          klass, min, max = info
          unless count.between?(min, max)
            raise FormatError, "Feature count mismatch for #{name}. Expected #{min} - #{max}, actual #{count}"
          end
          build = Builder.cached(klass, info[3], min)
          [PCORE_OBJECT_START, min >= 3 && build ? :positioned : :node, klass, count, name, build].freeze
        elsif name == LOCATOR
          raise FormatError, 'bad Locator' unless count.between?(2, 3)
          [PCORE_OBJECT_START, :locator, nil, count, name].freeze
        elsif name.start_with?('Pcore::')
          [PCORE_OBJECT_START, :ptype, name, count, name].freeze
        else
          raise FormatError, "No implementation mapping found for Puppet Type #{name}"
        end
      end

      # A node that is not positioned (see #value), the Locator, or a Pcore type.
      def object(marker)
        idx = @stab.size
        @stab << OPEN
        _, kind, klass, count, _name, build = marker
        vals = values(count)
        obj =
          case kind
          when :node
            build ? klass.allocate.__puppet_x_xpp_init(*vals) : klass.new(*vals)
          when :locator
            raise FormatError, 'a second Locator in one XPP payload' if @locator
            string, _file, index = vals
            raise FormatError, 'bad Locator' unless string.is_a?(String) && (index.nil? || index.is_a?(Array))
            raise FormatError, 'bad Locator line index' unless index.nil? || index.all? { |i| i.is_a?(Integer) }
            @locator_idx = idx
            @locator = Puppet::Pops::Parser::Locator::Locator19.new(string, @file, index)
          else
            # a Pcore type is only read as an included object's type (never an AST attribute's value)
            raise FormatError, "#{klass} outside an included object's type" unless @in_type > 0
            PTYPE.new(klass, vals)
          end
        @stab[idx] = obj
      end

      # An included object (OBJECT_START): the type, then the values; only Xpp::ParseResult is known.
      def included(count)
        raise FormatError, 'bad OBJECT_START' unless count >= 1
        @in_type += 1
        type = value
        @in_type -= 1
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
        vals = values(count - 1)
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
        data = data.b unless data.encoding == Encoding::BINARY
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
        loaders = Puppet.lookup(:loaders) { nil }
        raise FormatError, 'the JSON encoding is read only inside a compile (no loaders)' unless loaders
        top = s::Deserializer.new(s::JSON::Reader.new(payload.force_encoding('UTF-8')), loaders.private_environment_loader).read
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

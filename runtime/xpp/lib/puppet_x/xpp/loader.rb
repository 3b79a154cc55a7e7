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
# before anything is read, so a damaged or truncated file cannot load as a different AST.  With or without
# it, the loader accepts exactly what the complete Python reader and `puppet-xpp --verify` accept (issue
# 26): every attribute of the types the AST table gives (ast_types.rb, generated from it), back-references
# only where Puppet's model shares an object (a node's Locator, the entries of Program.definitions), so
# what loads is a tree; positions inside the source, a Locator line index that is the text's, diagnostics
# of the documented shape (document_checks.rb); no count larger than the bytes left is ever allocated.
# Any problem raises PuppetX::Xpp::FormatError and nothing else.
#
# No msgpack library is used: extension bodies are decoded here too (bounded by their own length), so the
# msgpack gem, where installed, and Puppet Server's JRuby, where it is not, run the same code.
require 'puppet_x/xpp/envelope'
require 'puppet_x/xpp/ast_types'
require 'puppet_x/xpp/constructors'
require 'puppet_x/xpp/document_checks'

module PuppetX
  module Xpp
    # A loaded document: the Program (nil after a syntax error), the diagnostic records (hashes with String
    # keys, see docs/xpp-format.md) and the envelope parameters.
    Document = Struct.new(:program, :diagnostics, :params)

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
      PROGRAM = 'Puppet::AST::Program'
      MAX_DEPTH = 2000 # (#value compares with the literal: JRuby then needs no call)
      MAX_INT = (1 << 63) - 1
      # what a back-reference may stand for where one is allowed (see #reference)
      LOCATOR_REF = 1
      DEFINITION_REF = 2
      # the work bound of a read, as the Python reader's (xpp/pcore/base.py): characters of repeated strings
      # handed out and of line indexes computed, per byte of payload, plus a base
      WORK_PER_BYTE = 16
      WORK_BASE = 1 << 20
      # An included object (OBJECT_START): its type's name and its attribute values by name.
      Included = Struct.new(:type_name, :attrs)

      # type name -> [class, required count, max count, initialize parameters, type tests, locator slot,
      # reference slot] for every concrete type of the AST table (ast_types.rb) whose class in Puppet's model
      # takes the table's attributes in wire order (a type of another shape is refused: "No implementation").
      # Its nodes are made by the flattened, typed constructors of constructors.rb (Builder).
      def self.table
        @table ||= begin
          t = {}
          AstTypes::TYPES.each do |name, (min, slots)|
            next if name == LOCATOR
            k = begin
              Puppet::Pops::Model.const_get(name.delete_prefix('Puppet::AST::'), false)
            rescue NameError
              nil
            end
            next unless k.is_a?(Class)
            ps = k.instance_method(:initialize).parameters
            names = slots.map(&:first)
            next unless ps.map { |_, n| n.to_s } == names && ps.count { |kind, _| kind == :req } == min
            tests = slots.map { |sl| sl[2] }.freeze
            t[name] = [k, min, ps.size, ps, tests, names.index('locator') || -1,
                       AstTypes::REFERENCES.fetch(name, -1)].freeze
          end
          t.freeze
        end
      end

      # What the last read established of its Locator (nil: none was read): [file as recorded, byte size of
      # the source, line index, the source as a binary String], for DocumentChecks.
      attr_reader :source

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
        @source = nil
        @size = 0
        @depth = 0
        @in_type = 0
        @ref_at = @defs_at = -1
        @ref_kind = 0
        @refs_after = 0
        @refs_seen = nil
        @bud = WORK_PER_BYTE * @n + WORK_BASE
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
      # repeat costs one table lookup.  Positioned nodes (most of a payload) are built by #positioned and
      # arrays read by #array, not here: with them inline this method was 6.4 KB of JVM bytecode, on which
      # HotSpot's C1 gives up ("out of virtual registers in LIR generator"), so Puppet Server ran it in the
      # JVM's bytecode interpreter for ever (85% of a warm server's loading samples); a call more per node
      # costs far less.  tests/runtime/test_jruby_loader.py watches the JVM's compilation log.
      def value
        s = @s
        p = @p
        c = s.getbyte(p)
        if c == 0xd4 # fixext 1: an extension with a 1-byte payload (the usual small index or count)
          code = s.getbyte(p + 1)
          a = s.getbyte(p + 2)
          raise EOFError unless a
          @p = p + 3
          if code == 0x00 && a < 0x80 then arg = a
          elsif code == 0x12 || code == 0x30 then arg = @s.byteslice(p + 2, 1)
          elsif a < 0x80 then arg = a
          else arg = ext_arg(code, @s.byteslice(p + 2, 1)) # not a positive fixint: an error
          end
        # (the other shapes by their frequency in the corpus's payloads; an equality test first, as it
        # needs no nil check)
        elsif c == 0xc7 && s.getbyte(p + 2) == 0x12 # ext 8: a type's name (a marker's body)
          n = s.getbyte(p + 1)
          raise EOFError if p + 2 + n >= @n
          @p = p + 3 + n
          code = PCORE_OBJECT_START
          arg = s.byteslice(p + 3, n)
        elsif c == 0xd5 && s.getbyte(p + 2) == 0xcc && (code = s.getbyte(p + 1)) != 0x12 && code != 0x30
          # fixext 2 holding a uint 8 (an index past 127)
          arg = s.getbyte(p + 3)
          raise EOFError unless arg
          @p = p + 4
        elsif c.nil?
          raise EOFError
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
        elsif c < 0x80 # positive fixint
          @p = p + 1
          return c
        elsif c == 0xc0
          @p = p + 1
          return nil
        elsif c == 0xc3 || c == 0xc2
          @p = p + 1
          return c == 0xc3
        elsif c == 0xcc # uint 8
          raise EOFError if p + 1 >= @n
          @p = p + 2
          return s.getbyte(p + 1)
        elsif c == 0xd9 # str 8
          n = s.getbyte(p + 1)
          raise EOFError if n.nil? || p + 1 + n >= @n
          @p = p + 2 + n
          v = s.byteslice(p + 2, n).force_encoding(Encoding::UTF_8)
          @wtab << v
          return v
        else
          code, arg = other(c, p)
          return arg if code.nil? # a plain value
        end
        case code
        when 0x00 # INNER_TABULATION
          marker = @wtab[arg]
          raise FormatError, "INNER_TABULATION index #{arg} out of range" if marker.nil?
          if String === marker # (not marker.is_a?: a call on a constant receiver stays monomorphic in JRuby)
            over_budget if (@bud -= marker.length).negative?
            return marker
          end
          # a node of a type seen before (most values of a payload): to #positioned before the rarer cases
          return positioned(marker) if marker[8]
          case marker[0]
          when 0x12 then nil # an object of a type seen before: built below
          when 0x13 then return included(marker[1])
          when 0x30 then return regexp(marker[1])
          else raise FormatError, 'bad INNER_TABULATION target'
          end
        when 0x12 # PCORE_OBJECT_START
          marker = marker_for(arg)
        when 0x01 # TABULATION
          return reference(arg, p)
        when 0x10 # ARRAY_START
          return array(arg, p)
        else
          return rare(code, arg)
        end
        return object(marker) unless marker[8] # (true for a positioned node's marker)
        positioned(marker)
      end

      # The value of an ARRAY_START of `arg` elements whose marker started at `p` (#value's case).
      def array(arg, p)
        s = @s
        raise EOFError if arg > @n - @p # (each element takes a byte at least)
        return definitions(arg) if p == @defs_at
        a = []
        @stab << a
        raise FormatError, 'XPP payload nested too deeply' if (@depth += 1) > 2000
        i = 0
        while i < arg
          # small integers inline (a Locator's line offsets are most of a payload's arrays), and a
          # positioned node of a type seen before (statements, arguments, operations: INNER_TABULATION of
          # its marker) handed to #positioned without #value's dispatch
          p = @p
          c = s.getbyte(p)
          if c && c < 0x80 then @p = p + 1; a << c
          elsif c == 0xcd && p + 2 < @n then @p = p + 3; a << ((s.getbyte(p + 1) << 8) | s.getbyte(p + 2))
          elsif c == 0xd4 && s.getbyte(p + 1) == 0x00 && (k = s.getbyte(p + 2)) && k < 0x80 && Array === (m = @wtab[k]) && m[8]
            @p = p + 3
            a << positioned(m)
          else a << value
          end
          i += 1
        end
        @depth -= 1
        a
      end

      # A positioned node of `marker` (#value's case): TABULATION(the Locator), offset, length, then the
      # other attributes.  The usual encodings are decoded inline; any other goes through #value and is checked.
      def positioned(marker)
        s = @s
        obj = marker[2].allocate
        @stab << obj # (a reference to it before its initializer ran is refused as cyclic: see TABULATION)
        p = @p
        if s.getbyte(p) == 0xd4 && s.getbyte(p + 1) == 0x01 && s.getbyte(p + 2) == @locator_idx
          p += 3
        else
          @p = @ref_at = p
          @ref_kind = LOCATOR_REF
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
        outside(marker, off, len) if off + len > @size # (negative ones come from #integer, which refuses them)
        @p = p
        raise FormatError, 'XPP payload nested too deeply' if (@depth += 1) > 2000
        case marker[3]
        when 3 then obj.__puppet_x_xpp_init(@locator, off, len)
        when 4
          # one more attribute, often a string (a name, a literal): inline when it is a short one or a
          # reference to one; a positioned node (VariableExpression's name, TextExpression's expression)
          # goes to #positioned directly, as in #array
          c = s.getbyte(p)
          if c && c >= 0xa0 && c <= 0xbf # fixstr
            n = c & 0x1f
            raise EOFError if p + n >= @n
            @p = p + 1 + n
            v = s.byteslice(p + 1, n).force_encoding(Encoding::UTF_8)
            @wtab << v
          elsif c == 0xd4 && s.getbyte(p + 1) == 0x00 && (v = s.getbyte(p + 2)) && v < 0x80 &&
                (v = @wtab[v]).is_a?(String)
            @p = p + 3
            over_budget if (@bud -= v.length).negative?
          elsif c == 0xd4 && s.getbyte(p + 1) == 0x00 && (v = s.getbyte(p + 2)) && v < 0x80 && Array === (v = @wtab[v]) && v[8]
            @p = p + 3
            v = positioned(v)
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

      # The rarer extensions (#value's other cases): a map, an included object, a regexp.  Apart from
      # #value so that it stays under 1000 IR instructions: JRuby compiles no larger method
      # (jruby.jit.maxsize) and interprets it for ever -- at 1053, Puppet Server's loading ran at 1.9x
      # Puppet's parse + validate.
      def rare(code, arg)
        case code
        when 0x11 # MAP_START
          raise EOFError if 2 * arg > @n - @p
          h = {}
          @stab << h
          raise FormatError, 'XPP payload nested too deeply' if (@depth += 1) > MAX_DEPTH
          arg.times do
            k = value
            # (keys the Python reader cannot hash: it refuses them)
            raise FormatError, 'unhashable map key' if k.is_a?(Array) || k.is_a?(Hash)
            h[k] = value
          end
          @depth -= 1
          h
        when 0x13 # OBJECT_START
          @wtab << [OBJECT_START, arg]
          included(arg)
        when 0x30 # REGEXP
          src = body_items(arg)
          raise FormatError, 'bad REGEXP payload' unless src.size == 1 && (src = src[0]).is_a?(String)
          @wtab << [REGEXP, src]
          regexp(src)
        else
          raise FormatError, "unknown Pcore extension type #{code}"
        end
      end

      # An offset or length in another encoding than #value's inline ones: the value at `p` into @int (it must
      # be an Integer, and not negative: inside the source); returns the position after it.
      def integer(p, marker)
        @p = p
        @int = value
        raise FormatError, "#{marker[4]}: locator, offset and length expected" unless @int.is_a?(Integer)
        outside(marker, @int, 0) if @int.negative?
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
        when 0xcf
          v = fixed(p, 8, 'Q>')
          raise FormatError, 'integer out of 64-bit signed range' if v > MAX_INT
          [nil, v]
        when 0xd0 then [nil, fixed(p, 1, 'c')]
        when 0xd1 then [nil, fixed(p, 2, 's>')]
        when 0xd2 then [nil, fixed(p, 4, 'l>')]
        when 0xd3 then [nil, fixed(p, 8, 'q>')]
        when 0xca then [nil, fixed(p, 4, 'g')]
        when 0xcb then [nil, fixed(p, 8, 'G')]
        when 0xd9 then str(p + 2, fixed(p, 1, 'C'), Encoding::UTF_8)
        when 0xda then str(p + 3, fixed(p, 2, 'n'), Encoding::UTF_8)
        when 0xdb then str(p + 5, fixed(p, 4, 'N'), Encoding::UTF_8)
        when 0xc4, 0xc5, 0xc6 then raise FormatError, 'msgpack bin value (not used by Pcore text serialization)'
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

      # The index or count an extension of type `code` holds in `body` (exactly one msgpack non-negative
      # integer; OBJECT_START's at least 1).
      def ext_arg(code, body)
        raise FormatError, "unknown Pcore extension type #{code}" unless KNOWN.include?(code)
        v = body_items(body)
        raise FormatError, 'bad extension payload' unless v.size == 1 && (v = v[0]).is_a?(Integer) && !v.negative?
        v
      end

      BODY_INT = { 0xcc => [1, 'C'], 0xcd => [2, 'n'], 0xce => [4, 'N'], 0xcf => [8, 'Q>'],
                   0xd0 => [1, 'c'], 0xd1 => [2, 's>'], 0xd2 => [4, 'l>'], 0xd3 => [8, 'q>'] }.freeze
      BODY_STR = { 0xd9 => [1, 'C'], 0xda => [2, 'n'], 0xdb => [4, 'N'] }.freeze
      BODY_OTHER = { 0xc0 => 0, 0xc2 => 0, 0xc3 => 0, 0xca => 4, 0xcb => 8 }.freeze # nil, booleans, floats
      NOT_INT_OR_STRING = Object.new.freeze

      # The msgpack values of an extension body (a String): integers and strings as such, nil, booleans and
      # floats as NOT_INT_OR_STRING (no body the reader takes holds one); a nested extension, an array, a map,
      # a bin value, an integer beyond 64 bits or a value cut short raises FormatError.  Nothing is
      # allocated beyond the body's own bytes.
      def body_items(b)
        items = []
        n = b.bytesize
        i = 0
        while i < n
          c = b.getbyte(i)
          i += 1
          if c < 0x80 then items << c
          elsif c >= 0xe0 then items << c - 0x100
          elsif (f = BODY_INT[c])
            raise FormatError, 'truncated extension payload' if i + f[0] > n
            v = b.byteslice(i, f[0]).unpack1(f[1])
            raise FormatError, 'integer out of 64-bit signed range' if v > MAX_INT
            items << v
            i += f[0]
          else
            len = nil
            if c >= 0xa0 && c <= 0xbf then len = c & 0x1f
            elsif (f = BODY_STR[c])
              raise FormatError, 'truncated extension payload' if i + f[0] > n
              len = b.byteslice(i, f[0]).unpack1(f[1])
              i += f[0]
            elsif (skip = BODY_OTHER[c])
              raise FormatError, 'truncated extension payload' if i + skip > n
              items << NOT_INT_OR_STRING
              i += skip
              next
            else
              raise FormatError, format('bad extension payload (byte 0x%02x)', c)
            end
            raise FormatError, 'truncated extension payload' if i + len > n
            items << b.byteslice(i, len).force_encoding(Encoding::UTF_8)
            i += len
          end
        end
        items
      end

      # The extension type of the value at `q`, or nil when it is not an extension.
      def ext_code_at(q)
        case @s.getbyte(q)
        when 0xd4, 0xd5, 0xd6, 0xd7, 0xd8 then @s.getbyte(q + 1)
        when 0xc7 then @s.getbyte(q + 2)
        when 0xc8 then @s.getbyte(q + 3)
        when 0xc9 then @s.getbyte(q + 5)
        end
      end

      # TABULATION(k) read at `at`: the object of serializer-table entry k, accepted only where Puppet's model
      # shares one (as the complete Python reader, xpp/pcore/read.py): in a node's locator slot, the
      # Locator; as an entry of Program.definitions, a node read since that Program started, each once.  Any
      # other repeated or cyclic reference would make the AST a graph whose walk can be exponential in the
      # size of the file (a 1 KB file kept Puppet's compile busy for ever): refused.
      def reference(k, at)
        v = @stab.fetch(k) { raise FormatError, "TABULATION index #{k} out of range" }
        if at == @ref_at
          if @ref_kind == LOCATOR_REF
            return v if v && v.equal?(@locator)
          elsif k > @refs_after && !@refs_seen.key?(k) && v.is_a?(Puppet::Pops::Model::PopsObject) && !v.hash.nil?
            @refs_seen[k] = true
            return v
          end
        end
        raise FormatError, "TABULATION #{k}: a repeated reference to an already read object (Puppet's model " \
                           'shares only the Locator and the nodes of Program.definitions)'
      end

      # The value of Program.definitions, an ARRAY_START of `count`: each entry a back-reference (#reference).
      def definitions(count)
        a = []
        @stab << a
        @refs_seen = {}
        count.times do
          q = @p
          raise FormatError, 'Program.definitions holds a value that is not a node of its body' unless ext_code_at(q) == TABULATION
          @ref_at = q
          @ref_kind = DEFINITION_REF
          a << value
        end
        a
      end

      def outside(marker, off, len)
        raise FormatError, "#{marker[4].split('::').last} position #{off}+#{len} is outside the source (#{@size} bytes)"
      end

      def over_budget
        raise FormatError, "the document repeats more text than #{WORK_PER_BYTE} characters per byte of it allow " \
                           '(a back-reference bomb?)'
      end

      def values(count)
        raise EOFError if count > @n - @p
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
        items = body_items(p)
        marker = object_start(items)
        segs = items[1, items[0]]
        names = @segs
        checks = []
        segs.each_with_index { |sg, i| checks.push(sg, names[i]) unless sg.is_a?(String) }
        strings = segs.select { |sg| sg.is_a?(String) }.map { |sg| sg.dup.freeze }
        MARKERS[p.dup.freeze] = [checks.freeze, strings.freeze, marker].freeze if !hit && MARKERS.size < MARKERS_MAX
        @wtab << marker
        marker
      end

      # The marker of a PCORE_OBJECT_START payload's `items` (segment count, segments: a name or a writer-table
      # index of one, attribute count); the new segments enter the writer table:
      # [code, :node | :positioned, class, count, name, builder, locator slot, reference slot, positioned?]
      # | [code, :locator, nil, count, name] | [code, :ptype, name, count, name]
      def object_start(items)
        n = items[0]
        unless n.is_a?(Integer) && n >= 1 && items.size == n + 2
          raise FormatError, 'bad PCORE_OBJECT_START segment count'
        end
        segs = Array.new(n) do |i|
          s = items[i + 1]
          if s.is_a?(Integer)
            raise FormatError, 'bad PCORE_OBJECT_START segment index' if s.negative?
            s = @wtab.fetch(s) { raise FormatError, 'bad PCORE_OBJECT_START segment index' }
            raise FormatError, 'bad PCORE_OBJECT_START segment index' unless s.is_a?(String)
          elsif s.is_a?(String)
            @wtab << s
          else
            raise FormatError, 'bad PCORE_OBJECT_START segment'
          end
          s
        end
        count = items[n + 1]
        raise FormatError, 'bad PCORE_OBJECT_START attribute count' unless count.is_a?(Integer) && !count.negative?
        @segs = segs
        name = segs.join('::')
        info = @table[name]
        if info
          klass, min, max, params, tests, locslot, refslot = info
          unless count.between?(min, max)
            raise FormatError, "Feature count mismatch for #{name}. Expected #{min} - #{max}, actual #{count}"
          end
          build = Builder.cached(klass, params, min, tests, name)
          kind = min >= 3 && locslot.zero? && build ? :positioned : :node
          [PCORE_OBJECT_START, kind, klass, count, name, build, locslot, refslot, kind == :positioned].freeze
        elsif name == LOCATOR
          raise FormatError, 'Feature count mismatch for Puppet::AST::Locator' unless count.between?(2, 3)
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
        _, kind, klass, count, name, build, locslot, refslot = marker
        obj =
          case kind
          when :node
            raise EOFError if count > @n - @p
            raise FormatError, 'XPP payload nested too deeply' if (@depth += 1) > MAX_DEPTH
            vals = Array.new(count)
            i = 0
            while i < count
              if i == locslot
                @ref_at = @p
                @ref_kind = LOCATOR_REF
              elsif i == refslot
                @defs_at = @p
                @refs_after = idx
              end
              vals[i] = value
              i += 1
            end
            @depth -= 1
            if vals.size >= 3 && locslot.zero? && (off = vals[1]).is_a?(Integer) && (len = vals[2]).is_a?(Integer) &&
               (off + len > @size || off.negative? || len.negative?)
              outside(marker, off, len)
            end
            if build
              klass.allocate.__puppet_x_xpp_init(*vals)
            else
              MsgpackReader.checker(name).call(vals)
              klass.new(*vals)
            end
          when :locator
            locator(idx, values(count))
          else
            # a Pcore type is only read as an included object's type (never an AST attribute's value)
            raise FormatError, "#{klass} outside an included object's type" unless @in_type > 0
            PTYPE.new(klass, values(count))
          end
        @stab[idx] = obj
      end

      # The Locator of `vals` (string, file, line index; `idx`: its serializer-table entry).  The first one
      # read is the document's (every node must refer to it); another one is accepted only when equal to it
      # (as the Python reader's Locator equality) and is then the same object.  The line index must be the
      # text's (a line start after each LF); without one, it is computed.
      def locator(idx, vals)
        MsgpackReader.checker(LOCATOR).call(vals)
        string, file, index = vals
        b = string.b
        if index.nil?
          over_budget if (@bud -= string.length).negative?
          index = DocumentChecks.line_starts(b)
        elsif !DocumentChecks.line_starts?(b, index)
          raise FormatError, 'Locator.line_index is inconsistent with the source text'
        end
        if @locator
          src = @source
          raise FormatError, 'a second, different Locator in one XPP payload' unless file == src[0] && index == src[2] && b == src[3]
          return @locator
        end
        @source = [file, b.bytesize, index, b].freeze
        @size = b.bytesize
        @locator_idx = idx
        @locator = Puppet::Pops::Parser::Locator::Locator19.new(string, @file, index)
      end

      # An included object (OBJECT_START of `count`): the type, then the values; only Xpp::ParseResult is
      # known.
      def included(count)
        raise FormatError, 'bad OBJECT_START' unless count >= 1
        raise EOFError if count > @n - @p
        name, names, required, defaults = @wtab.size == 1 && @stab.empty? ? first_type : included_type
        unless (count - 1).between?(required, names.size)
          raise FormatError, "Feature count mismatch for #{name}. Expected #{required} - #{names.size}, actual #{count - 1}"
        end
        raise FormatError, "unknown included type #{name}" unless name == 'Xpp::ParseResult'
        idx = @stab.size
        @stab << OPEN
        vals = values(count - 1)
        h = {}
        names.each_with_index do |n, i|
          d = i < vals.size ? vals[i] : defaults[n]
          h[n] = d.is_a?(Array) || d.is_a?(Hash) ? d.dup : d # (a default may come from TYPES_READ)
        end
        @stab[idx] = Included.new(name, h)
      end

      TYPES_READ = [] # [payload bytes up to the end of the type, writer- and serializer-table entries, budget used, type]
      TYPES_READ_MAX = 8

      # #included_type of the document's top value (an OBJECT_START at the start of the payload, nothing read
      # before it).  Every document our writer makes starts with the same bytes there, and what they give
      # depends on nothing else: their outcome is remembered process-wide (about a tenth of the time of
      # loading a small file went into reading this type again).
      def first_type
        TYPES_READ.each do |bytes, wtab, stab, used, type|
          next unless @s.byteslice(0, bytes.bytesize) == bytes
          @wtab.concat(wtab)
          @stab.concat(stab)
          over_budget if (@bud -= used).negative?
          @p = bytes.bytesize
          return type
        end
        w = @wtab.size
        bud = @bud
        type = included_type
        if TYPES_READ.size < TYPES_READ_MAX
          TYPES_READ << [@s.byteslice(0, @p).freeze, @wtab[w..].freeze, @stab.dup.freeze, bud - @bud, type].freeze
        end
        type
      end

      # The type of an included object, read: [name, attribute names, required count, defaults].  The
      # attributes as Pcore (and the Python reader, xpp/pcore/base.py) order them: the required ones (no
      # `value`), then the optional ones; derived and constant ones are not written.
      def included_type
        @in_type += 1
        type = value
        @in_type -= 1
        unless type.is_a?(PTYPE) && type.name == 'Pcore::ObjectType' && type.values.size == 1 && type.values[0].is_a?(Hash)
          raise FormatError, 'OBJECT_START must be followed by a Pcore::ObjectType'
        end
        init = type.values[0]
        raise FormatError, 'included object type has no name' unless init['name'].is_a?(String)
        attrs = init.fetch('attributes', {})
        raise FormatError, 'included object type has bad attributes' unless attrs.is_a?(Hash)
        req = []
        opt = []
        defaults = {}
        attrs.each do |n, spec|
          raise FormatError, 'included object type has a non-string attribute name' unless n.is_a?(String)
          if spec.is_a?(Hash)
            next if %w[derived constant given_or_derived].include?(spec['kind'])
            if spec.key?('value')
              opt << n
              defaults[n] = spec['value']
              next
            end
          elsif !spec.is_a?(PTYPE)
            raise FormatError, "included object type attribute #{n} has no type"
          end
          req << n
        end
        [init['name'], (req + opt).freeze, req.size, defaults.freeze].freeze
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
        if fmt == 'msgpack'
          r = reader
          program, diags = DocumentChecks.parse_result(r.read(payload, file), r.source)
        else
          program, diags = unwrap(read_json(payload, file))
        end
        Document.new(program, diags, params)
      rescue FormatError => e
        raise if e.message.valid_encoding?
        raise FormatError, e.message.scrub # (a name from the damaged payload: the warning must print)
      rescue StandardError => e
        raise FormatError, "malformed XPP document (#{e.class}: #{e.message})"
      end

      def self.load_file(path, file)
        load(File.binread(path), file)
      rescue SystemCallError, IOError => e
        raise FormatError, "cannot read #{path}: #{e.message}"
      end

      # The Program and diagnostics of a JSON document's top value (read by Puppet's Deserializer).
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

# frozen_string_literal: true

# A MessagePack reader in plain Ruby, for the Rubies where the `msgpack` gem is not installed -- above all
# Puppet Server's JRuby, which ships without it and cannot reach rubygems.org on many sites.  It offers
# exactly the part of the gem's API the loader uses (`Unpacker#register_type/feed/read/reset/buffer`,
# `unpack`), with the gem's error behaviour where the loader depends on it: a value cut short raises
# EOFError (the loader's "truncated"), a byte that starts no value raises MalformedFormatError, an
# extension type nobody registered raises UnknownExtTypeError.  Slower than the gem's C unpacker, still
# much faster than parsing on JRuby, whose JIT compiles this loop.
#
# Bounded: an array or map header is believed only when the bytes left could hold that many values (each
# takes one byte at least); a larger count is a value cut short (EOFError) before anything is allocated,
# where the gem once allocated 2^32 slots for a 5-byte header (issue 26).
module PuppetX
  module Xpp
    module PureMsgpack
      class MalformedFormatError < StandardError; end

      class UnknownExtTypeError < StandardError; end

      # The gem's `Unpacker#buffer`, reduced to what the loader asks of it.
      class Buffer
        def initialize(unpacker)
          @u = unpacker
        end

        def empty?
          @u.remaining.zero?
        end
      end

      class Unpacker
        def initialize
          @ext = {}
          reset
        end

        def register_type(code, &block)
          @ext[code] = block
        end

        def reset
          @data = ''.b
          @pos = 0
        end

        def feed(str)
          @data = @pos.zero? && @data.empty? ? str.b : @data.byteslice(@pos..) + str.b
          @pos = 0
          self
        end

        def buffer
          Buffer.new(self)
        end

        def remaining
          @data.bytesize - @pos
        end

        # The next value; consumed only when whole (a short read leaves the position where it was).
        def read
          start = @pos
          begin
            value
          rescue EOFError
            @pos = start
            raise
          end
        end

        private

        def take(n)
          raise EOFError, 'end of buffer reached' if @pos + n > @data.bytesize

          s = @data.byteslice(@pos, n)
          @pos += n
          s
        end

        def byte
          b = @data.getbyte(@pos)
          raise EOFError, 'end of buffer reached' unless b

          @pos += 1
          b
        end

        def str(n)
          take(n).force_encoding(Encoding::UTF_8)
        end

        def ext(n)
          code = take(1).unpack1('c')
          payload = take(n)
          proc = @ext[code]
          raise UnknownExtTypeError, "unexpected extension type #{code}" unless proc

          proc.call(payload)
        end

        # One value, by its first byte (the MessagePack specification's table).
        def value
          b = byte
          return b if b < 0x80
          return b - 0x100 if b >= 0xe0
          return str(b & 0x1f) if b >= 0xa0 && b <= 0xbf
          return array(b & 0x0f) if b >= 0x90 && b <= 0x9f
          return map(b & 0x0f) if b >= 0x80 && b <= 0x8f

          case b
          when 0xc0 then nil
          when 0xc2 then false
          when 0xc3 then true
          when 0xc4 then take(byte)
          when 0xc5 then take(take(2).unpack1('n'))
          when 0xc6 then take(take(4).unpack1('N'))
          when 0xc7 then ext(byte)
          when 0xc8 then ext(take(2).unpack1('n'))
          when 0xc9 then ext(take(4).unpack1('N'))
          when 0xca then take(4).unpack1('g')
          when 0xcb then take(8).unpack1('G')
          when 0xcc then byte
          when 0xcd then take(2).unpack1('n')
          when 0xce then take(4).unpack1('N')
          when 0xcf then take(8).unpack1('Q>')
          when 0xd0 then take(1).unpack1('c')
          when 0xd1 then take(2).unpack1('s>')
          when 0xd2 then take(4).unpack1('l>')
          when 0xd3 then take(8).unpack1('q>')
          when 0xd4 then ext(1)
          when 0xd5 then ext(2)
          when 0xd6 then ext(4)
          when 0xd7 then ext(8)
          when 0xd8 then ext(16)
          when 0xd9 then str(byte)
          when 0xda then str(take(2).unpack1('n'))
          when 0xdb then str(take(4).unpack1('N'))
          when 0xdc then array(take(2).unpack1('n'))
          when 0xdd then array(take(4).unpack1('N'))
          when 0xde then map(take(2).unpack1('n'))
          when 0xdf then map(take(4).unpack1('N'))
          else raise MalformedFormatError, format('invalid byte 0x%02x', b)
          end
        end

        def array(n)
          raise EOFError, 'end of buffer reached' if n > remaining

          Array.new(n) { value }
        end

        def map(n)
          raise EOFError, 'end of buffer reached' if 2 * n > remaining

          h = {}
          n.times { h[value] = value }
          h
        end
      end

      # The gem's `MessagePack.unpack`: exactly one value, nothing after it.
      def self.unpack(str)
        u = Unpacker.new
        u.feed(str)
        v = u.read
        raise MalformedFormatError, 'extra bytes follow after a deserialized object' unless u.remaining.zero?

        v
      end
    end
  end
end

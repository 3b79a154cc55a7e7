# frozen_string_literal: true
# Pcore serialization ops: Puppet's own bytes for its parse result, and Puppet reading bytes we produced.
#
# Released Puppet 7 ships the format-independent Serializer/Deserializer and the JSON writer/reader. It has
# no msgpack reader/writer (that was the unmerged puppet PR #5093), so the msgpack variant is run through the
# minimal AbstractWriter/AbstractReader adapters below, backed by the msgpack gem: an extension's payload is
# the bytes of a separate packer, read back by a separate unpacker.
#
# ops
#   pcore_write  Args: source | file (+ path), epp, tasks, format ('msgpack' | 'json', default msgpack),
#                what ('program' (default) | 'parse_result'), diagnostics (array of hashes, parse_result only).
#                Serializes Puppet's parse with Serializer(type_by_reference: true). For 'parse_result' the
#                top-level value is an Xpp::ParseResult instance whose object type is *included* (OBJECT_START)
#                while the AST inside is written by type name. -> {"bytes" => base64, "size" => n}
#   pcore_read   Args: data (base64), format, envelope (true: strip the header up to the first blank line),
#                and optionally source | file (+ path), epp, tasks to compare with Puppet's own parse.
#                Deserializes with the stock Deserializer inside the oracle's loaders override.
#                -> {"type" => pcore type name of the top value, "program" => Puppet's JSON serialization of the
#                    deserialized Program (nil when none), "program_class" => Ruby class name,
#                    "diagnostics" => the ParseResult's diagnostics (nil for a bare Program),
#                    "equal" => Program == own parse (nil when nothing to compare),
#                    "locator_shared" => every node refers to the Program's Locator object,
#                    "definitions_in_body" => every Program.definitions entry is a node of the body tree}
#   pcore_canon  Args: source | file (+ path), epp, tasks. -> Puppet's JSON serialization (text) of its parse.
require 'base64'
require 'msgpack'

module OraclePcore
  S = Puppet::Pops::Serialization

  class MsgPackWriter < S::AbstractWriter
    def initialize(options = {})
      super(MessagePack::Packer.new, options)
    end

    def build_payload
      ep = MessagePack::Packer.new
      yield(ep)
      ep.to_s
    end

    def bytes
      @packer.to_s
    end
  end

  class MsgPackReader < S::AbstractReader
    def initialize(data)
      unpacker = MessagePack::Unpacker.new
      unpacker.feed(data)
      super(unpacker)
    end

    def read_payload(data)
      ep = MessagePack::Unpacker.new
      ep.feed(data)
      yield(ep)
    end
  end

  # A Serializer that includes the type of the first (top-level) object and writes all others by name:
  # this is how an Xpp::ParseResult document is laid out.
  class IncludeTopTypeSerializer < S::Serializer
    def type_by_reference?
      first = !@top_done
      @top_done = true
      !first
    end
  end

  PARSE_RESULT_TYPE = "Object[{name => 'Xpp::ParseResult', attributes => {" \
                      "program => {type => Any, value => undef}, " \
                      "diagnostics => {type => Array[Hash[String, Any]], value => []}}}]"

  class << self
    def loader
      Puppet.lookup(:loaders).private_environment_loader
    end

    def parse_result_type
      @parse_result_type ||= begin
        t = Puppet::Pops::Types::TypeParser.singleton.parse(PARSE_RESULT_TYPE, loader)
        t.resolve(loader)
        t
      end
    end

    def serialize(value, format, serializer_class = S::Serializer)
      case format.to_s
      when 'json'
        io = +''
        s = serializer_class.new(S::JSON::Writer.new(io), type_by_reference: true)
        s.write(value)
        s.finish
        io.b
      when 'msgpack', ''
        w = MsgPackWriter.new
        s = serializer_class.new(w, type_by_reference: true)
        s.write(value)
        s.finish
        w.bytes
      else
        raise ArgumentError, "unknown format #{format.inspect}"
      end
    end

    def deserialize(bytes, format)
      reader = case format.to_s
               when 'json' then S::JSON::Reader.new(bytes.dup.force_encoding(Encoding::UTF_8))
               when 'msgpack', '' then MsgPackReader.new(bytes)
               else raise ArgumentError, "unknown format #{format.inspect}"
               end
      S::Deserializer.new(reader, loader).read
    end

    def strip_envelope(bytes)
      m = bytes.b.match(/\r?\n\r?\n/n)
      raise ArgumentError, 'no blank line ends the envelope' unless m
      bytes.b[m.end(0)..-1]
    end

    def json_text(program)
      serialize(program, 'json').force_encoding(Encoding::UTF_8)
    end

    def nodes(program)
      out = []
      stack = [program]
      until stack.empty?
        n = stack.pop
        next unless n.is_a?(Puppet::Pops::Model::PopsObject)
        out << n
        n._pcore_contents { |c| stack << c }
      end
      out
    end
  end
end

Oracle.register('pcore_write') do |req|
  program = Oracle.parse_request(req)
  value = program
  serializer_class = OraclePcore::S::Serializer
  if req['what'].to_s == 'parse_result'
    value = OraclePcore.parse_result_type.create(program, req['diagnostics'] || [])
    serializer_class = OraclePcore::IncludeTopTypeSerializer
  end
  bytes = OraclePcore.serialize(value, req['format'] || 'msgpack', serializer_class)
  { 'bytes' => Base64.strict_encode64(bytes), 'size' => bytes.bytesize }
end

Oracle.register('pcore_read') do |req|
  bytes = Base64.decode64(req['data'].to_s)
  bytes = OraclePcore.strip_envelope(bytes) if req['envelope']
  value = OraclePcore.deserialize(bytes, req['format'] || 'msgpack')
  type = Puppet::Pops::Types::TypeCalculator.singleton.infer(value)
  type_name = type.respond_to?(:name) && type.name ? type.name : type.to_s
  diagnostics = nil
  program = value
  if value.respond_to?(:program) && value.respond_to?(:diagnostics)
    program = value.program
    diagnostics = value.diagnostics
  end
  answer = { 'type' => type_name, 'program_class' => program.class.name, 'diagnostics' => diagnostics,
             'program' => nil, 'equal' => nil, 'locator_shared' => nil, 'definitions_in_body' => nil }
  if program.is_a?(Puppet::Pops::Model::Program)
    answer['program'] = OraclePcore.json_text(program)
    all = OraclePcore.nodes(program)
    answer['locator_shared'] = all.all? { |n| !n.is_a?(Puppet::Pops::Model::Positioned) || n.locator.equal?(program.locator) }
    ids = all.map(&:object_id).to_h { |i| [i, true] }
    answer['definitions_in_body'] = program.definitions.all? { |d| ids.key?(d.object_id) }
    answer['equal'] = (program == Oracle.parse_request(req)) if req.key?('source') || req.key?('file')
  end
  answer
end

Oracle.register('pcore_canon') do |req|
  OraclePcore.json_text(Oracle.parse_request(req))
end

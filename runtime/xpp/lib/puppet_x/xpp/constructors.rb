# frozen_string_literal: true

# The typed constructors of the loader (loader.rb): the type tests of the AST table (ast_types.rb, generated
# from grammar/ast_table.py) compiled into a checker per type and into the flattened constructor of each
# model class, so that a value of the wrong type (a string where a node belongs, an operator outside its
# set, an integer in Program.definitions) raises FormatError before Puppet ever sees the node.
module PuppetX
  module Xpp
    class MsgpackReader
      # Raises the FormatError of value `v` in wire slot `slot` of type `name` (from the generated
      # constructors and checkers).
      def self.ill_typed(name, slot, v)
        attr, type = AstTypes::TYPES.fetch(name)[1][slot]
        what = v.nil? ? 'Undef' : v.class.name.split('::').last
        raise FormatError, "#{name.split('::').last}[#{attr}] has wrong type, expects #{type}, got #{what}"
      end

      CHECKERS = {}
      CHECKERS_LOCK = Mutex.new

      # The Ruby test `test` of ast_types.rb (a format with %<v>s) for value `v`, written so that the
      # receiver of each call is always the same object: `K === v` for `v.is_a?(K)`, `nil.equal?(v)` for
      # `v.nil?`.  Why: `v` is of a different class at almost every call (the nodes of ~60 model classes,
      # strings, arrays), so a call on it misses the call site's cache (JRuby then looks the method up in
      # the class's table each time: a fifth of Puppet Server's loading was in those calls); a call on a
      # constant hits.  Module#=== is is_a? with the operands swapped.
      def self.test_code(test, v)
        format(test.gsub(/%<v>s\.is_a\?\((::[A-Za-z:]+)\)/, '\\1 === %<v>s').gsub('%<v>s.nil?', 'nil.equal?(%<v>s)'), v: v)
      end

      # lambda(vals) -> nil (or raises FormatError): the type tests of `name` (ast_types.rb) on its values in
      # wire order; slots past the values given are not tested (their defaults are of the right type).
      def self.checker(name)
        CHECKERS[name] || CHECKERS_LOCK.synchronize do
          slots = AstTypes::TYPES.fetch(name)[1]
          body = slots.each_with_index.map do |(_, _, test), i|
            "v = vals[#{i}]\nMsgpackReader.ill_typed('#{name}', #{i}, v) unless n <= #{i} || #{MsgpackReader.test_code(test, 'v')}"
          end
          CHECKERS[name] = eval("lambda do |vals|\nn = vals.size\n#{body.join("\n")}\nnil\nend", binding, __FILE__, __LINE__)
        end
      end

      # Flattened constructors.  Puppet's generated initializers call `super` through up to six classes,
      # each XOR-ing its own attributes' hashes into @hash; that call chain costs more than reading the
      # payload.  For each class a single method sets every instance variable and @hash in one frame.
      # Which attributes enter @hash (and the default values) is observed on instances made by Puppet's own
      # `new`, and the builder is kept only if, on sample values, it yields instances with exactly the same
      # instance variables and hash as `new`; otherwise that class uses `new` (and MsgpackReader.checker).
      module Builder
        Sample = Struct.new(:n) # a distinct value per attribute, with a distinct hash
        DEFAULTS = {}.compare_by_identity
        METHOD = :__puppet_x_xpp_init # the one method added to each model class (called by name in #value: no __send__)

        BUILT = {}.compare_by_identity # class -> builder or false; made on first use (a run loads few types)
        LOCK = Mutex.new

        def self.cached(klass, params, req, tests, name)
          b = BUILT[klass]
          return b || nil unless b.nil?
          LOCK.synchronize { BUILT[klass] = self.for(klass, params, req, tests, name) || false }
          BUILT[klass] || nil
        end

        # A lambda(vals) -> instance, or nil when the class must use `new`.  Once the builder is found equal
        # to `new`, it is redefined with the type tests of the class's attributes (`tests`, from
        # ast_types.rb) first: an ill-typed value raises FormatError.  A positioned node's locator, offset
        # and length are checked by MsgpackReader#value instead.
        def self.for(klass, params, req, tests, pname)
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
          # (the literal last: JRuby applies an operator to a literal argument without a call)
          expr = (hashed.map { |i| "v#{i}.hash" } + ["#{h0}"]).join(' ^ ')
          DEFAULTS[klass] = defaults
          args = names.each_index.map { |i| i < req ? "v#{i}" : "v#{i} = #{name}::DEFAULTS[#{klass.name}][#{i}]" }
          sets = names.each_index.map { |i| "@#{names[i]} = v#{i}" }
          klass.class_eval("def #{METHOD}(#{args.join(', ')})\n@hash = #{expr}\n#{sets.join("\n")}\nself\nend",
                           __FILE__, __LINE__)
          build = ->(*vs) { klass.allocate.__send__(METHOD, *vs) }
          [vals, vals.first(req)].each do |vs|
            a = klass.new(*vs)
            b = build.call(*vs)
            # (@hash by value: an Integer past 2**62 is a new object each time, on MRI and JRuby alike, and a
            # check of its identity refused a random half of the classes)
            same = a.hash == b.hash && a.instance_variables.sort == b.instance_variables.sort &&
                   a.instance_variables.all? { |iv| iv == :@hash || a.instance_variable_get(iv).equal?(b.instance_variable_get(iv)) }
            return nil unless same
          end
          first = names.first(3) == %i[locator offset length] ? 3 : 0
          checks = (first...names.size).map do |i|
            "::PuppetX::Xpp::MsgpackReader.ill_typed('#{pname}', #{i}, v#{i}) unless #{MsgpackReader.test_code(tests[i], "v#{i}")}"
          end
          klass.class_eval("def #{METHOD}(#{args.join(', ')})\n#{checks.join("\n")}\n@hash = #{expr}\n" \
                           "#{sets.join("\n")}\nself\nend", __FILE__, __LINE__)
          build
        rescue StandardError
          nil
        end
      end
    end
  end
end

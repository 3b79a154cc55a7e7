# frozen_string_literal: true
# op "positions": every node of the parse result in pre-order containment order, as
# [TypeSimpleName, offset, length]; the Program (no position) is ["Program", nil, nil].
# Containment follows the model's own `_pcore_contents` (attributes in Pcore order, arrays element by element);
# Program#definitions is a reference and the Locator is not a node, so neither is walked.
# Args: source | file (+ path), epp, tasks.
Oracle.register('positions') do |req|
  out = []
  stack = [Oracle.parse_request(req)]
  until stack.empty?
    node = stack.pop
    next unless node.is_a?(Puppet::Pops::Model::PopsObject)
    name = node.class.name.split('::').last
    if node.is_a?(Puppet::Pops::Model::Positioned)
      out << [name, node.offset, node.length]
    else
      out << [name, nil, nil]
    end
    children = []
    node._pcore_contents { |c| children << c }
    stack.concat(children.reverse)
  end
  out
end

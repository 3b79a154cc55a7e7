# Development-time generator of server/analysis/data/facts.json: every core fact Facter documents in its
# own schema (lib/schema/facter.yaml, shipped with Facter: Apache-2.0, Puppet, Inc.), with its type, its
# description as that schema words it, whether Facter hides it by default (the legacy names), the
# pattern of a dynamic name (``disks.<devicename>``) and the elements of a structured fact.  The
# language server's fact hover reads it (server/analysis/builtins.py ``fact_schema``), so it needs no
# Ruby at run time.  Run from the repository root:
#
#     ruby server/analysis/gen_facts.rb > server/analysis/data/facts.json
#
# Only the schema's ``type``, ``description``, ``hidden``, ``pattern`` and ``elements`` are written;
# nothing is edited by hand.
require 'json'
require 'yaml'
require 'facter'

schema = $LOAD_PATH.map { |d| File.join(d, 'schema', 'facter.yaml') }.find { |p| File.file?(p) }
abort 'gen_facts.rb: no schema/facter.yaml next to the installed Facter' if schema.nil?

def entry(spec)
  out = { 'type' => spec['type'].to_s, 'description' => spec['description'].to_s.strip }
  out['hidden'] = true if spec['hidden']
  out['pattern'] = spec['pattern'].to_s if spec['pattern']
  elements = spec['elements']
  out['elements'] = elements.sort.to_h { |name, sub| [name.to_s, entry(sub)] } if elements.is_a?(Hash)
  out
end

facts = YAML.safe_load(File.read(schema))
puts JSON.pretty_generate({
  'generated_from' => { 'facter' => Facter::VERSION, 'schema' => 'lib/schema/facter.yaml of Facter (Apache-2.0)' },
  'facts' => facts.sort.to_h { |name, spec| [name.to_s, entry(spec)] },
})

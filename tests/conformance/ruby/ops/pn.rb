# frozen_string_literal: true
# op "pn": the data `puppet parser dump --format json` prints for a source (PN of the parse result, as Data).
# Args: source | file (+ path), epp (default: by .epp extension), tasks.
# Like `puppet parser dump` (without --validate) the source is only parsed, not validated.
Oracle.register('pn') do |req|
  Puppet::Pops::Model::PNTransformer.transform(Oracle.parse_request(req)).to_data
end

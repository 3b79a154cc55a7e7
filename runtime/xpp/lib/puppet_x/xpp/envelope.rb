# frozen_string_literal: true

# The PRFC-23 envelope of an `.xpp` file (as xpp/envelope.py reads it): the MIME type line with its
# parameters, a blank line, the payload; the payload's `checksum=sha256-...` verified when present.
require 'openssl'

module PuppetX
  module Xpp
    # The one error class of malformed, truncated or unusable `.xpp` input.
    class FormatError < StandardError; end

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

      # The header exactly as puppet-xpp writes it (xpp/envelope.py's parameter order, single spaces, a
      # checksum): one anchored match gives every parameter, where the general path below (any blanks, any
      # order, names checked one by one) took about as long as the payload's checksum (8 of 170 ms of
      # loading the corpus, 817 files, MRI).  A header of any other shape takes the general path, which
      # accepts everything this one does with the same parameters.
      WRITTEN = %r{\Aapplication/vnd\.puppet\.pcore\+msgpack; document-type=xpp; version=1(?:; puppet-version=([0-9_]+))?(?:; strict=([a-z]+))?; tasks=(true|false); source-sha256=([0-9a-f]{64}); checksum=sha256-([0-9a-f]{64})\n\n}.freeze

      # [format, params, payload] of an .xpp document (a binary String); raises FormatError.
      def self.split(data)
        w = WRITTEN.match(data)
        return written(data, w) if w
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

      # #split of a header matched by WRITTEN (`w`): the same parameters, in the header's order.
      def self.written(data, w)
        params = { 'document-type' => 'xpp', 'version' => '1' }
        params['puppet-version'] = w[1] if w[1]
        params['strict'] = w[2] if w[2]
        params['tasks'] = w[3]
        params['source-sha256'] = w[4]
        sum = w[5]
        params['checksum'] = "sha256-#{sum}"
        at = w.end(0)
        payload = data.byteslice(at, data.bytesize - at)
        raise FormatError, 'XPP payload does not match its checksum (damaged or truncated file)' unless Xpp.sha256_hex(payload) == sum
        ['msgpack', params, payload]
      end
    end
  end
end

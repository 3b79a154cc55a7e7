# frozen_string_literal: true
# op "lex": Puppet's own Lexer2 token stream for a source text.
# Args: source | file (+ path), epp (EPP lexer: lex_string + scan_epp), tasks (Puppet[:tasks]).
# Result: {
#   "tokens":   [[TYPE, value, offset, length, global], ...]   (the end marker is not included)
#   "warnings": [[issue_code, line, pos, message], ...]        (lexer warnings Puppet logged)
#   "error":    nil | {issue_code, line, pos, message, arguments}
# }
# value: a String (REGEX: the pattern source; BOOLEAN: "true"/"false"; nil: ""; SUBLOCATE: the joined lines).
# offset/length are the token's own (byte) values. Tokens lexed inside a heredoc have offsets relative to the
# heredoc text (Puppet's SubLocator); for them `global` is [offset, length] mapped through the sub-locator
# chain with SubLocator#to_global (nil for tokens of the main text).
# On a lexer error the token list holds the tokens Puppet had yielded before the error.

Oracle.register('lex') do |req|
  source, file = Oracle.source_of(req)
  epp = Oracle.epp?(req, file)
  tokens = []
  error = nil
  _, logs = Oracle.capture_logs do
    Oracle.with_tasks(req['tasks']) do
      lexer = Puppet::Pops::Parser::Lexer2.new
      begin
        lexer.lex_string(source, file)
        collect = lambda do |sym, tv|
          next if sym == false
          value = tv[:value]
          value = case value
                  when nil then ''
                  when Regexp then value.source
                  when Array then value.join
                  else value.to_s
                  end
          loc = tv[:locator]
          global = nil
          if loc.is_a?(Puppet::Pops::Parser::Locator::SubLocator)
            off = tv.offset
            len = tv.length
            while loc.is_a?(Puppet::Pops::Parser::Locator::SubLocator)
              off, len = loc.to_global(off, len)
              loc = loc.locator
            end
            global = [off, len]
          end
          tokens << [sym.to_s, value, tv.offset, tv.length, global]
        end
        if epp
          lexer.scan_epp { |sym, tv| collect.call(sym, tv) }
        else
          lexer.scan { |sym, tv| collect.call(sym, tv) }
        end
      rescue Puppet::ParseErrorWithIssue => e
        error = { 'issue_code' => e.issue_code.to_s, 'line' => e.line, 'pos' => e.pos,
                  'message' => e.basic_message, 'arguments' => Oracle.plain_arguments(e.arguments) }
      rescue StandardError => e
        error = { 'issue_code' => nil, 'class' => e.class.name, 'message' => e.message }
      end
    end
  end
  warnings = logs.select { |m| m.respond_to?(:issue_code) && m.issue_code }.map do |m|
    [m.issue_code.to_s, m.line, m.pos, m.message.to_s]
  end
  { 'tokens' => tokens, 'warnings' => warnings, 'error' => error }
end

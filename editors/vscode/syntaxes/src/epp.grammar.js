// Source of syntaxes/epp.tmLanguage.json (run `npm run build:grammars` after editing).
//
// EPP (Puppet 7's template lexer): template text with
//   <% code %>  <%- code -%>   <%= expression %>   <%# comment %>   <%% (literal <%)   %%> (literal %>)
// and an optional parameter list as the very first tag: <%- | String $x, $y = 1 | -%>.
// Code is Puppet (source.puppet#epp-code): a `#` comment in code runs to the end of the line, past a
// `%>` on that line, and a `%>` inside a string does not close the tag, both as in Puppet.
'use strict';

const tag = (name, begin, contentPatterns) => ({
  name,
  begin,
  end: String.raw`-?%>`,
  beginCaptures: { 0: { name: 'punctuation.section.embedded.begin.epp' } },
  endCaptures: { 0: { name: 'punctuation.section.embedded.end.epp' } },
  contentName: 'source.puppet',
  patterns: contentPatterns,
});

const grammar = {
  $schema: 'https://raw.githubusercontent.com/martinring/tmlanguage/master/tmlanguage.json',
  name: 'Embedded Puppet (EPP)',
  scopeName: 'text.epp',
  fileTypes: ['epp'],
  patterns: [
    { match: String.raw`<%%|%%>`, name: 'constant.character.escape.epp' },
    {
      name: 'comment.block.epp',
      begin: String.raw`<%#`,
      end: String.raw`-?%>`,
      beginCaptures: { 0: { name: 'punctuation.definition.comment.begin.epp' } },
      endCaptures: { 0: { name: 'punctuation.definition.comment.end.epp' } },
    },
    tag('meta.embedded.expression.epp', String.raw`<%=`, [{ include: 'source.puppet#epp-code' }]),
    tag('meta.embedded.block.epp', String.raw`<%-?`, [
      {
        // template parameters
        name: 'meta.parameters.epp',
        begin: String.raw`\G\s*(\|)`,
        end: String.raw`\|`,
        beginCaptures: { 1: { name: 'punctuation.definition.parameters.begin.epp' } },
        endCaptures: { 0: { name: 'punctuation.definition.parameters.end.epp' } },
        patterns: [{ include: 'source.puppet#parameters' }],
      },
      { include: 'source.puppet#epp-code' },
    ]),
  ],
};

module.exports = grammar;

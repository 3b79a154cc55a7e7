// Source of syntaxes/puppet.tmLanguage.json (run `npm run build:grammars` after editing).
//
// Regexes are Oniguruma (what vscode-textmate uses), written with String.raw so that they read as
// regexes. The lexical rules follow Puppet 7's lexer (see /work/shared/notes/language.md §1):
//  * a `/` is a division when the previous significant token is a value (name, number, string,
//    variable, `)` or `]`), else it starts a regex (so after `}` `,` `(` `=~` keywords ...);
//  * heredocs `@(TAG[:syntax][/escapes])` interpolate only when the tag is double-quoted, escapes are
//    only processed when `/...` is present, the body starts on the next line and ends at the first
//    line that ends with the tag (optionally preceded by `|` for the margin and `-` for trimming);
//  * `"${name}"`, `"${name.method}"` and `"${name[...]}"` read `name` as a variable.
'use strict';

const NAME = String.raw`(?:::)?[a-z][a-zA-Z0-9_]*(?:::[a-z][a-zA-Z0-9_]*)*`;
const BAREWORD = String.raw`(?:::)?[a-z_][\w-]*(?:::[a-z_][\w-]*)*`;
const CLASSREF = String.raw`(?:::)?[A-Z]\w*(?:::[A-Z]\w*)*`;
const VARNAME = String.raw`(?:::)?(?:\w+::)*\w+`;
// A keyword is a whole bare word: not preceded by a name character, `$`, `.` or `::`, and not
// followed by one (`if_x`, `x::if`, `undef-x`, `$if`, `$x.type` are not keywords).
const KW_BEFORE = String.raw`(?<![\w$.:-])`;
const KW_AFTER = String.raw`(?![\w]|-\w|::)`;
const kw = (words) => KW_BEFORE + '(?:' + words.join('|') + ')' + KW_AFTER;

// Keyword tokens after which a `/` starts a regex even though they are words.
const REGEX_AFTER_WORDS = ['and', 'or', 'in', 'if', 'elsif', 'else', 'unless', 'case', 'node', 'default',
  'undef', 'inherits', 'class', 'define', 'function', 'type', 'attr', 'private'];

// Words that cannot be the type of a resource expression `name { ... }`.
const NOT_RESOURCE_TYPES = ['if', 'elsif', 'else', 'unless', 'case', 'and', 'or', 'in', 'node', 'define',
  'function', 'type', 'inherits', 'default', 'undef', 'true', 'false', 'attr', 'private', 'plan', 'apply'];

const BUILTIN_TYPES = ['Any', 'Array', 'Binary', 'Boolean', 'Callable', 'CatalogEntry', 'Class', 'Collection',
  'Data', 'Default', 'Deferred', 'Enum', 'Error', 'Float', 'Hash', 'Init', 'Integer', 'Iterable', 'Iterator',
  'NotUndef', 'Numeric', 'Object', 'Optional', 'Pattern', 'Regexp', 'Resource', 'RichData', 'Runtime',
  'Scalar', 'ScalarData', 'SemVer', 'SemVerRange', 'Sensitive', 'String', 'Struct', 'Timespan', 'Timestamp',
  'Tuple', 'Type', 'TypeSet', 'URI', 'Undef', 'Variant'];

const BUILTIN_FUNCTIONS = ['abs', 'alert', 'all', 'annotate', 'any', 'assert_type', 'binary_file', 'break',
  'call', 'camelcase', 'capitalize', 'ceiling', 'chomp', 'chop', 'compare', 'contain', 'convert_to',
  'create_resources', 'crit', 'debug', 'defined', 'dig', 'digest', 'downcase', 'each', 'emerg', 'empty', 'epp',
  'err', 'fail', 'file', 'filter', 'find_file', 'find_template', 'flatten', 'floor', 'fqdn_rand', 'generate',
  'get', 'getvar', 'group_by', 'hiera', 'hiera_array', 'hiera_hash', 'hiera_include', 'include', 'index',
  'info', 'inline_epp', 'inline_template', 'join', 'keys', 'length', 'lest', 'lookup', 'lstrip', 'map',
  'match', 'max', 'md5', 'min', 'module_directory', 'new', 'next', 'notice', 'partition', 'realize', 'reduce',
  'regsubst', 'require', 'return', 'reverse_each', 'round', 'rstrip', 'scanf', 'sha1', 'sha256',
  'shellquote', 'size', 'slice', 'sort', 'split', 'sprintf', 'step', 'strftime', 'strip', 'tag', 'tagged',
  'template', 'then', 'tree_each', 'unique', 'unwrap', 'upcase', 'values', 'versioncmp', 'warning', 'with'];

// Puppet turns `NAME argument` into a call only for these names (and only at statement level).
const STATEMENT_FUNCTIONS = ['require', 'realize', 'include', 'contain', 'tag', 'debug', 'info', 'notice',
  'warning', 'err', 'fail', 'import', 'break', 'next', 'return'];

// ---------------------------------------------------------------------------------------------
// Heredocs. Four variants: interpolating (tag in double quotes) or not, escapes enabled (`/...`)
// or not. The rest of the opening line is Puppet code; the body is matched one character at a
// time so that the end-line pattern (which Puppet does not anchor at the line start) wins at the
// first position where it matches.

function heredoc(quoted, escapes) {
  const tag = quoted
    ? String.raw`(")\s*([^:/\r\n)"]+?)\s*(")`
    : String.raw`([^:/\r\n)"\s](?:[^:/\r\n)]*[^:/\r\n)\s])?)`;
  const syntax = String.raw`(?:\s*(:)\s*([a-z][a-zA-Z0-9_+]+))?`;
  const esc = escapes ? String.raw`\s*(/)([\w$]*)` : '';
  const begin = String.raw`(@\()\s*` + tag + syntax + esc + String.raw`\s*(\))`;
  const tagGroup = quoted ? 3 : 2;
  const caps = { 1: { name: 'punctuation.definition.heredoc.begin.puppet' } };
  let i = 2;
  if (quoted) caps[i++] = { name: 'punctuation.definition.tag.begin.puppet' };
  caps[i++] = { name: 'entity.name.tag.heredoc.puppet' };
  if (quoted) caps[i++] = { name: 'punctuation.definition.tag.end.puppet' };
  caps[i++] = { name: 'punctuation.separator.heredoc.syntax.puppet' };
  caps[i++] = { name: 'storage.type.heredoc.syntax.puppet' };
  if (escapes) {
    caps[i++] = { name: 'punctuation.separator.heredoc.escapes.puppet' };
    caps[i++] = { name: 'constant.character.escape.heredoc.flags.puppet' };
  }
  caps[i++] = { name: 'punctuation.definition.heredoc.end.puppet' };
  const body = quoted ? 'string.interpolated.heredoc.puppet' : 'string.unquoted.heredoc.puppet';
  const patterns = [{ include: '#heredoc-first-line' }];
  if (escapes) patterns.push({ include: '#heredoc-escapes' });
  if (quoted) patterns.push({ include: '#interpolation' });
  patterns.push({ match: '.', name: body });
  return {
    name: 'meta.heredoc.puppet',
    begin: begin,
    beginCaptures: caps,
    // Puppet: ([[:blank:]]*)(?:(\|)[[:blank:]]*)?(?:(-)[[:blank:]]*)?TAG[[:blank:]]*\r?(\n|\z)
    end: String.raw`(?:[ \t]*(\|))?[ \t]*(?:(-)[ \t]*)?(` + '\\' + tagGroup + String.raw`)[ \t]*\r?$`,
    endCaptures: {
      1: { name: 'keyword.operator.heredoc.margin.puppet' },
      2: { name: 'keyword.operator.heredoc.trim.puppet' },
      3: { name: 'entity.name.tag.heredoc.puppet' },
    },
    patterns,
  };
}

const grammar = {
  $schema: 'https://raw.githubusercontent.com/martinring/tmlanguage/master/tmlanguage.json',
  name: 'Puppet',
  scopeName: 'source.puppet',
  fileTypes: ['pp'],
  patterns: [{ include: '#statements' }],
  repository: {
    statements: {
      patterns: [
        { include: '#comments' },
        { include: '#heredoc' },
        { include: '#definitions' },
        { include: '#resource' },
        { include: '#resource-defaults' },
        { include: '#braces' },
        { include: '#expression' },
      ],
    },

    // Code inside EPP tags: like statements, but `{`/`}` are plain punctuation (a block opened in
    // one tag is usually closed in another one, with template text in between).
    'epp-code': {
      patterns: [
        { include: '#comments' },
        { include: '#heredoc' },
        { include: '#lambda-parameters' },
        { include: '#expression' },
        { match: String.raw`\{`, name: 'punctuation.section.block.begin.puppet' },
        { match: String.raw`\}`, name: 'punctuation.section.block.end.puppet' },
      ],
    },

    comments: {
      patterns: [
        {
          name: 'comment.block.puppet',
          begin: String.raw`/\*`,
          end: String.raw`\*/`,
          beginCaptures: { 0: { name: 'punctuation.definition.comment.begin.puppet' } },
          endCaptures: { 0: { name: 'punctuation.definition.comment.end.puppet' } },
        },
        {
          name: 'comment.line.number-sign.puppet',
          match: String.raw`(#).*$`,
          captures: { 1: { name: 'punctuation.definition.comment.puppet' } },
        },
      ],
    },

    heredoc: {
      patterns: [heredoc(true, true), heredoc(true, false), heredoc(false, true), heredoc(false, false)],
    },
    'heredoc-first-line': {
      // the rest of the line holding `@(TAG)` is ordinary code
      begin: String.raw`\G(?=.)`,
      end: '$',
      patterns: [{ include: '#statements' }],
    },
    'heredoc-escapes': {
      patterns: [
        { match: String.raw`\\(?:[trns$\\]|u(?:\h{4}|\{\h{1,6}\}))`, name: 'constant.character.escape.puppet' },
        { match: String.raw`\\$`, name: 'constant.character.escape.line-continuation.puppet' },
      ],
    },

    definitions: {
      patterns: [
        {
          // class NAME (params) inherits PARENT { ... }; the header runs up to the body's `{`
          name: 'meta.definition.class.puppet',
          begin: String.raw`${KW_BEFORE}(class)\s+(${NAME})`,
          beginCaptures: { 1: { name: 'storage.type.class.puppet' }, 2: { name: 'entity.name.type.class.puppet' } },
          end: String.raw`(?=\{)`,
          patterns: [
            { include: '#comments' },
            {
              match: String.raw`${KW_BEFORE}(inherits)\s+(${NAME})`,
              captures: {
                1: { name: 'storage.modifier.inherits.puppet' },
                2: { name: 'entity.other.inherited-class.puppet' },
              },
            },
            { include: '#parameter-list' },
            // `inherits` at the end of a line, the parent class on the next one
            { match: kw(['inherits']), name: 'storage.modifier.inherits.puppet' },
            { match: String.raw`(?<![\w$:])${NAME}(?![\w:])`, name: 'entity.other.inherited-class.puppet' },
          ],
        },
        {
          name: 'meta.definition.define.puppet',
          begin: String.raw`${KW_BEFORE}(define)\s+(${NAME})`,
          beginCaptures: { 1: { name: 'storage.type.define.puppet' }, 2: { name: 'entity.name.type.define.puppet' } },
          end: String.raw`(?=\{)`,
          patterns: [{ include: '#comments' }, { include: '#parameter-list' }],
        },
        {
          name: 'meta.definition.function.puppet',
          begin: String.raw`${KW_BEFORE}(function|plan)\s+(${NAME})`,
          beginCaptures: { 1: { name: 'storage.type.function.puppet' }, 2: { name: 'entity.name.function.puppet' } },
          end: String.raw`(?=\{)`,
          patterns: [
            { include: '#comments' },
            { include: '#parameter-list' },
            { match: '>>', name: 'punctuation.separator.return-type.puppet' },
            { include: '#type-reference' },
          ],
        },
        {
          name: 'meta.definition.node.puppet',
          begin: String.raw`${KW_BEFORE}(node)${KW_AFTER}`,
          beginCaptures: { 1: { name: 'storage.type.node.puppet' } },
          end: String.raw`(?=\{)`,
          patterns: [
            { include: '#comments' },
            { include: '#strings' },
            { include: '#regex' },
            { match: kw(['default']), name: 'constant.language.default.puppet' },
            { match: BAREWORD + String.raw`(?:\.[\w-]+)*`, name: 'entity.name.tag.node.puppet' },
            { match: ',', name: 'punctuation.separator.comma.puppet' },
            { match: kw(['inherits']), name: 'storage.modifier.inherits.puppet' },
          ],
        },
        {
          // type Name = <type expression>
          match: String.raw`${KW_BEFORE}(type)\s+(${CLASSREF})\s*(=)(?![=~>])`,
          captures: {
            1: { name: 'storage.type.type.puppet' },
            2: { name: 'entity.name.type.alias.puppet' },
            3: { name: 'keyword.operator.assignment.puppet' },
          },
        },
      ],
    },
    'parameter-list': {
      name: 'meta.parameters.puppet',
      begin: String.raw`\(`,
      end: String.raw`\)`,
      beginCaptures: { 0: { name: 'punctuation.definition.parameters.begin.puppet' } },
      endCaptures: { 0: { name: 'punctuation.definition.parameters.end.puppet' } },
      patterns: [{ include: '#parameters' }],
    },
    parameters: {
      patterns: [
        { include: '#comments' },
        {
          match: String.raw`(\*)?(\$)(${VARNAME})`,
          captures: {
            1: { name: 'keyword.operator.splat.puppet' },
            2: { name: 'punctuation.definition.variable.puppet' },
            3: { name: 'variable.parameter.puppet' },
          },
        },
        {
          // a default value: everything up to the next `,` at this level
          begin: String.raw`=(?![=~>])`,
          beginCaptures: { 0: { name: 'keyword.operator.assignment.puppet' } },
          end: String.raw`(?=[,)|])`,
          patterns: [{ include: '#nested-groups' }, { include: '#braces' }, { include: '#expression' }],
        },
        { include: '#type-reference' },
        { include: '#nested-groups' },
        { include: '#strings' },
        { include: '#regex' },
        { include: '#numbers' },
        { include: '#keywords' },
        { match: ',', name: 'punctuation.separator.comma.puppet' },
      ],
    },

    // name { title: attr => value, ...; title2: ... }   (also @name / @@name, and class { 'x': })
    resource: {
      name: 'meta.resource.puppet',
      begin: String.raw`(?:(@@)|(@))?${KW_BEFORE}(?!(?:${NOT_RESOURCE_TYPES.join('|')})${KW_AFTER})(${NAME})\s*(\{)`,
      beginCaptures: {
        1: { name: 'storage.modifier.exported.puppet' },
        2: { name: 'storage.modifier.virtual.puppet' },
        3: { name: 'entity.name.type.resource.puppet' },
        4: { name: 'punctuation.section.block.begin.puppet' },
      },
      end: String.raw`\}`,
      endCaptures: { 0: { name: 'punctuation.section.block.end.puppet' } },
      patterns: [
        { include: '#comments' },
        { include: '#resource-title' },
        { include: '#attribute' },
        { match: ';', name: 'punctuation.terminator.resource-body.puppet' },
        { include: '#heredoc' },
        { include: '#braces' },
        { include: '#expression' },
      ],
    },
    'resource-defaults': {
      // File { mode => '0644' }   Package['x'] { ... } is an override: handled as access + braces
      name: 'meta.resource.defaults.puppet',
      begin: String.raw`(?<![\w$.:])(${CLASSREF})\s*(\{)`,
      beginCaptures: {
        1: { name: 'entity.name.type.resource.puppet' },
        2: { name: 'punctuation.section.block.begin.puppet' },
      },
      end: String.raw`\}`,
      endCaptures: { 0: { name: 'punctuation.section.block.end.puppet' } },
      patterns: [
        { include: '#comments' },
        { include: '#attribute' },
        { include: '#heredoc' },
        { include: '#braces' },
        { include: '#expression' },
      ],
    },
    'resource-title': {
      patterns: [
        {
          name: 'meta.title.puppet string.quoted.single.puppet entity.name.section.title.puppet',
          begin: String.raw`'(?=(?:[^'\\]|\\.)*'\s*:(?!:))`,
          end: `'`,
          beginCaptures: { 0: { name: 'punctuation.definition.string.begin.puppet' } },
          endCaptures: { 0: { name: 'punctuation.definition.string.end.puppet' } },
          patterns: [{ include: '#single-quoted-escapes' }],
        },
        {
          name: 'meta.title.puppet string.quoted.double.puppet entity.name.section.title.puppet',
          begin: String.raw`"(?=(?:[^"\\]|\\.)*"\s*:(?!:))`,
          end: '"',
          beginCaptures: { 0: { name: 'punctuation.definition.string.begin.puppet' } },
          endCaptures: { 0: { name: 'punctuation.definition.string.end.puppet' } },
          patterns: [{ include: '#double-quoted-content' }],
        },
        {
          name: 'meta.title.array.puppet',
          begin: String.raw`\[(?=[^\]]*\]\s*:(?!:))`,
          end: String.raw`\]`,
          beginCaptures: { 0: { name: 'punctuation.definition.array.begin.puppet' } },
          endCaptures: { 0: { name: 'punctuation.definition.array.end.puppet' } },
          patterns: [
            {
              name: 'string.quoted.single.puppet entity.name.section.title.puppet',
              begin: `'`,
              end: `'`,
              beginCaptures: { 0: { name: 'punctuation.definition.string.begin.puppet' } },
              endCaptures: { 0: { name: 'punctuation.definition.string.end.puppet' } },
              patterns: [{ include: '#single-quoted-escapes' }],
            },
            {
              name: 'string.quoted.double.puppet entity.name.section.title.puppet',
              begin: '"',
              end: '"',
              beginCaptures: { 0: { name: 'punctuation.definition.string.begin.puppet' } },
              endCaptures: { 0: { name: 'punctuation.definition.string.end.puppet' } },
              patterns: [{ include: '#double-quoted-content' }],
            },
            { include: '#expression' },
          ],
        },
        {
          match: String.raw`(?<![\w$])(default)\s*(:)(?!:)`,
          captures: {
            1: { name: 'constant.language.default.puppet' },
            2: { name: 'punctuation.separator.title.puppet' },
          },
        },
        {
          match: String.raw`(\$)(${VARNAME})\s*(:)(?!:)`,
          captures: {
            1: { name: 'punctuation.definition.variable.puppet' },
            2: { name: 'variable.other.readwrite.puppet entity.name.section.title.puppet' },
            3: { name: 'punctuation.separator.title.puppet' },
          },
        },
        {
          match: String.raw`(?<![\w$.:])(${BAREWORD})\s*(:)(?!:)`,
          captures: {
            1: { name: 'entity.name.section.title.puppet' },
            2: { name: 'punctuation.separator.title.puppet' },
          },
        },
        // the colon after a quoted or array title
        { match: String.raw`(?<=['"\]])\s*(:)(?!:)`, captures: { 1: { name: 'punctuation.separator.title.puppet' } } },
      ],
    },
    attribute: {
      patterns: [
        {
          match: String.raw`(?<![\w$.:])([a-z]\w*)\s*(=>|\+>)`,
          captures: {
            1: { name: 'entity.other.attribute-name.puppet' },
            2: { name: 'keyword.operator.attribute.puppet' },
          },
        },
        {
          match: String.raw`(?<![\w$)\]])(\*)\s*(=>)`,
          captures: {
            1: { name: 'entity.other.attribute-name.splat.puppet' },
            2: { name: 'keyword.operator.attribute.puppet' },
          },
        },
      ],
    },

    // <| query |>   <<| query |>>
    collector: {
      name: 'meta.collector.puppet',
      begin: String.raw`<<?\|`,
      end: String.raw`\|>>?`,
      beginCaptures: { 0: { name: 'punctuation.section.collector.begin.puppet' } },
      endCaptures: { 0: { name: 'punctuation.section.collector.end.puppet' } },
      patterns: [
        {
          match: String.raw`(?<![\w$.:])([a-z]\w*)\s*(==|!=)`,
          captures: {
            1: { name: 'entity.other.attribute-name.puppet' },
            2: { name: 'keyword.operator.comparison.puppet' },
          },
        },
        { include: '#expression' },
      ],
    },

    braces: {
      name: 'meta.block.puppet',
      begin: String.raw`\{`,
      end: String.raw`\}`,
      beginCaptures: { 0: { name: 'punctuation.section.block.begin.puppet' } },
      endCaptures: { 0: { name: 'punctuation.section.block.end.puppet' } },
      patterns: [{ include: '#statements' }],
    },

    expression: {
      patterns: [
        { include: '#comments' },
        { include: '#heredoc' },
        { include: '#strings' },
        { include: '#division' },
        { include: '#regex' },
        { include: '#variable' },
        { include: '#collector' },
        { include: '#numbers' },
        { include: '#lambda-parameters' },
        { include: '#keywords' },
        { include: '#function-call' },
        { include: '#type-reference' },
        { include: '#operators' },
        { include: '#bareword' },
      ],
    },
    // Parentheses and brackets in expressions are plain punctuation (no nesting state), so that a
    // heredoc opened inside them (`notice(@(END))`, `[@(A), @(B)]`) does not leave them open.
    // Nested (stateful) versions are used where a `,` or `)` ends something: parameter defaults.
    'nested-groups': {
      patterns: [
        {
          begin: String.raw`\(`,
          end: String.raw`\)`,
          beginCaptures: { 0: { name: 'punctuation.section.parens.begin.puppet' } },
          endCaptures: { 0: { name: 'punctuation.section.parens.end.puppet' } },
          patterns: [{ include: '#nested-groups' }, { include: '#braces' }, { include: '#expression' }],
        },
        {
          begin: String.raw`\[`,
          end: String.raw`\]`,
          beginCaptures: { 0: { name: 'punctuation.section.brackets.begin.puppet' } },
          endCaptures: { 0: { name: 'punctuation.section.brackets.end.puppet' } },
          patterns: [{ include: '#nested-groups' }, { include: '#braces' }, { include: '#expression' }],
        },
      ],
    },

    strings: {
      patterns: [
        {
          name: 'string.quoted.single.puppet',
          begin: `'`,
          end: `'`,
          beginCaptures: { 0: { name: 'punctuation.definition.string.begin.puppet' } },
          endCaptures: { 0: { name: 'punctuation.definition.string.end.puppet' } },
          patterns: [{ include: '#single-quoted-escapes' }],
        },
        {
          name: 'string.quoted.double.puppet',
          begin: '"',
          end: '"',
          beginCaptures: { 0: { name: 'punctuation.definition.string.begin.puppet' } },
          endCaptures: { 0: { name: 'punctuation.definition.string.end.puppet' } },
          patterns: [{ include: '#double-quoted-content' }],
        },
      ],
    },
    'single-quoted-escapes': {
      patterns: [{ match: String.raw`\\['\\]`, name: 'constant.character.escape.puppet' }],
    },
    'double-quoted-content': {
      patterns: [
        {
          match: String.raw`\\(?:[\\"'$nrts]|u\h{4}|u\{\h{1,6}\})`,
          name: 'constant.character.escape.puppet',
        },
        { match: String.raw`\\$`, name: 'constant.character.escape.line-continuation.puppet' },
        // Puppet keeps other `\x` literally and warns (UNRECOGNIZED_ESCAPE / ILLEGAL_UNICODE_ESCAPE)
        { match: String.raw`\\.`, name: 'invalid.deprecated.unrecognized-escape.puppet' },
        { include: '#interpolation' },
      ],
    },
    interpolation: {
      patterns: [
        {
          name: 'meta.embedded.line.puppet',
          begin: String.raw`\$\{`,
          end: String.raw`\}`,
          beginCaptures: { 0: { name: 'punctuation.section.embedded.begin.puppet' } },
          endCaptures: { 0: { name: 'punctuation.section.embedded.end.puppet' } },
          contentName: 'source.puppet',
          patterns: [
            {
              // "${x}", "${x.y}", "${x[0]}", "${1}": the name is a variable
              match: String.raw`\G\s*(${VARNAME})(?=(?:\s|/\*.*?\*/)*\}|[.\[])`,
              captures: { 1: { name: 'variable.other.readwrite.puppet' } },
            },
            { include: '#braces' },
            { include: '#expression' },
          ],
        },
        {
          match: String.raw`(\$)(${VARNAME})`,
          captures: {
            1: { name: 'punctuation.definition.variable.puppet' },
            2: { name: 'variable.other.readwrite.puppet' },
          },
        },
      ],
    },

    // A `/` after a value (name, number, string, variable, `)` or `]`) divides; the keywords in
    // REGEX_AFTER_WORDS are words but are followed by a regex.
    division: {
      match: String.raw`(?<=[\w'")\]])(?<!${REGEX_AFTER_WORDS.map((w) => String.raw`\b` + w).join('|')})\s*(/)(?![/*])`,
      captures: { 1: { name: 'keyword.operator.arithmetic.puppet' } },
    },
    regex: {
      name: 'string.regexp.puppet',
      match: String.raw`(/)((?:[^/\\\n]|\\.)*)(/)`,
      captures: {
        1: { name: 'punctuation.definition.string.begin.puppet' },
        2: { patterns: [{ match: String.raw`\\.`, name: 'constant.character.escape.regexp.puppet' }] },
        3: { name: 'punctuation.definition.string.end.puppet' },
      },
    },

    variable: {
      patterns: [
        {
          match: String.raw`(\$)(::)?(facts|trusted|server_facts)(?!\w|::\w)`,
          captures: {
            1: { name: 'punctuation.definition.variable.puppet' },
            2: { name: 'punctuation.separator.namespace.puppet' },
            3: { name: 'variable.language.puppet' },
          },
        },
        {
          match: String.raw`(\$)(\d+)(?![\w:])`,
          captures: {
            1: { name: 'punctuation.definition.variable.puppet' },
            2: { name: 'variable.other.readwrite.match.puppet' },
          },
        },
        {
          match: String.raw`(\$)(${VARNAME})`,
          captures: {
            1: { name: 'punctuation.definition.variable.puppet' },
            2: { name: 'variable.other.readwrite.puppet' },
          },
        },
      ],
    },

    numbers: {
      patterns: [
        { match: String.raw`\b0[xX]\h+\b`, name: 'constant.numeric.integer.hexadecimal.puppet' },
        { match: String.raw`\b\d+(?:\.\d+(?:[eE]-?\d+)?|[eE]-?\d+)\b`, name: 'constant.numeric.float.puppet' },
        { match: String.raw`\b0[0-7]+\b`, name: 'constant.numeric.integer.octal.puppet' },
        { match: String.raw`\b(?:0|[1-9]\d*)\b`, name: 'constant.numeric.integer.decimal.puppet' },
        // 08, 0x, 1_000, 3g, 1e+5 ...: Puppet rejects these (ILLEGAL_NUMBER and friends)
        { match: String.raw`\b\d\w*`, name: 'invalid.illegal.numeric.puppet' },
      ],
    },

    'lambda-parameters': {
      // |$x, Integer $y = 1| followed (on the same line) by the lambda's `{`
      name: 'meta.lambda.parameters.puppet',
      begin: String.raw`(\|)(?=[^|\n]*\|\s*\{)`,
      end: String.raw`\|`,
      beginCaptures: { 1: { name: 'punctuation.definition.parameters.begin.puppet' } },
      endCaptures: { 0: { name: 'punctuation.definition.parameters.end.puppet' } },
      patterns: [{ include: '#parameters' }],
    },

    keywords: {
      patterns: [
        { match: kw(['if', 'elsif', 'else', 'unless', 'case']), name: 'keyword.control.conditional.puppet' },
        { match: kw(['and', 'or', 'in']), name: 'keyword.operator.word.puppet' },
        { match: kw(['true', 'false']), name: 'constant.language.boolean.puppet' },
        { match: kw(['undef']), name: 'constant.language.undef.puppet' },
        { match: kw(['default']), name: 'constant.language.default.puppet' },
        { match: kw(['inherits']), name: 'storage.modifier.inherits.puppet' },
        { match: kw(['class', 'define', 'node', 'function', 'type', 'plan']), name: 'storage.type.puppet' },
        { match: KW_BEFORE + String.raw`(apply)(?=\s*\()`, name: 'keyword.control.apply.puppet' },
        { match: kw(['attr', 'private']), name: 'keyword.other.reserved.puppet' },
      ],
    },

    'function-call': {
      patterns: [
        {
          // include foo::bar / contain / require: the first argument is a class name
          match: String.raw`${KW_BEFORE}(include|contain|require)\s+(${NAME})(?![\w(:])`,
          captures: {
            1: { name: 'support.function.puppet' },
            2: { name: 'entity.name.type.class.puppet' },
          },
        },
        {
          // .method  (with or without arguments)
          match: String.raw`(\.)\s*(${BUILTIN_FUNCTIONS.join('|')})(?!\w)`,
          captures: {
            1: { name: 'punctuation.accessor.puppet' },
            2: { name: 'support.function.puppet' },
          },
        },
        {
          match: String.raw`(\.)\s*([a-z_]\w*(?:::[a-z_]\w*)*)`,
          captures: {
            1: { name: 'punctuation.accessor.puppet' },
            2: { name: 'entity.name.function.puppet' },
          },
        },
        {
          // statement calls without parentheses: only these names, followed by an argument
          match: KW_BEFORE + '(' + STATEMENT_FUNCTIONS.join('|') + ')' + KW_AFTER +
            String.raw`(?=\s+(?!=>|[=,;)\]}|.?:])\S)`,
          name: 'support.function.puppet',
        },
        {
          match: KW_BEFORE + '(' + BUILTIN_FUNCTIONS.join('|') + ')' + String.raw`(?=\s*\()`,
          name: 'support.function.puppet',
        },
        {
          match: String.raw`${KW_BEFORE}(${NAME})(?=\s*\()`,
          captures: { 1: { name: 'entity.name.function.puppet' } },
        },
      ],
    },

    'type-reference': {
      patterns: [
        {
          match: String.raw`(?<![\w$:])(?:${BUILTIN_TYPES.join('|')})(?![\w]|::)`,
          name: 'support.type.puppet',
        },
        { match: String.raw`(?<![\w$:])${CLASSREF}(?!\w)`, name: 'entity.name.type.puppet' },
      ],
    },

    operators: {
      patterns: [
        { match: String.raw`->|~>|<-|<~`, name: 'keyword.operator.relationship.puppet' },
        { match: String.raw`=>`, name: 'punctuation.separator.key-value.puppet' },
        { match: String.raw`\+>`, name: 'keyword.operator.attribute.puppet' },
        { match: String.raw`=~|!~`, name: 'keyword.operator.match.puppet' },
        { match: String.raw`==|!=|<=|>=|<(?![<|])|>(?!>)`, name: 'keyword.operator.comparison.puppet' },
        { match: String.raw`\+=|-=`, name: 'keyword.operator.assignment.compound.puppet' },
        { match: String.raw`=`, name: 'keyword.operator.assignment.puppet' },
        { match: String.raw`<<|>>`, name: 'keyword.operator.bitwise.shift.puppet' },
        { match: String.raw`!`, name: 'keyword.operator.logical.puppet' },
        { match: String.raw`\?`, name: 'keyword.operator.selector.puppet' },
        { match: String.raw`@@`, name: 'storage.modifier.exported.puppet' },
        { match: String.raw`@`, name: 'storage.modifier.virtual.puppet' },
        { match: String.raw`[-+*%]`, name: 'keyword.operator.arithmetic.puppet' },
        { match: ',', name: 'punctuation.separator.comma.puppet' },
        { match: ';', name: 'punctuation.terminator.statement.puppet' },
        { match: String.raw`(?<!:):(?!:)`, name: 'punctuation.separator.colon.puppet' },
        { match: String.raw`\.`, name: 'punctuation.accessor.puppet' },
        { match: String.raw`\(`, name: 'punctuation.section.parens.begin.puppet' },
        { match: String.raw`\)`, name: 'punctuation.section.parens.end.puppet' },
        { match: String.raw`\[`, name: 'punctuation.section.brackets.begin.puppet' },
        { match: String.raw`\]`, name: 'punctuation.section.brackets.end.puppet' },
      ],
    },

    bareword: {
      // bare words are strings in Puppet (`ensure => present`)
      match: String.raw`(?<![\w$:])${BAREWORD}(?<!-)`,
      name: 'string.unquoted.bareword.puppet',
    },
  },
};

module.exports = grammar;

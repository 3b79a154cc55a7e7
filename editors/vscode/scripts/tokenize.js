#!/usr/bin/env node
// Tokenizes files with our grammars (vscode-textmate + vscode-oniguruma, the engine VS Code uses) and
// prints JSON: {"file": [[line, startCol, endCol, [scopes...]], ...], ...}. Columns are UTF-16 code units.
// Usage: node scripts/tokenize.js [--text] FILE...   (.epp files use text.epp, others source.puppet)
//        --text prints a readable listing instead of JSON.
'use strict';
const fs = require('fs');
const path = require('path');
const vsctm = require('vscode-textmate');
const oniguruma = require('vscode-oniguruma');

const root = path.join(__dirname, '..');
const grammarFiles = {
  'source.puppet': path.join(root, 'syntaxes', 'puppet.tmLanguage.json'),
  'text.epp': path.join(root, 'syntaxes', 'epp.tmLanguage.json'),
};

async function main() {
  const args = process.argv.slice(2);
  const text = args[0] === '--text';
  const files = text ? args.slice(1) : args;
  const wasm = fs.readFileSync(require.resolve('vscode-oniguruma/release/onig.wasm')).buffer;
  await oniguruma.loadWASM(wasm);
  const registry = new vsctm.Registry({
    onigLib: Promise.resolve({
      createOnigScanner: (p) => new oniguruma.OnigScanner(p),
      createOnigString: (s) => new oniguruma.OnigString(s),
    }),
    loadGrammar: async (scope) => {
      const f = grammarFiles[scope];
      return f ? vsctm.parseRawGrammar(fs.readFileSync(f, 'utf8'), f) : null;
    },
  });
  const out = {};
  for (const file of files) {
    const grammar = await registry.loadGrammar(file.endsWith('.epp') ? 'text.epp' : 'source.puppet');
    const lines = fs.readFileSync(file, 'utf8').split('\n');
    let state = vsctm.INITIAL;
    const toks = [];
    lines.forEach((line, i) => {
      const r = grammar.tokenizeLine(line, state);
      for (const t of r.tokens) {
        if (t.startIndex >= line.length && line.length > 0) continue;
        toks.push([i, t.startIndex, Math.min(t.endIndex, line.length), t.scopes]);
        if (text) {
          console.log(`${i + 1}:${t.startIndex} ${JSON.stringify(line.slice(t.startIndex, t.endIndex))} ${t.scopes.slice(1).join(' ')}`);
        }
      }
      state = r.ruleStack;
    });
    out[file] = toks;
  }
  if (!text) process.stdout.write(JSON.stringify(out));
}

main().catch((e) => { console.error(e); process.exit(2); });

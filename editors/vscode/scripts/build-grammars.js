#!/usr/bin/env node
// Writes syntaxes/*.tmLanguage.json from syntaxes/src/*.grammar.js.
// With --check: exits 1 (and writes nothing) when a committed JSON file is out of date.
'use strict';
const fs = require('fs');
const path = require('path');

const root = path.join(__dirname, '..');
const check = process.argv.includes('--check');
let stale = 0;
for (const [src, out] of [['puppet.grammar.js', 'puppet.tmLanguage.json'], ['epp.grammar.js', 'epp.tmLanguage.json']]) {
  const grammar = require(path.join(root, 'syntaxes', 'src', src));
  const text = JSON.stringify(grammar, null, 2) + '\n';
  const target = path.join(root, 'syntaxes', out);
  const old = fs.existsSync(target) ? fs.readFileSync(target, 'utf8') : null;
  if (old === text) continue;
  if (check) {
    console.error(`syntaxes/${out} is out of date: run \`npm run build:grammars\``);
    stale++;
  } else {
    fs.writeFileSync(target, text);
    console.log(`wrote syntaxes/${out}`);
  }
}
process.exit(stale ? 1 : 0);

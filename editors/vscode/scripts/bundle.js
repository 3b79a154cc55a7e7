#!/usr/bin/env node
// Bundles the extension and its run-time npm packages (vscode-languageclient and what it requires) into one file,
// dist/extension.js, so that the .vsix ships no node_modules/. `vscode` stays external: the editor provides it.
// --production minifies (vsce runs it through `vscode:prepublish`); the default keeps names readable.
'use strict';
const path = require('path');
const esbuild = require('esbuild');

const root = path.join(__dirname, '..');
const production = process.argv.includes('--production');

esbuild.build({
  absWorkingDir: root,
  entryPoints: ['src/extension.ts'],
  outfile: 'dist/extension.js',
  bundle: true,
  platform: 'node',
  format: 'cjs',
  // VS Code 1.82 (engines.vscode) runs extensions on Electron 25's Node 18
  target: 'node18',
  external: ['vscode'],
  minify: production,
  sourcemap: false,
  logLevel: 'warning',
  metafile: true,
}).then((result) => {
  const inputs = Object.keys(result.metafile.inputs).length;
  const bytes = Object.values(result.metafile.outputs).reduce((n, o) => n + o.bytes, 0);
  console.log(`dist/extension.js: ${inputs} modules, ${bytes} bytes${production ? ' (minified)' : ''}`);
}, () => process.exit(1));

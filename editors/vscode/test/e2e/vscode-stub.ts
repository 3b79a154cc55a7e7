// A stand-in `vscode` module, so that the bundled extension can be loaded by plain node: every top-level name
// that @types/vscode declares is an own, enumerable property (esbuild's CommonJS interop copies the module's own
// properties), and each one is a callable, constructible no-op whose members are the same. Used by the .vsix
// load probe (tests/editors/test_vscode.py) and by the end-to-end test.
import * as fs from 'fs';
import * as path from 'path';

function noop(): unknown {
  return new Proxy(function () { /* stand-in */ }, {
    get: (_target, key) => (key === 'prototype' ? {} : noop()),
    construct: () => noop() as object,
    apply: () => noop(),
  });
}

/** The top-level names of the `vscode` API, read from the declaration file (`\texport class Uri` …). */
export function vscodeApiNames(typesFile: string): string[] {
  const text = fs.readFileSync(typesFile, 'utf8');
  const names = [...text.matchAll(/^\texport (?:namespace|class|enum|const|function|let|type|interface) (\w+)/gm)]
    .map((m) => m[1]);
  return [...new Set(names)];
}

/** Makes `require('vscode')` answer the stand-in from now on. */
export function installVscodeStub(typesFile: string): void {
  const api: Record<string, unknown> = {};
  for (const name of vscodeApiNames(typesFile)) api[name] = noop();
  const Module = require('module') as { _resolveFilename: (req: string, ...rest: unknown[]) => string };
  const resolve = Module._resolveFilename;
  Module._resolveFilename = function (req: string, ...rest: unknown[]) {
    return req === 'vscode' ? 'vscode' : resolve.call(this, req, ...rest);
  };
  require.cache.vscode = { id: 'vscode', filename: 'vscode', loaded: true, exports: api } as NodeJS.Module;
}

/** @types/vscode's declaration file in this checkout. */
export const VSCODE_TYPES = path.join(__dirname, '..', '..', '..', 'node_modules', '@types', 'vscode', 'index.d.ts');

// `node vscode-stub.js BUNDLE`: loads BUNDLE with the stand-in and checks it has activate/deactivate.
if (require.main === module) {
  installVscodeStub(VSCODE_TYPES);
  const ext = require(path.resolve(process.argv[2])) as { activate?: unknown; deactivate?: unknown };
  if (typeof ext.activate !== 'function' || typeof ext.deactivate !== 'function') process.exit(3);
  console.log('loaded');
}

// A stand-in `vscode` module, so that the bundled extension can be loaded by plain node: every top-level name
// that @types/vscode declares is an own, enumerable property (esbuild's CommonJS interop copies the module's own
// properties), and each one is a callable, constructible no-op whose members are the same. Used by the .vsix
// load probe (tests/editors/test_vscode.py) and by the end-to-end test.
import * as fs from 'fs';
import * as path from 'path';

/**
 * A value that is everything at once: callable, constructible, an empty iterable, every member another such
 * value, any member assignable (and forgotten); not a thenable (awaiting it gives it back) and '' as a primitive.
 */
export function noop(): unknown {
  return new Proxy(function () { /* stand-in */ }, {
    get: (_target, key) => {
      if (key === 'prototype') return {};
      if (key === 'then') return undefined;
      if (key === Symbol.iterator) return function* () { /* empty */ };
      if (key === Symbol.toPrimitive) return () => '';
      if (key === 'length') return 0;
      return noop();
    },
    set: () => true,
    construct: () => noop() as object,
    apply: () => noop(),
  });
}

/** An object with the given members; any other member is a {@link noop}. */
export function partial(members: Record<string, unknown>): Record<string, unknown> {
  return new Proxy(members, {
    get: (target, key) => (typeof key === 'string' && key in target ? target[key] : key === 'then' ? undefined : noop()),
  });
}

/** The top-level names of the `vscode` API, read from the declaration file (`\texport class Uri` …). */
export function vscodeApiNames(typesFile: string): string[] {
  const text = fs.readFileSync(typesFile, 'utf8');
  const names = [...text.matchAll(/^\texport (?:namespace|class|enum|const|function|let|type|interface) (\w+)/gm)]
    .map((m) => m[1]);
  return [...new Set(names)];
}

/** Makes `require('vscode')` answer the stand-in from now on; `fakes` replace some of its names. */
export function installVscodeStub(typesFile: string, fakes: Record<string, unknown> = {}): void {
  const api: Record<string, unknown> = {};
  for (const name of vscodeApiNames(typesFile)) api[name] = noop();
  Object.assign(api, fakes);
  const Module = require('module') as { _resolveFilename: (req: string, ...rest: unknown[]) => string };
  const resolve = Module._resolveFilename;
  Module._resolveFilename = function (req: string, ...rest: unknown[]) {
    return req === 'vscode' ? 'vscode' : resolve.call(this, req, ...rest);
  };
  require.cache.vscode = { id: 'vscode', filename: 'vscode', loaded: true, exports: api } as NodeJS.Module;
}

/** `p`, or a rejection naming `what` when it takes longer than `ms` (the end-to-end scripts' step limit). */
export function within<T>(ms: number, what: string, p: Promise<T>): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`timeout after ${ms} ms: ${what}`)), ms);
    p.then((v) => { clearTimeout(t); resolve(v); }, (e) => { clearTimeout(t); reject(e); });
  });
}

/** The members of an ExtensionContext the extension reads: subscriptions, global storage, its package.json version. */
export function extensionContext(storage: unknown, version: string): {
  subscriptions: { dispose(): unknown }[]; globalStorageUri: unknown; extension: { packageJSON: { version: string } };
} {
  return { subscriptions: [], globalStorageUri: storage, extension: { packageJSON: { version } } };
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

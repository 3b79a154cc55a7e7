// The extension's server discovery, version check, settings and command lines against the real puppet-xpp
// server and CLI, without VS Code. The code under test is the bundled build as shipped: `bundle` is the
// dist/extension.js unpacked from the .vsix, loaded with a stand-in `vscode` module, and every helper below comes
// from its exports (not from the TypeScript sources). The server is found by `discoverServer()` (on the PATH
// given, no setting), started with `serverSettings()` as initializationOptions, its serverInfo.version checked
// by `versionWarning()` against the .vsix's package.json, workspace/configuration answered by
// `answerConfiguration()`, and the compile/dump commands run `cliLaunch()` of `compileArgs()`/`dumpArgs()`,
// whose output must match the extension's problem matcher. Run by tests/editors/test_vscode.py with a JSON spec
// in $PUPPET_XPP_E2E:
//   { bundle, pathDir, serverArgs, env (directory), broken, fixed, dupkey, expect: {line, column}, result }
import { strict as assert } from 'assert';
import { execFile, spawn } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import {
  createProtocolConnection,
  StreamMessageReader,
  StreamMessageWriter,
} from 'vscode-languageserver-protocol/node';

import type * as Extension from '../../src/extension';
import { installVscodeStub, VSCODE_TYPES, within } from './vscode-stub';

interface Spec {
  bundle: string;
  pathDir: string;
  serverArgs: string[];
  env: string;
  broken: string;
  fixed: string;
  dupkey: string;
  expect: { line: number; column: number };
  result: string;
}

const spec: Spec = JSON.parse(fs.readFileSync(process.env.PUPPET_XPP_E2E!, 'utf8'));

/** The bundle, with `vscode` answered by the stand-in. */
function loadBundle(file: string): typeof Extension {
  installVscodeStub(VSCODE_TYPES);
  return require(file) as typeof Extension;
}

const {
  answerConfiguration, cliLaunch, compileArgs, discoverServer, dumpArgs, findEnvironment, serverSettings,
  versionWarning, xppPathFor,
} = loadBundle(spec.bundle);
let server: ReturnType<typeof spawn> | undefined;
const STEP_MS = 30000;
const timings: Record<string, number> = {};

async function timed<T>(name: string, p: Promise<T>): Promise<T> {
  const t0 = Date.now();
  const v = await within(STEP_MS, name, p);
  timings[name] = Date.now() - t0;
  return v;
}

function run(cmd: string, args: string[], cwd: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(cmd, args, { cwd, timeout: STEP_MS, maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) => {
      const code = err ? (typeof (err as NodeJS.ErrnoException).code === 'number' ? Number(err.code) : -1) : 0;
      resolve({ code, stdout: String(stdout), stderr: String(stderr) });
    });
  });
}

type Diag = { range: { start: { line: number; character: number } }; severity?: number; code?: string; message: string };

async function main(): Promise<void> {
  const settingsValues: Record<string, unknown> = { serverArgs: spec.serverArgs, strict: 'error', xppOnSave: true };
  const cfg = { get: <T>(k: string) => settingsValues[k] as T | undefined };
  // no serverPath setting: found on PATH (before the Python extension, which is absent here)
  const found = await discoverServer({
    configured: undefined,
    args: spec.serverArgs,
    workspaceFolder: spec.env,
    pathEnv: [spec.pathDir, process.env.PATH ?? ''].join(path.delimiter),
    pythonInterpreter: async () => undefined,
    pythonHasModule: async () => false,
    privateBin: path.join(spec.env, 'no-such-storage', 'bin'),
  });
  assert.ok(found.server, JSON.stringify(found.tried));
  const launch = found.server;
  assert.deepEqual([launch.command, launch.source], [path.join(spec.pathDir, 'puppet-xpp'), 'PATH']);
  const settings = serverSettings(cfg);
  const proc = spawn(launch.command, launch.args, { cwd: spec.env, stdio: ['pipe', 'pipe', 'pipe'] });
  server = proc;
  let stderr = '';
  proc.stderr.on('data', (d) => { stderr += String(d); });
  const conn = createProtocolConnection(new StreamMessageReader(proc.stdout), new StreamMessageWriter(proc.stdin));

  const diagnostics = new Map<string, Diag[]>();
  const waiters: { pred: () => boolean; resolve: () => void }[] = [];
  const poke = () => {
    for (const w of [...waiters]) {
      if (w.pred()) { waiters.splice(waiters.indexOf(w), 1); w.resolve(); }
    }
  };
  const until = (pred: () => boolean) => new Promise<void>((resolve) => { waiters.push({ pred, resolve }); poke(); });
  const written = new Map<string, string>();
  const configRequests: unknown[] = [];

  const t00 = Date.now();
  const published: [number, string, number, number | undefined][] = [];
  conn.onNotification('textDocument/publishDiagnostics', (p: { uri: string; version?: number; diagnostics: Diag[] }) => {
    published.push([Date.now() - t00, path.basename(p.uri), p.diagnostics.length, p.version]);
    diagnostics.set(p.uri, p.diagnostics);
    poke();
  });
  conn.onNotification('puppet/xppWritten', (p: { uri: string; xpp: string }) => {
    written.set(p.uri, p.xpp);
    poke();
  });
  conn.onNotification('window/logMessage', () => undefined);
  conn.onRequest('workspace/configuration', (p: { items: { section?: string; scopeUri?: string }[] }) => {
    configRequests.push(p.items);
    return answerConfiguration(p.items, p.items.map(() => null), () => settings);
  });
  conn.onRequest('window/workDoneProgress/create', () => null);
  conn.onNotification('$/progress', () => undefined);
  conn.onRequest('client/registerCapability', () => null);
  conn.listen();

  const rootUri = 'file://' + spec.env;
  const init = await timed('initialize', conn.sendRequest('initialize', {
    processId: process.pid,
    rootUri,
    workspaceFolders: [{ uri: rootUri, name: path.basename(spec.env) }],
    initializationOptions: settings,
    capabilities: {
      workspace: { configuration: true, workspaceFolders: true, didChangeConfiguration: { dynamicRegistration: false } },
      textDocument: {
        synchronization: { didSave: true, dynamicRegistration: false },
        publishDiagnostics: { relatedInformation: true, versionSupport: true },
      },
      window: { workDoneProgress: true },
    },
  }) as Promise<{ capabilities: { textDocumentSync?: unknown }; serverInfo?: { name: string; version?: string } }>);
  // the version check: the server answers the .vsix's own version
  const pkg = JSON.parse(fs.readFileSync(path.join(path.dirname(spec.bundle), '..', 'package.json'), 'utf8'));
  assert.equal(versionWarning(init.serverInfo?.version, pkg.version, launch.command), undefined,
    JSON.stringify(init.serverInfo));

  await conn.sendNotification('initialized', {});

  const file = path.join(spec.env, 'modules', 'mymod', 'manifests', 'init.pp');
  const uri = 'file://' + file;
  await conn.sendNotification('textDocument/didOpen', {
    textDocument: { uri, languageId: 'puppet', version: 1, text: spec.broken },
  });
  await timed('diagnostic', until(() => (diagnostics.get(uri) ?? []).length > 0));
  const before = diagnostics.get(uri)!;
  const first = before[0];
  assert.deepEqual([first.range.start.line + 1, first.range.start.character + 1], [spec.expect.line, spec.expect.column],
    JSON.stringify(before));
  assert.equal(first.severity, 1);

  // save: the .xpp goes where the extension's dump command looks for it
  fs.writeFileSync(file, spec.broken);
  await conn.sendNotification('textDocument/didSave', { textDocument: { uri } });
  await timed('xpp_written', until(() => written.has(uri)));
  const xpp = new URL(written.get(uri)!).pathname;
  assert.equal(xpp, xppPathFor(file));
  assert.ok(fs.existsSync(xpp), xpp);

  // fix (incremental change of the whole text): the diagnostic goes away
  const lines = spec.broken.split('\n');
  await conn.sendNotification('textDocument/didChange', {
    textDocument: { uri, version: 2 },
    contentChanges: [{
      range: { start: { line: 0, character: 0 }, end: { line: lines.length - 1, character: lines[lines.length - 1].length } },
      text: spec.fixed,
    }],
  });
  await timed('diagnostic_cleared', until(() => (diagnostics.get(uri) ?? [1]).length === 0));
  fs.writeFileSync(file, spec.fixed);

  // the strict setting reaches the server: a duplicate key is an error, not a warning
  const dupUri = 'file://' + path.join(spec.env, 'manifests', 'dup.pp');
  await conn.sendNotification('textDocument/didOpen', {
    textDocument: { uri: dupUri, languageId: 'puppet', version: 1, text: spec.dupkey },
  });
  await timed('strict', until(() => (diagnostics.get(dupUri) ?? []).length > 0));
  const dup = diagnostics.get(dupUri)!;
  assert.deepEqual(dup.map((d) => [d.code, d.severity]), [['DUPLICATE_KEY', 1]], JSON.stringify(dup));

  await within(STEP_MS, 'shutdown', conn.sendRequest('shutdown'));
  await conn.sendNotification('exit');
  await within(STEP_MS, 'server exit', new Promise((resolve) => {
    if (proc.exitCode !== null) resolve(null); else proc.on('exit', resolve);
  }));
  conn.dispose();

  // "Compile workspace environment": the command line and the problem matcher of package.json
  const matcher = pkg.contributes.problemMatchers[0].pattern;
  const re = new RegExp(matcher.regexp);
  fs.writeFileSync(file, spec.broken);
  const env = findEnvironment(file)!;
  assert.equal(env.root, spec.env);
  const t0 = Date.now();
  const compileLine = cliLaunch(launch, compileArgs(env.root, settings));
  const compiled = await run(compileLine.command, compileLine.args, env.root);
  timings.compile = Date.now() - t0;
  assert.equal(compiled.code, 1, compiled.stdout + compiled.stderr);
  const problems = compiled.stdout.split('\n').map((l) => re.exec(l)).filter((m): m is RegExpExecArray => m !== null);
  assert.equal(problems.length, 1, compiled.stdout);
  const m = problems[0];
  assert.equal(m[matcher.severity], 'Error');
  assert.equal(path.resolve(env.root, m[matcher.file]), file);
  assert.deepEqual([Number(m[matcher.line]), Number(m[matcher.column])], [spec.expect.line, spec.expect.column]);

  // "Show XPP dump of current file", both formats
  fs.writeFileSync(file, spec.fixed);
  const again = await run(compileLine.command, compileLine.args, env.root);
  assert.equal(again.code, 0, again.stdout + again.stderr);
  const pnLine = cliLaunch(launch, dumpArgs(xppPathFor(file)!, 'pn'));
  const treeLine = cliLaunch(launch, dumpArgs(xppPathFor(file)!, 'tree'));
  const pn = await run(pnLine.command, pnLine.args, env.root);
  const tree = await run(treeLine.command, treeLine.args, env.root);
  assert.equal(pn.code, 0, pn.stderr);
  assert.equal(tree.code, 0, tree.stderr);

  fs.writeFileSync(spec.result, JSON.stringify({
    timings, published, sync: init.capabilities.textDocumentSync, serverInfo: init.serverInfo, bundle: spec.bundle, configRequests, compileOutput: compiled.stdout,
    pn: pn.stdout, tree: tree.stdout, stderr,
  }));
}

main().then(() => process.exit(0), (e) => {
  console.error(e instanceof Error ? e.stack : e);
  server?.kill('SIGKILL');
  process.exit(1);
});

// The bundled extension's activation, with a recording stand-in for the VS Code API and the real language client
// (vscode-languageclient inside the bundle) talking to the real puppet-xpp server. What VS Code would show is
// recorded: notifications with their buttons (a scripted button is "clicked"), progress messages, output lines,
// commands run. Run by tests/editors/test_vscode.py with a JSON spec in $PUPPET_XPP_E2E:
//   { bundle, path (the PATH the extension sees), workspace, storage, python? (the Python extension's
//     interpreter; absent: no Python extension), incumbent (puppet.puppet-vscode active), version (the
//     extension's package.json version), click? (the button pressed on the "not found" notification), result }
import * as fs from 'fs';
import * as path from 'path';

import type * as Extension from '../../src/extension';
import { extensionContext, installVscodeStub, noop, partial, VSCODE_TYPES, within } from './vscode-stub';

interface Spec {
  bundle: string;
  path: string;
  workspace: string;
  storage: string;
  python?: string;
  incumbent: boolean;
  version: string;
  click?: string;
  result: string;
}

const spec: Spec = JSON.parse(fs.readFileSync(process.env.PUPPET_XPP_E2E!, 'utf8'));

const notifications: { kind: string; text: string; items: string[] }[] = [];
const outputLines: string[] = [];
const executed: string[] = [];
const commands = new Map<string, (...args: unknown[]) => unknown>();
/** The formatting providers registered with `vscode.languages`: which kind, for which documents. */
const formatters: { kind: string; selector: unknown }[] = [];
/** withProgress calls: the extension's (installing) and the language client's (the server's work done progress). */
const progressShown: { title: string; messages: string[]; done: boolean }[] = [];

class Uri {
  readonly path: string;
  constructor(readonly scheme: string, readonly fsPath: string) { this.path = fsPath; }
  static file(p: string): Uri { return new Uri('file', p); }
  static parse(s: string): Uri {
    const u = new URL(s);
    return new Uri(u.protocol.slice(0, -1), decodeURIComponent(u.pathname));
  }
  toString(): string { return `${this.scheme}://${encodeURI(this.path)}`; }
  toJSON(): unknown { return { scheme: this.scheme, path: this.path }; }
}

function notify(kind: string) {
  return async (text: string, ...rest: unknown[]) => {
    const items = rest.filter((r): r is string => typeof r === 'string');
    notifications.push({ kind, text, items });
    return spec.click !== undefined && items.includes(spec.click) ? spec.click : undefined;
  };
}

const disposable = () => ({ dispose: () => undefined });

function formatter(kind: string) {
  return (selector: unknown) => {
    formatters.push({ kind, selector });
    return disposable();
  };
}

const pythonApi = {
  environments: {
    getActiveEnvironmentPath: () => ({ id: 'venv', path: spec.python }),
    resolveEnvironment: async () => ({ executable: { uri: Uri.file(spec.python!) } }),
  },
};

installVscodeStub(VSCODE_TYPES, {
  version: '1.82.0',
  Uri,
  env: partial({ appName: 'Visual Studio Code', language: 'en', machineId: 'e2e', sessionId: 'e2e', uriScheme: 'vscode' }),
  workspace: partial({
    workspaceFolders: [{ uri: Uri.file(spec.workspace), name: path.basename(spec.workspace), index: 0 }],
    textDocuments: [],
    getConfiguration: (section?: string) => ({
      get: (key: string, fallback?: unknown) => (key === 'trace.server' && process.env.PUPPET_XPP_E2E_TRACE ? 'verbose' : fallback),
      inspect: (key: string) => ({ key: `${section}.${key}` }),
      has: () => false,
      update: async () => undefined,
    }),
    getWorkspaceFolder: () => undefined,
    asRelativePath: (p: string) => p,
  }),
  window: partial({
    createOutputChannel: (name: string) => partial({
      name,
      append: (t: string) => { outputLines.push(t); },
      appendLine: (t: string) => { outputLines.push(t); },
      show: () => undefined,
      dispose: () => undefined,
    }),
    showWarningMessage: notify('warning'),
    showErrorMessage: notify('error'),
    showInformationMessage: notify('information'),
    withProgress: (options: { title?: string }, task: (p: unknown, t: unknown) => Promise<unknown>) => {
      const shown = { title: options.title ?? '', messages: [] as string[], done: false };
      progressShown.push(shown);
      const run = task(
        { report: (v: { message?: string }) => { if (v.message) shown.messages.push(v.message); } },
        { isCancellationRequested: false, onCancellationRequested: disposable },
      );
      void Promise.resolve(run).finally(() => { shown.done = true; });
      return run;
    },
    setStatusBarMessage: disposable,
    activeTextEditor: undefined,
    visibleTextEditors: [],
  }),
  languages: partial({
    registerDocumentFormattingEditProvider: formatter('document'),
    registerDocumentRangeFormattingEditProvider: formatter('range'),
    registerOnTypeFormattingEditProvider: formatter('onType'),
  }),
  commands: partial({
    registerCommand: (id: string, fn: (...args: unknown[]) => unknown) => { commands.set(id, fn); return disposable(); },
    executeCommand: async (id: string, ...args: unknown[]) => {
      executed.push(id);
      return commands.get(id)?.(...args);
    },
  }),
  extensions: partial({
    getExtension: (id: string) => {
      if (id === 'ms-python.python' && spec.python) {
        return { id, isActive: false, exports: undefined, activate: async () => pythonApi, packageJSON: {} };
      }
      if (id === 'puppet.puppet-vscode' && spec.incumbent) {
        return {
          id, isActive: true, exports: noop(),
          packageJSON: { contributes: { languages: [{ id: 'puppet', extensions: ['.pp'] }] } },
        };
      }
      return undefined;
    },
    onDidChange: disposable,
    all: [],
  }),
});

async function main(): Promise<void> {
  process.env.PATH = spec.path;
  const extension = require(spec.bundle) as typeof Extension;
  const context = extensionContext(Uri.file(spec.storage), spec.version);
  const before = Date.now();
  await within(Number(process.env.PUPPET_XPP_E2E_MS ?? 120000), 'activate', extension.activate(context as never));
  const activation = Date.now() - before;
  // A started server asks for its settings, registers its file watchers and indexes the workspace (work done
  // progress) at once; let that finish before shutting it down (a shutdown that overtakes the server's own
  // requests is not what this test is about).
  if (outputLines.some((l) => l.startsWith('Language server ('))) {
    const until = Date.now() + 30000;
    const indexed = () => progressShown.some((p) => !p.title.startsWith('Puppet XPP') && p.done);
    while (!indexed() && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
  }
  await within(60000, 'deactivate', extension.deactivate());
  fs.writeFileSync(spec.result, JSON.stringify({
    notifications, progress: progressShown, output: outputLines.join('\n'), executed, activation, formatters,
  }));
}

main().then(() => process.exit(0), (e) => {
  console.error(e instanceof Error ? e.stack : e);
  fs.writeFileSync(spec.result, JSON.stringify({ notifications, progress: progressShown, output: outputLines.join('\n'), executed,
    error: String(e) }));
  process.exit(1);
});

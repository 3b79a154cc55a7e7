// The commands over the server's puppet-vscode messages (issue 29 item 4), run in the bundled extension as
// VS Code would run them: the .vsix's dist/extension.js is activated with a recording stand-in for the VS Code
// API (documents and editors held in memory, edits applied to them, webview panels, input boxes answered from
// the spec, the status bar item), and its own language client talks to the real puppet-xpp server found on PATH.
// Then "Puppet: Show Node Graph", "Puppet: Resource", "Puppet: Show Facts" and "Puppet: Fix all lint problems"
// run through vscode.commands.executeCommand, and what the user would see is written to the result:
// the status bar's text, the webview's HTML and the graph, each document's text after the edits, the facts
// document. Documents are opened as VS Code opens them (workspace.textDocuments, onDidOpenTextDocument,
// languages.match with VS Code's rules for a document filter), so the client sends the server the documents its
// selector takes (didOpen, seen in its verbose trace) with the editor's text, which may differ from the file's;
// the diagnostics the client receives are recorded per document. Edits are not sent (no didChange).
// Run by tests/editors/test_vscode_issue29.py with a JSON spec in $PUPPET_XPP_E2E:
//   { bundle, path, workspace, storage, version, graph: {file, text}, graphError: {file, text} (a manifest
//     Puppet cannot compile), resource: {file, line, inputs},
//     lint: {file, text}, documents: [{file, languageId}], result }
import * as fs from 'fs';
import * as path from 'path';

import type * as Extension from '../../src/extension';
import { extensionContext, installVscodeStub, partial, VSCODE_TYPES, within } from './vscode-stub';

interface Spec {
  bundle: string;
  path: string;
  workspace: string;
  storage: string;
  version: string;
  graph: { file: string; text: string };
  graphError: { file: string; text: string };
  resource: { file: string; line: number; inputs: string[] };
  lint: { file: string; text: string };
  documents: { file: string; languageId: string }[];
  result: string;
}

const spec: Spec = JSON.parse(fs.readFileSync(process.env.PUPPET_XPP_E2E!, 'utf8'));
const notifications: { kind: string; text: string }[] = [];
const commands = new Map<string, (...args: unknown[]) => unknown>();
const providers = new Map<string, { provideTextDocumentContent(uri: Uri): string }>();
const panels: { viewType: string; title: string; options: unknown; webview: { html: string } }[] = [];
const shown: string[] = [];
const inputs = [...spec.resource.inputs];
const prompts: string[] = [];
const outputLines: string[] = [];
/** uri -> the messages of the diagnostics the client last set for it */
const diagnostics = new Map<string, { message: string; severity: unknown; line: number }[]>();

class Uri {
  constructor(readonly scheme: string, readonly path: string) {}
  get fsPath(): string { return this.path; }
  static file(p: string): Uri { return new Uri('file', p); }
  static from(parts: { scheme: string; path: string }): Uri { return new Uri(parts.scheme, parts.path); }
  static parse(s: string): Uri {
    const u = new URL(s);
    return new Uri(u.protocol.slice(0, -1), decodeURIComponent(u.pathname));
  }
  toString(): string { return this.scheme === 'file' ? new URL(`file://${this.path}`).href : `${this.scheme}:${this.path}`; }
  toJSON(): unknown { return { scheme: this.scheme, path: this.path }; }
}

class Position {
  constructor(readonly line: number, readonly character: number) {}
  with(line: number, character: number): Position { return new Position(line, character); }
}

class Range {
  readonly start: Position;
  readonly end: Position;
  constructor(a: number | Position, b: number | Position, c?: number, d?: number) {
    this.start = typeof a === 'number' ? new Position(a, b as number) : a;
    this.end = typeof a === 'number' ? new Position(c!, d!) : b as Position;
  }
}

class EventEmitter<T> {
  private listeners: ((e: T) => void)[] = [];
  readonly event = (l: (e: T) => void) => { this.listeners.push(l); return { dispose: () => undefined }; };
  fire(e: T): void { for (const l of this.listeners) l(e); }
  dispose(): void { this.listeners = []; }
}

/** A document held in memory, with the members the extension reads. */
class Doc {
  version = 1;
  isDirty = false;
  constructor(readonly uri: Uri, readonly languageId: string, public text: string) {}
  getText(): string { return this.text; }
  get lineCount(): number { return this.text.split('\n').length; }
  offsetAt(p: Position): number {
    const lines = this.text.split('\n');
    if (p.line >= lines.length) return this.text.length;
    let off = 0;
    for (let i = 0; i < p.line; i++) off += lines[i].length + 1;
    return off + Math.min(p.character, lines[p.line].length);
  }
}

type Edit = { uri: Uri; range: Range; text: string };
class WorkspaceEdit {
  readonly edits: Edit[] = [];
  insert(uri: Uri, at: Position, text: string): void { this.edits.push({ uri, range: new Range(at, at), text }); }
  replace(uri: Uri, range: Range, text: string): void { this.edits.push({ uri, range, text }); }
}

class CancellationTokenSource {
  readonly token = { isCancellationRequested: false, onCancellationRequested: () => ({ dispose: () => undefined }) };
  cancel(): void { this.token.isCancellationRequested = true; }
  dispose(): void { /* nothing held */ }
}

class Diagnostic {
  constructor(readonly range: Range, readonly message: string, readonly severity: number) {}
}

const docs = new Map<string, Doc>();
const textDocuments: Doc[] = [];
const opened = new EventEmitter<Doc>();
let active: { document: Doc; selection: { active: Position; isEmpty: boolean } } | undefined;

/** Opens `file` as an editor would, with `text` (default: the file's) as the editor's text. */
function openDoc(file: string, languageId: string, text?: string): Doc {
  const doc = new Doc(Uri.file(file), languageId, text ?? fs.readFileSync(file, 'utf8'));
  docs.set(doc.uri.toString(), doc);
  textDocuments.push(doc);
  opened.fire(doc);
  return doc;
}

type Filter = { language?: string; scheme?: string; pattern?: string };
/** vscode.languages.match for document filters: 10 when one filter's language, scheme and glob all hold. */
function match(selector: Filter | string | (Filter | string)[], doc: Doc): number {
  const glob = (pattern: string, p: string) => new RegExp(`^${pattern.split('**/').map((part) =>
    part.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '[^/]*').replace(/\?/g, '[^/]')).join('(?:.*/)?')}$`).test(p);
  for (const f of Array.isArray(selector) ? selector : [selector]) {
    const filter: Filter = typeof f === 'string' ? { language: f } : f;
    if (filter.language !== undefined && filter.language !== '*' && filter.language !== doc.languageId) continue;
    if (filter.scheme !== undefined && filter.scheme !== '*' && filter.scheme !== doc.uri.scheme) continue;
    if (filter.pattern !== undefined && !glob(filter.pattern, doc.uri.path)) continue;
    return 10;
  }
  return 0;
}

function show(doc: Doc, line = 0): void {
  active = { document: doc, selection: { active: new Position(line, 0), isEmpty: true } };
}

const status = { text: '', tooltip: '' as unknown, shown: false, command: undefined as unknown, name: '' };
const disposable = () => ({ dispose: () => undefined });

installVscodeStub(VSCODE_TYPES, {
  version: '1.82.0',
  Uri, Position, Range, EventEmitter, WorkspaceEdit, Diagnostic, CancellationTokenSource,
  DiagnosticSeverity: { Error: 0, Warning: 1, Information: 2, Hint: 3 },
  languages: partial({
    match,
    createDiagnosticCollection: (name?: string) => partial({
      name,
      set: (uri: Uri, diags?: Diagnostic[]) => {
        diagnostics.set(uri.toString(), (diags ?? []).map((d) => ({ message: d.message, severity: d.severity, line: d.range.start.line })));
      },
      delete: (uri: Uri) => { diagnostics.delete(uri.toString()); },
      clear: () => diagnostics.clear(),
      dispose: () => undefined,
    }),
  }),
  env: partial({ appName: 'Visual Studio Code', language: 'en', machineId: 'e2e', sessionId: 'e2e', uriScheme: 'vscode' }),
  workspace: partial({
    workspaceFolders: [{ uri: Uri.file(spec.workspace), name: path.basename(spec.workspace), index: 0 }],
    textDocuments,
    getConfiguration: (section?: string) => ({
      // the client's trace shows what it sends (didOpen of the documents its selector takes)
      get: (key: string, fallback?: unknown) => (key === 'trace.server' ? 'verbose' : fallback),
      inspect: (key: string) => ({ key: `${section}.${key}` }),
      has: () => false,
      update: async () => undefined,
    }),
    getWorkspaceFolder: () => undefined,
    asRelativePath: (p: string) => p,
    registerTextDocumentContentProvider: (scheme: string, provider: { provideTextDocumentContent(uri: Uri): string }) => {
      providers.set(scheme, provider);
      return disposable();
    },
    openTextDocument: async (uri: Uri) => {
      const provider = providers.get(uri.scheme);
      const doc = new Doc(uri, uri.path.endsWith('.json') ? 'json' : 'plaintext',
        provider ? provider.provideTextDocumentContent(uri) : fs.readFileSync(uri.fsPath, 'utf8'));
      docs.set(uri.toString(), doc);
      return doc;
    },
    applyEdit: async (edit: WorkspaceEdit) => {
      for (const e of edit.edits) {
        const doc = docs.get(e.uri.toString());
        if (!doc) return false;
        const from = doc.offsetAt(e.range.start);
        const to = doc.offsetAt(e.range.end);
        doc.text = doc.text.slice(0, from) + e.text + doc.text.slice(to);
        doc.version++;
      }
      return true;
    },
    onDidSaveTextDocument: disposable,
    onDidOpenTextDocument: opened.event,
    onDidCloseTextDocument: disposable,
    onDidChangeConfiguration: disposable,
  }),
  window: partial({
    createOutputChannel: (name: string) => partial({
      name, append: (t: string) => { outputLines.push(t); }, appendLine: (t: string) => { outputLines.push(t); },
      show: () => undefined, dispose: () => undefined, replace: () => undefined, clear: () => undefined,
    }),
    createStatusBarItem: () => Object.assign(status, {
      show: () => { status.shown = true; },
      hide: () => { status.shown = false; },
      dispose: () => undefined,
    }),
    createWebviewPanel: (viewType: string, title: string, _column: unknown, options: unknown) => {
      const panel = { viewType, title, options, webview: { html: '' }, onDidDispose: disposable, dispose: () => undefined };
      panels.push(panel);
      return panel;
    },
    showInputBox: async (options: { prompt?: string }) => {
      prompts.push(options.prompt ?? '');
      return inputs.shift();
    },
    showTextDocument: async (doc: Doc) => { shown.push(doc.uri.toString()); return undefined; },
    showWarningMessage: async (text: string) => { notifications.push({ kind: 'warning', text }); return undefined; },
    showErrorMessage: async (text: string) => { notifications.push({ kind: 'error', text }); return undefined; },
    showInformationMessage: async (text: string) => { notifications.push({ kind: 'information', text }); return undefined; },
    withProgress: (_options: unknown, task: (p: unknown, t: unknown) => Promise<unknown>) =>
      task({ report: () => undefined }, { isCancellationRequested: false, onCancellationRequested: disposable }),
    setStatusBarMessage: disposable,
    get activeTextEditor() { return active; },
    visibleTextEditors: [],
  }),
  commands: partial({
    registerCommand: (id: string, fn: (...args: unknown[]) => unknown) => { commands.set(id, fn); return disposable(); },
    executeCommand: async (id: string, ...args: unknown[]) => commands.get(id)?.(...args),
  }),
  extensions: partial({ getExtension: () => undefined, onDidChange: disposable, all: [] }),
});

const STEP_MS = 120000;
const result: Record<string, unknown> = { notifications, prompts, shown, timings: {} as Record<string, number> };

async function step<T>(name: string, run: () => Promise<T>): Promise<T> {
  const t0 = Date.now();
  const v = await within(STEP_MS, name, run());
  (result.timings as Record<string, number>)[name] = Date.now() - t0;
  return v;
}

async function main(): Promise<void> {
  process.env.PATH = spec.path;
  const extension = require(spec.bundle) as typeof Extension;
  const context = extensionContext(Uri.file(spec.storage), spec.version);
  await step('activate', () => extension.activate(context as never));
  result.commands = [...commands.keys()].sort();

  // the status bar: puppet/getVersion's Puppet version once the server answers
  await step('status', async () => {
    while (!status.shown) await new Promise((r) => setTimeout(r, 20));
  });
  result.status = { text: status.text, tooltip: String(status.tooltip), command: status.command };

  // the documents the client sends (didOpen) and the diagnostics the server publishes for them
  await step('documents', async () => {
    for (const d of spec.documents) openDoc(d.file, d.languageId);
    const uris = spec.documents.map((d) => Uri.file(d.file).toString());
    // every document the selector takes is sent, and each one the server has diagnostics for gets them
    const some = () => uris.filter((u) => (diagnostics.get(u) ?? []).length > 0).length;
    while (some() < 2) await new Promise((r) => setTimeout(r, 20));
    await new Promise((r) => setTimeout(r, 1000));
  });
  const sent = outputLines.filter((l) => l.includes("Sending notification 'textDocument/didOpen'"));
  const trace = outputLines.join('\n');
  result.didOpen = spec.documents.map((d) => Uri.file(d.file).toString())
    .filter((u) => trace.includes(`"uri": "${u}"`));
  result.didOpenCount = sent.length;
  result.diagnostics = Object.fromEntries(diagnostics);

  show(openDoc(spec.graph.file, 'puppet', spec.graph.text));
  const graph = await step('node_graph', () => Promise.resolve(commands.get('puppetXpp.showNodeGraph')!()));
  result.nodeGraph = { answer: graph, panels: [...panels] };

  show(openDoc(spec.graphError.file, 'puppet', spec.graphError.text));
  const said = notifications.length;
  const failed = await step('node_graph_error', () => Promise.resolve(commands.get('puppetXpp.showNodeGraph')!()));
  result.nodeGraphError = { answer: failed, notifications: notifications.splice(said), panels: panels.slice(1) };

  const resourceDoc = openDoc(spec.resource.file, 'puppet');
  show(resourceDoc, spec.resource.line);
  result.resourceReturned = await step('resource', () => Promise.resolve(commands.get('puppetXpp.puppetResource')!()));
  result.resourceText = resourceDoc.text;

  const facts = await step('facts', () => Promise.resolve(commands.get('puppetXpp.showFacts')!()));
  const factsUri = shown.find((u) => u.startsWith('puppet-xpp-facts:'));
  result.facts = { returned: facts !== undefined, shown: factsUri, text: factsUri ? docs.get(factsUri)?.text : undefined };

  const lintDoc = openDoc(spec.lint.file, 'puppet', spec.lint.text);
  show(lintDoc);
  result.fixes = await step('fix_all', () => Promise.resolve(commands.get('puppetXpp.fixAll')!()));
  result.fixedText = lintDoc.text;

  await within(60000, 'deactivate', extension.deactivate());
  result.statusAfter = status.shown;
  fs.writeFileSync(spec.result, JSON.stringify(result));
}

main().then(() => process.exit(0), (e) => {
  console.error(e instanceof Error ? e.stack : e);
  fs.writeFileSync(spec.result, JSON.stringify({ ...result, error: String(e), output: outputLines.join('\n').slice(-20000) }));
  process.exit(1);
});

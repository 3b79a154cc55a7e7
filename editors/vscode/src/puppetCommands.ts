// The commands that use the server's puppet-vscode messages (issue 29 item 4): "Puppet: Show Node Graph",
// "Puppet: Resource", "Puppet: Show Facts", "Puppet: Fix all lint problems", and the Puppet version in the
// status bar. Each command returns what it showed or inserted, so that a test driving the extension through
// `vscode.commands.executeCommand` can check it; the user sees it in the editor.
import * as path from 'path';
import * as vscode from 'vscode';

import {
  COMPILE_NODE_GRAPH, FactsResponse, FIX_DIAGNOSTIC_ERRORS, FixParams, FixResponse, fixedText, GET_FACTS,
  GET_RESOURCE, GET_VERSION, NodeGraph, NodeGraphParams, ResourceParams, ResourceResponse, resourceText,
  VersionDetails, versionStatus,
} from './messages';
import { nodeGraphHtml } from './nodegraph';

/** The part of vscode-languageclient's LanguageClient the commands use. */
export interface RequestClient {
  sendRequest<R>(method: string, params?: unknown): Promise<R>;
  isRunning(): boolean;
}

export const FACTS_SCHEME = 'puppet-xpp-facts';
const PUPPET_LANGUAGES = ['puppet', 'epp'];
/** How often, and how many times, the status bar asks again while the server is still loading. */
const VERSION_POLL_MS = 5000;
const VERSION_POLLS = 24;

export class PuppetCommands implements vscode.Disposable {
  private readonly status: vscode.StatusBarItem;
  private readonly panels = new Map<string, vscode.WebviewPanel>();
  private facts = '';
  private readonly factsChanged = new vscode.EventEmitter<vscode.Uri>();
  private versionTimer: ReturnType<typeof setTimeout> | undefined;
  private readonly disposables: vscode.Disposable[] = [];

  constructor(private readonly client: () => RequestClient | undefined, private readonly output: vscode.OutputChannel) {
    this.status = vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Right, 1);
    this.status.name = 'Puppet version';
    this.disposables.push(
      this.status,
      this.factsChanged,
      vscode.commands.registerCommand('puppetXpp.showNodeGraph', () => this.showNodeGraph()),
      vscode.commands.registerCommand('puppetXpp.puppetResource', (typename?: string, title?: string) =>
        this.puppetResource(typename, title)),
      vscode.commands.registerCommand('puppetXpp.showFacts', () => this.showFacts()),
      vscode.commands.registerCommand('puppetXpp.fixAll', () => this.fixAll()),
      vscode.workspace.registerTextDocumentContentProvider(FACTS_SCHEME, {
        onDidChange: this.factsChanged.event,
        provideTextDocumentContent: () => this.facts,
      }),
      // a saved manifest whose graph is shown is compiled again, as puppet-vscode does
      vscode.workspace.onDidSaveTextDocument((doc) => {
        if (this.panels.has(doc.uri.toString())) void this.showNodeGraph(doc);
      }),
    );
  }

  dispose(): void {
    if (this.versionTimer) clearTimeout(this.versionTimer);
    for (const p of this.panels.values()) p.dispose();
    for (const d of this.disposables) d.dispose();
  }

  /** The running client, or undefined after saying that there is none. */
  private running(): RequestClient | undefined {
    const c = this.client();
    if (c && c.isRunning()) return c;
    void vscode.window.showWarningMessage('Puppet XPP: the language server is not running.');
    return undefined;
  }

  private async request<R>(c: RequestClient, method: string, params?: unknown): Promise<R | undefined> {
    try {
      return await c.sendRequest<R>(method, params);
    } catch (e) {
      const why = e instanceof Error ? e.message : String(e);
      this.output.appendLine(`${method} failed: ${why}`);
      void vscode.window.showErrorMessage(`Puppet XPP: ${method} failed: ${why}`);
      return undefined;
    }
  }

  // -------------------------------------------------------------------------------------------
  // Status bar: the Puppet version of puppet/getVersion

  /** Asks puppet/getVersion and shows the Puppet version; asks again while the server is still loading. */
  async updateVersion(polls = VERSION_POLLS): Promise<VersionDetails | undefined> {
    if (this.versionTimer) clearTimeout(this.versionTimer);
    this.versionTimer = undefined;
    const c = this.client();
    if (!c || !c.isRunning()) {
      this.status.hide();
      return undefined;
    }
    let details: VersionDetails | undefined;
    try {
      details = await c.sendRequest<VersionDetails>(GET_VERSION);
    } catch (e) {
      this.output.appendLine(`${GET_VERSION} failed: ${e instanceof Error ? e.message : String(e)}`);
      this.status.hide();
      return undefined;
    }
    const shown = versionStatus(details);
    this.status.text = shown.text;
    this.status.tooltip = shown.tooltip;
    this.status.command = 'puppetXpp.showFacts';
    this.status.show();
    const loading = !(details.factsLoaded && details.functionsLoaded && details.typesLoaded && details.classesLoaded);
    if (loading && polls > 0) {
      this.versionTimer = setTimeout(() => void this.updateVersion(polls - 1), VERSION_POLL_MS);
    }
    return details;
  }

  /** The status bar item's text and tooltip (for tests). */
  statusText(): { text: string; tooltip: string } {
    return { text: this.status.text, tooltip: String(this.status.tooltip ?? '') };
  }

  hideStatus(): void {
    if (this.versionTimer) clearTimeout(this.versionTimer);
    this.status.hide();
  }

  // -------------------------------------------------------------------------------------------
  // Puppet: Show Node Graph

  async showNodeGraph(document?: vscode.TextDocument): Promise<{ graph: NodeGraph; html: string } | undefined> {
    const doc = document ?? vscode.window.activeTextEditor?.document;
    if (!doc || !PUPPET_LANGUAGES.includes(doc.languageId)) {
      void vscode.window.showWarningMessage('Puppet XPP: open a Puppet manifest to see its node graph.');
      return undefined;
    }
    const c = this.running();
    if (!c) return undefined;
    const params: NodeGraphParams = { external: doc.uri.toString() };
    const graph = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Window, title: 'Puppet XPP: compiling the node graph' },
      () => this.request<NodeGraph>(c, COMPILE_NODE_GRAPH, params));
    if (!graph) return undefined;
    if (graph.error) void vscode.window.showErrorMessage(`Puppet XPP: node graph: ${graph.error}`);
    const title = `Node Graph '${path.basename(doc.uri.fsPath)}'`;
    const key = doc.uri.toString();
    let panel = this.panels.get(key);
    if (!panel) {
      panel = vscode.window.createWebviewPanel('puppetXppNodeGraph', title, vscode.ViewColumn.Beside,
        { enableScripts: false, enableCommandUris: false, localResourceRoots: [] });
      this.panels.set(key, panel);
      panel.onDidDispose(() => this.panels.delete(key));
    }
    const html = nodeGraphHtml(graph, title);
    panel.webview.html = html;
    return { graph, html };
  }

  // -------------------------------------------------------------------------------------------
  // Puppet: Resource

  /**
   * Asks a resource type and an optional title (unless given), and inserts what `puppet resource` prints for
   * them at the start of the cursor's line, as puppet-vscode's "Puppet Resource" does.
   */
  async puppetResource(typename?: string, title?: string): Promise<string | undefined> {
    const editor = vscode.window.activeTextEditor;
    if (!editor) {
      void vscode.window.showWarningMessage('Puppet XPP: open a file to insert the resource into.');
      return undefined;
    }
    const c = this.running();
    if (!c) return undefined;
    const type = typename ?? (await vscode.window.showInputBox({
      prompt: 'Puppet resource type', placeHolder: 'user, package, service, file, …',
      validateInput: (v) => (/^[a-z][\w:]*$/i.test(v.trim()) ? undefined : 'a resource type name, e.g. user'),
    }))?.trim();
    if (!type) return undefined;
    const name = title ?? (await vscode.window.showInputBox({
      prompt: `Title of the ${type} (empty: every ${type} resource)`, placeHolder: 'root',
    }));
    if (name === undefined) return undefined;
    const params: ResourceParams = name.trim() === '' ? { typename: type } : { typename: type, title: name.trim() };
    const answer = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: `Puppet XPP: puppet resource ${type} ${name}`.trim() },
      () => this.request<ResourceResponse>(c, GET_RESOURCE, params));
    if (answer === undefined) return undefined;
    const got = resourceText(answer, type);
    if (got.text === undefined) {
      void vscode.window.showErrorMessage(`Puppet XPP: ${got.error}`);
      return undefined;
    }
    const at = new vscode.Position(editor.selection.active.line, 0);
    const edit = new vscode.WorkspaceEdit();
    edit.insert(editor.document.uri, at, got.text);
    if (!(await vscode.workspace.applyEdit(edit))) {
      void vscode.window.showErrorMessage('Puppet XPP: the resource could not be inserted (the document changed?).');
      return undefined;
    }
    return got.text;
  }

  // -------------------------------------------------------------------------------------------
  // Puppet: Show Facts

  /** Facter's facts (puppet/getFacts) as a read-only JSON document beside the editor. */
  async showFacts(): Promise<Record<string, unknown> | undefined> {
    const c = this.running();
    if (!c) return undefined;
    const answer = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Window, title: 'Puppet XPP: reading the facts' },
      () => this.request<FactsResponse>(c, GET_FACTS));
    if (!answer) return undefined;
    if (answer.error || !answer.facts) {
      void vscode.window.showErrorMessage(`Puppet XPP: no facts: ${answer.error ?? 'the server sent none'}`);
      return undefined;
    }
    this.facts = JSON.stringify(answer.facts, null, 2) + '\n';
    const uri = vscode.Uri.from({ scheme: FACTS_SCHEME, path: '/facts.json' });
    this.factsChanged.fire(uri);
    const doc = await vscode.workspace.openTextDocument(uri);
    await vscode.window.showTextDocument(doc, { preview: false, viewColumn: vscode.ViewColumn.Beside });
    return answer.facts;
  }

  /** The text of the facts document (for tests). */
  factsText(): string {
    return this.facts;
  }

  // -------------------------------------------------------------------------------------------
  // Puppet: Fix all lint problems

  /** puppet-lint's fixes of the active document (puppet/fixDiagnosticErrors), applied as one edit. */
  async fixAll(): Promise<number | undefined> {
    const editor = vscode.window.activeTextEditor;
    const doc = editor?.document;
    if (!doc || !PUPPET_LANGUAGES.includes(doc.languageId)) {
      void vscode.window.showWarningMessage('Puppet XPP: open a Puppet manifest to fix.');
      return undefined;
    }
    const c = this.running();
    if (!c) return undefined;
    const params: FixParams = { documentUri: doc.uri.toString(), alwaysReturnContent: false };
    const version = doc.version;
    const answer = await this.request<FixResponse>(c, FIX_DIAGNOSTIC_ERRORS, params);
    if (answer === undefined) return undefined;
    const text = fixedText(answer);
    if (text === undefined) {
      void vscode.window.showInformationMessage('Puppet XPP: no lint problem to fix.');
      return 0;
    }
    if (doc.version !== version) {
      void vscode.window.showWarningMessage('Puppet XPP: the document changed while it was being fixed; run the command again.');
      return undefined;
    }
    const edit = new vscode.WorkspaceEdit();
    edit.replace(doc.uri, new vscode.Range(0, 0, doc.lineCount, 0), text);
    if (!(await vscode.workspace.applyEdit(edit))) return undefined;
    const n = answer.fixesApplied ?? 0;
    void vscode.window.showInformationMessage(`Puppet XPP: fixed ${n} lint problem${n === 1 ? '' : 's'}.`);
    return n;
  }
}

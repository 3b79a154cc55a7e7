// Puppet XPP for VS Code: starts the puppet-xpp language server and adds two commands.
import { execFile } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import * as vscode from 'vscode';
import {
  LanguageClient,
  LanguageClientOptions,
  ServerOptions,
  TransportKind,
} from 'vscode-languageclient/node';

import {
  answerConfiguration, compileArgs, DumpFormat, dumpArgs, SECTION, serverLaunch, serverSettings,
} from './config';
import { environmentAt, Environment, findEnvironment, xppTarget } from './layout';

const DUMP_SCHEME = 'puppet-xpp-dump';

let client: LanguageClient | undefined;
let output: vscode.OutputChannel;
const dumps = new Map<string, string>();
/** source file -> .xpp file, as reported by the server's puppet/xppWritten notifications */
const written = new Map<string, string>();

function config(scope?: vscode.ConfigurationScope): vscode.WorkspaceConfiguration {
  return vscode.workspace.getConfiguration(SECTION, scope);
}

function firstFolder(): string | undefined {
  return vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
}

function createClient(): LanguageClient {
  const launch = serverLaunch(config(), firstFolder());
  const serverOptions: ServerOptions = {
    command: launch.command,
    args: launch.args,
    transport: TransportKind.stdio,
    options: { cwd: firstFolder() },
  };
  const clientOptions: LanguageClientOptions = {
    documentSelector: [
      { scheme: 'file', language: 'puppet' },
      { scheme: 'file', language: 'epp' },
      { scheme: 'untitled', language: 'puppet' },
      { scheme: 'untitled', language: 'epp' },
    ],
    initializationOptions: serverSettings(config()),
    outputChannel: output,
    middleware: {
      workspace: {
        // The server asks for its settings (section "puppet"); answer from the puppetXpp.* settings.
        configuration: async (params, token, next) => {
          const rest = await next(params, token);
          if (!Array.isArray(rest)) return rest;
          return answerConfiguration(params.items, rest,
            (scopeUri) => serverSettings(config(scopeUri ? vscode.Uri.parse(scopeUri) : undefined)));
        },
      },
    },
  };
  return new LanguageClient('puppetXpp', 'Puppet XPP', serverOptions, clientOptions);
}

async function startClient(): Promise<void> {
  client = createClient();
  client.onNotification('puppet/xppWritten', (p: { uri: string; xpp: string }) => {
    const src = vscode.Uri.parse(p.uri).fsPath;
    const xpp = vscode.Uri.parse(p.xpp).fsPath;
    written.set(src, xpp);
    vscode.window.setStatusBarMessage(`Puppet XPP: wrote ${vscode.workspace.asRelativePath(xpp)}`, 4000);
  });
  try {
    await client.start();
  } catch (e) {
    const launch = serverLaunch(config(), firstFolder());
    void vscode.window.showErrorMessage(
      `Puppet XPP: could not start the language server (${launch.command} ${launch.args.join(' ')}): ${e}. ` +
      'Install puppet-xpp or set "puppetXpp.serverPath".');
  }
}

async function restartClient(): Promise<void> {
  if (client) {
    try { await client.stop(); } catch { /* already stopped */ }
  }
  await startClient();
}

// ---------------------------------------------------------------------------------------------
// Puppet XPP: Compile workspace environment

function candidateEnvironments(): Environment[] {
  const found = new Map<string, Environment>();
  const active = vscode.window.activeTextEditor?.document;
  if (active && active.uri.scheme === 'file') {
    const env = findEnvironment(active.uri.fsPath);
    if (env) found.set(env.root, env);
  }
  for (const f of vscode.workspace.workspaceFolders ?? []) {
    const env = environmentAt(f.uri.fsPath) ?? findEnvironment(f.uri.fsPath);
    if (env) found.set(env.root, env);
  }
  return [...found.values()];
}

async function pickEnvironment(): Promise<Environment | undefined> {
  const envs = candidateEnvironments();
  if (envs.length === 0) {
    void vscode.window.showWarningMessage(
      'Puppet XPP: no Puppet environment found (a directory with environment.conf, or with manifests/ and modules/).');
    return undefined;
  }
  if (envs.length === 1) return envs[0];
  const pick = await vscode.window.showQuickPick(envs.map((e) => ({ label: e.root, env: e })),
    { placeHolder: 'Environment to compile' });
  return pick?.env;
}

async function compileEnvironment(): Promise<void> {
  const env = await pickEnvironment();
  if (!env) return;
  const cfg = config(vscode.Uri.file(env.root));
  const launch = serverLaunch(cfg, firstFolder());
  const folder = vscode.workspace.getWorkspaceFolder(vscode.Uri.file(env.root)) ?? vscode.TaskScope.Workspace;
  const task = new vscode.Task(
    { type: 'puppet-xpp', task: 'compile', environment: env.root },
    folder,
    `compile ${path.basename(env.root)}`,
    'puppet-xpp',
    new vscode.ProcessExecution(launch.command, compileArgs(env.root, serverSettings(cfg)), { cwd: env.root }),
    '$puppet-xpp');
  task.presentationOptions = { reveal: vscode.TaskRevealKind.Always, clear: true };
  const done = new Promise<number | undefined>((resolve) => {
    const sub = vscode.tasks.onDidEndTaskProcess((e) => {
      if (e.execution.task.definition.environment === env.root && e.execution.task.source === 'puppet-xpp') {
        sub.dispose();
        resolve(e.exitCode);
      }
    });
  });
  await vscode.tasks.executeTask(task);
  const code = await done;
  const where = path.join(env.root, '.xpp');
  if (code === 0) {
    void vscode.window.showInformationMessage(`Puppet XPP: compiled ${env.root} into ${where}.`);
  } else if (code === 1) {
    void vscode.window.showWarningMessage(
      `Puppet XPP: ${env.root} compiled with errors (see the Problems view and the task output).`);
  } else {
    void vscode.window.showErrorMessage(`Puppet XPP: compiling ${env.root} failed (exit code ${code}).`);
  }
}

// ---------------------------------------------------------------------------------------------
// Puppet XPP: Show XPP dump of current file

function run(command: string, args: string[], cwd?: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(command, args, { cwd, maxBuffer: 256 * 1024 * 1024 }, (err, stdout, stderr) => {
      const code = err ? (typeof (err as NodeJS.ErrnoException).code === 'number' ? Number(err.code) : 2) : 0;
      resolve({ code, stdout: String(stdout), stderr: err && !stderr ? String(err.message) : String(stderr) });
    });
  });
}

async function showXppDump(): Promise<void> {
  const doc = vscode.window.activeTextEditor?.document;
  if (!doc || (doc.languageId !== 'puppet' && doc.languageId !== 'epp') || doc.uri.scheme !== 'file') {
    void vscode.window.showWarningMessage('Puppet XPP: open a saved .pp or .epp file first.');
    return;
  }
  const src = doc.uri.fsPath;
  const cfg = config(doc.uri);
  const format = (cfg.get<string>('dumpFormat') === 'tree' ? 'tree' : 'pn') as DumpFormat;
  const env = findEnvironment(src);
  const target = env ? xppTarget(env, src) : undefined;
  let file = written.get(src) ?? target?.outPath;
  if (!file || !fs.existsSync(file)) {
    const why = !target || !env ? 'This file is not inside a Puppet environment, so it has no .xpp file.'
      : `There is no ${path.relative(env.root, target.outPath)} yet: save the file (with "puppetXpp.xppOnSave" on) or compile the environment.`;
    const choice = await vscode.window.showWarningMessage(`Puppet XPP: ${why}`, 'Dump the source instead');
    if (choice !== 'Dump the source instead') return;
    file = src;
  } else if (doc.isDirty) {
    void vscode.window.showInformationMessage('Puppet XPP: the file has unsaved changes; the dump shows the last saved version.');
  }
  const launch = serverLaunch(cfg, firstFolder());
  const r = await run(launch.command, dumpArgs(file, format), env?.root);
  if (r.code !== 0 && !r.stdout) {
    void vscode.window.showErrorMessage(`Puppet XPP: ${launch.command} --dump failed: ${r.stderr.trim()}`);
    return;
  }
  const uri = vscode.Uri.from({ scheme: DUMP_SCHEME, path: file + (format === 'tree' ? '.tree' : '.pn') });
  dumps.set(uri.toString(), r.stdout + (r.stderr ? `\n${r.stderr}` : ''));
  provider.fire(uri);
  const shown = await vscode.workspace.openTextDocument(uri);
  await vscode.window.showTextDocument(shown, { preview: false, viewColumn: vscode.ViewColumn.Beside });
}

class DumpProvider implements vscode.TextDocumentContentProvider {
  private readonly emitter = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.emitter.event;
  fire(uri: vscode.Uri): void { this.emitter.fire(uri); }
  provideTextDocumentContent(uri: vscode.Uri): string {
    return dumps.get(uri.toString()) ?? '';
  }
}
const provider = new DumpProvider();

// ---------------------------------------------------------------------------------------------

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  output = vscode.window.createOutputChannel('Puppet XPP');
  context.subscriptions.push(
    output,
    vscode.workspace.registerTextDocumentContentProvider(DUMP_SCHEME, provider),
    vscode.commands.registerCommand('puppetXpp.compileEnvironment', compileEnvironment),
    vscode.commands.registerCommand('puppetXpp.showXppDump', showXppDump),
    vscode.commands.registerCommand('puppetXpp.restartServer', restartClient),
    vscode.workspace.onDidChangeConfiguration(async (e) => {
      if (!e.affectsConfiguration(SECTION)) return;
      if (e.affectsConfiguration(`${SECTION}.serverPath`) || e.affectsConfiguration(`${SECTION}.serverArgs`)) {
        await restartClient();
        return;
      }
      if (client?.isRunning()) {
        const s = serverSettings(config());
        await client.sendNotification('workspace/didChangeConfiguration', { settings: { puppet: s, [SECTION]: s } });
      }
    }),
    vscode.workspace.onDidCloseTextDocument((d) => {
      if (d.uri.scheme === DUMP_SCHEME) dumps.delete(d.uri.toString());
    }),
  );
  await startClient();
}

export async function deactivate(): Promise<void> {
  if (client) await client.stop();
}

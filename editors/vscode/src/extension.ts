// Puppet XPP for VS Code: finds (or installs) the puppet-xpp language server, starts it, and adds commands.
import { execFile, execFileSync, spawn } from 'child_process';
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
  answerConfiguration, compileArgs, DOCUMENT_SELECTOR, DumpFormat, dumpArgs, SECTION, serverLaunch, serverSettings,
} from './config';
import {
  cliLaunch, discoverServer, FoundServer, INCUMBENT_ID, incumbentWarning, planInstall, versionWarning,
} from './discovery';
import { environmentAt, Environment, findEnvironment, xppPathFor, xppTarget } from './layout';
import { PuppetCommands } from './puppetCommands';

// The bundle is also what the end-to-end test loads (with a stand-in `vscode`): it uses these, not the sources.
export {
  answerConfiguration, cliLaunch, compileArgs, discoverServer, DOCUMENT_SELECTOR, dumpArgs, findEnvironment,
  serverLaunch, serverSettings, versionWarning, xppPathFor,
};

const DUMP_SCHEME = 'puppet-xpp-dump';
const PYTHON_EXTENSION = 'ms-python.python';

let client: LanguageClient | undefined;
let puppetCommands: PuppetCommands | undefined;
let output: vscode.OutputChannel;
let extensionContext: vscode.ExtensionContext;
let incumbentWarned = false;
const dumps = new Map<string, string>();
/** source file -> .xpp file, as reported by the server's puppet/xppWritten notifications */
const written = new Map<string, string>();

function config(scope?: vscode.ConfigurationScope): vscode.WorkspaceConfiguration {
  return vscode.workspace.getConfiguration(SECTION, scope);
}

function firstFolder(): string | undefined {
  return vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
}

function extensionVersion(): string {
  return String(extensionContext.extension.packageJSON.version);
}

/** The extension's private pipx installation (PIPX_HOME/PIPX_BIN_DIR) lives in its global storage. */
function privateStorage(): string {
  return extensionContext.globalStorageUri.fsPath;
}

// ---------------------------------------------------------------------------------------------
// Finding the server

/** `puppetXpp.serverPath` when the user set it at any level (the default, empty, means "find it"). */
function configuredServerPath(): string | undefined {
  const seen = config().inspect<string>('serverPath');
  const value = seen?.workspaceFolderValue ?? seen?.workspaceValue ?? seen?.globalValue;
  return typeof value === 'string' && value !== '' ? value : undefined;
}

interface PythonApi {
  environments?: {
    getActiveEnvironmentPath?: (resource?: vscode.Uri) => { path: string } | undefined;
    resolveEnvironment?: (env: unknown) => Promise<{ executable?: { uri?: vscode.Uri } } | undefined>;
  };
  settings?: { getExecutionDetails?: (resource?: vscode.Uri) => { execCommand?: string[] } | undefined };
}

/** The interpreter the Python extension selected for the workspace; undefined when it is not installed. */
async function pythonInterpreter(): Promise<string | undefined> {
  const ext = vscode.extensions.getExtension<PythonApi>(PYTHON_EXTENSION);
  if (!ext) return undefined;
  try {
    const api = ext.isActive ? ext.exports : await ext.activate();
    const resource = vscode.workspace.workspaceFolders?.[0]?.uri;
    const envs = api?.environments;
    if (envs?.getActiveEnvironmentPath && envs.resolveEnvironment) {
      const active = envs.getActiveEnvironmentPath(resource);
      const resolved = active ? await envs.resolveEnvironment(active) : undefined;
      const exe = resolved?.executable?.uri?.fsPath;
      if (exe) return exe;
    }
    const exec = api?.settings?.getExecutionDetails?.(resource)?.execCommand;
    if (exec && exec.length === 1 && exec[0]) return exec[0];
  } catch (e) {
    output.appendLine(`The Python extension did not give an interpreter: ${e}`);
  }
  return undefined;
}

function pythonHasModule(python: string, module: string): Promise<boolean> {
  return new Promise((resolve) => {
    execFile(python, ['-c', `import ${module}`], { timeout: 20000 }, (err) => resolve(!err));
  });
}

async function findServer(): Promise<{ server?: FoundServer; tried: string[] }> {
  const launch = serverLaunch(config(), firstFolder());
  const found = await discoverServer({
    configured: configuredServerPath(),
    args: launch.args,
    workspaceFolder: firstFolder(),
    pathEnv: process.env.PATH,
    pythonInterpreter,
    pythonHasModule: (python) => pythonHasModule(python, 'puppet_xpp'),
    privateBin: path.join(privateStorage(), 'bin'),
  });
  if (found.server) output.appendLine(`Language server (${found.server.source}): ${found.server.command}`);
  return found;
}

/** The server, or undefined after telling the user (and offering the installation). */
async function serverOrOffer(): Promise<FoundServer | undefined> {
  const found = await findServer();
  if (found.server) return found.server;
  const where = found.tried.join('; ');
  output.appendLine(`No language server found. Looked at: ${where}`);
  if (configuredServerPath() !== undefined) {
    const choice = await vscode.window.showErrorMessage(
      `Puppet XPP: the language server set in "puppetXpp.serverPath" was not found (${where}).`, 'Open Settings');
    if (choice === 'Open Settings') {
      await vscode.commands.executeCommand('workbench.action.openSettings', `${SECTION}.serverPath`);
    }
    return undefined;
  }
  const install = 'Install with pipx';
  const choose = 'Set serverPath';
  const choice = await vscode.window.showWarningMessage(
    `Puppet XPP: the puppet-xpp language server was not found (looked at: ${where}). Install puppet-xpp ` +
    `${extensionVersion()} for this extension only (pipx, into the extension's storage)?`, install, choose);
  if (choice === install) await vscode.commands.executeCommand('puppetXpp.installServer');
  if (choice === choose) await vscode.commands.executeCommand('workbench.action.openSettings', `${SECTION}.serverPath`);
  return undefined;
}

// ---------------------------------------------------------------------------------------------
// Installing the server: "Puppet XPP: Install the language server"

async function installServer(): Promise<void> {
  const lookup = planInstall(privateStorage(), extensionVersion(), process.env.PATH,
    (python) => {
      try {
        execFileSync(python, ['-c', 'import pipx'], { stdio: 'ignore', timeout: 20000 });
        return true;
      } catch {
        return false;
      }
    });
  if ('error' in lookup) {
    void vscode.window.showErrorMessage(lookup.error);
    return;
  }
  const plan = lookup.plan;
  fs.mkdirSync(privateStorage(), { recursive: true });
  output.appendLine(`$ ${plan.command} ${plan.args.join(' ')}  (PIPX_HOME=${plan.env.PIPX_HOME})`);
  const result = await vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title: 'Puppet XPP: installing the language server', cancellable: true },
    (progress, token) => new Promise<{ code: number | null; tail: string }>((resolve) => {
      const proc = spawn(plan.command, plan.args, { env: { ...process.env, ...plan.env }, stdio: ['ignore', 'pipe', 'pipe'] });
      let tail = '';
      const take = (d: Buffer) => {
        const text = String(d);
        output.append(text);
        tail = (tail + text).slice(-2000);
        const last = text.trim().split('\n').pop();
        if (last) progress.report({ message: last.slice(0, 120) });
      };
      proc.stdout.on('data', take);
      proc.stderr.on('data', take);
      token.onCancellationRequested(() => proc.kill());
      proc.on('error', (e) => resolve({ code: -1, tail: String(e) }));
      proc.on('close', (code) => resolve({ code, tail }));
    }));
  if (result.code === 0 && fs.existsSync(plan.server)) {
    void vscode.window.showInformationMessage(`Puppet XPP: installed the language server (${plan.server}).`);
    await restartClient();
    return;
  }
  const choice = await vscode.window.showErrorMessage(
    `Puppet XPP: installing the language server failed (exit ${result.code}): ${result.tail.trim().split('\n').pop() ?? ''}`,
    'Show Output');
  if (choice === 'Show Output') output.show();
}

// ---------------------------------------------------------------------------------------------
// The language client

function createClient(server: FoundServer): LanguageClient {
  const serverOptions: ServerOptions = {
    command: server.command,
    args: server.args,
    transport: TransportKind.stdio,
    options: { cwd: firstFolder() },
  };
  const clientOptions: LanguageClientOptions = {
    documentSelector: DOCUMENT_SELECTOR,
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
  const server = await serverOrOffer();
  if (!server) return;
  client = createClient(server);
  client.onNotification('puppet/xppWritten', (p: { uri: string; xpp: string }) => {
    const src = vscode.Uri.parse(p.uri).fsPath;
    const xpp = vscode.Uri.parse(p.xpp).fsPath;
    written.set(src, xpp);
    vscode.window.setStatusBarMessage(`Puppet XPP: wrote ${vscode.workspace.asRelativePath(xpp)}`, 4000);
  });
  try {
    await client.start();
  } catch (e) {
    void vscode.window.showErrorMessage(
      `Puppet XPP: could not start the language server (${server.command} ${server.args.join(' ')}): ${e}. ` +
      'Install puppet-xpp or set "puppetXpp.serverPath".');
    return;
  }
  const warning = versionWarning(client.initializeResult?.serverInfo?.version, extensionVersion(), server.command);
  if (warning) {
    output.appendLine(warning);
    void vscode.window.showWarningMessage(warning);
  }
  void puppetCommands?.updateVersion();
}

/** Warns (once a session) when the incumbent Puppet extension is active on the same files. */
function checkIncumbent(): void {
  if (incumbentWarned) return;
  const warning = incumbentWarning(vscode.extensions.getExtension(INCUMBENT_ID));
  if (!warning) return;
  incumbentWarned = true;
  output.appendLine(warning);
  void vscode.window.showWarningMessage(warning);
}

async function restartClient(): Promise<void> {
  puppetCommands?.hideStatus();
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
  const server = await serverOrOffer();
  if (!server) return;
  const launch = cliLaunch(server, compileArgs(env.root, serverSettings(cfg)));
  const folder = vscode.workspace.getWorkspaceFolder(vscode.Uri.file(env.root)) ?? vscode.TaskScope.Workspace;
  const task = new vscode.Task(
    { type: 'puppet-xpp', task: 'compile', environment: env.root },
    folder,
    `compile ${path.basename(env.root)}`,
    'puppet-xpp',
    new vscode.ProcessExecution(launch.command, launch.args, { cwd: env.root }),
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
  const server = await serverOrOffer();
  if (!server) return;
  const launch = cliLaunch(server, dumpArgs(file, format));
  const r = await run(launch.command, launch.args, env?.root);
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
  extensionContext = context;
  output = vscode.window.createOutputChannel('Puppet XPP');
  puppetCommands = new PuppetCommands(() => client, output);
  context.subscriptions.push(
    output,
    puppetCommands,
    vscode.commands.registerCommand('puppetXpp.installServer', installServer),
    vscode.extensions.onDidChange(checkIncumbent),
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
    // the Puppet extension activates on opening a Puppet file (onLanguage): look again once it had the time
    vscode.workspace.onDidOpenTextDocument((d) => {
      if (!incumbentWarned && (d.languageId === 'puppet' || d.languageId === 'epp')) setTimeout(checkIncumbent, 3000);
    }),
    vscode.workspace.onDidCloseTextDocument((d) => {
      if (d.uri.scheme === DUMP_SCHEME) dumps.delete(d.uri.toString());
    }),
  );
  checkIncumbent();
  await startClient();
}

export async function deactivate(): Promise<void> {
  puppetCommands?.hideStatus();
  if (client) await client.stop();
}

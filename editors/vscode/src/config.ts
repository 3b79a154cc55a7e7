// Settings and command lines, kept free of the `vscode` module so that they can be tested with plain node.
import * as os from 'os';
import * as path from 'path';

export const SECTION = 'puppetXpp';

/**
 * The documents the server serves: manifests, templates, Puppetfiles (r10k), modules' metadata.json, and
 * Hiera's files -- hiera.yaml and the YAML/JSON data below a `data/` directory (the usual datadir of an
 * environment or module; another datadir named in hiera.yaml is beyond a selector) -- whose unsaved text the
 * deep checks read. The server never takes those for Puppet: no diagnostics, lint, formatting, .xpp or
 * symbols, empty answers to every request. Formatting (document, range, on-type) is not a capability of the
 * server's initialize answer, which the client would register for this whole selector (VS Code would then
 * count us as a YAML and JSON formatter): the server registers it itself for Puppet manifests only
 * (server/lsp/language.py FORMATTED_DOCUMENTS). (The client runs only in a window whose workspace holds a
 * Puppet environment or module: package.json's activationEvents.)
 */
export const DOCUMENT_SELECTOR = [
  { scheme: 'file', language: 'puppet' },
  { scheme: 'file', language: 'epp' },
  { scheme: 'file', language: 'puppetfile' },
  { scheme: 'file', language: 'json', pattern: '**/metadata.json' },
  { scheme: 'file', language: 'yaml', pattern: '**/hiera.yaml' },
  { scheme: 'file', language: 'yaml', pattern: '**/data/**' },
  { scheme: 'file', language: 'json', pattern: '**/data/**' },
  { scheme: 'untitled', language: 'puppet' },
  { scheme: 'untitled', language: 'epp' },
  { scheme: 'untitled', language: 'puppetfile' },
];

/** The settings the language server understands (initializationOptions / workspace/configuration). */
export interface ServerSettings {
  modulepath: string[];
  /** The language level: which Puppet the validator answers like. */
  puppetVersion: '8' | '7' | '7.23';
  /** Omitted: the level's own default (the server decides). */
  strict?: 'off' | 'warning' | 'error';
  tasks: boolean;
  xppOnSave: boolean;
  /** puppet-lint diagnostics (omitted: the server's default, on). */
  lint?: { enabled: boolean; rcPath?: string };
  /** The deep checks (omitted: the server's default, on). */
  deepChecks?: { enabled: boolean };
  /** The user's facts for hover (omitted: the server keeps what it has). */
  facts?: { file: string };
}

/** What we need from a vscode.WorkspaceConfiguration. */
export interface ConfigLike {
  get<T>(key: string): T | undefined;
}

const STRICT = ['off', 'warning', 'error'];
const LEVELS = ['8', '7', '7.23'];

export function serverSettings(cfg: ConfigLike): ServerSettings {
  const mp = cfg.get<unknown>('modulepath');
  const strict = cfg.get<string>('strict');
  const level = cfg.get<string>('puppetVersion');
  const tasks = cfg.get<unknown>('tasks');
  const xpp = cfg.get<unknown>('xppOnSave');
  const lintOn = cfg.get<unknown>('lint.enabled');
  const rc = cfg.get<unknown>('lint.rcPath');
  const factsFile = cfg.get<unknown>('facts.file');
  const deepOn = cfg.get<unknown>('deepChecks.enabled');
  const settings: ServerSettings = {
    modulepath: Array.isArray(mp) ? mp.filter((p): p is string => typeof p === 'string' && p !== '') : [],
    puppetVersion: (level && LEVELS.includes(level) ? level : '8') as ServerSettings['puppetVersion'],
    tasks: tasks === true,
    xppOnSave: xpp !== false,
  };
  if (strict && STRICT.includes(strict)) {
    settings.strict = strict as ServerSettings['strict'];
  }
  if (typeof lintOn === 'boolean' || (typeof rc === 'string' && rc !== '')) {
    settings.lint = { enabled: lintOn !== false };
    if (typeof rc === 'string' && rc !== '') {
      settings.lint.rcPath = expandPath(rc);
    }
  }
  if (typeof deepOn === 'boolean') {
    settings.deepChecks = { enabled: deepOn };
  }
  if (typeof factsFile === 'string') {
    settings.facts = { file: factsFile === '' ? '' : expandPath(factsFile) };
  }
  return settings;
}

/** The configuration sections the server asks for (it asks for "puppet"). */
export const SERVER_SECTIONS = new Set(['puppet', SECTION, 'puppet-xpp']);

/**
 * Answers a workspace/configuration request: items for the server's sections get our settings (for the
 * item's scope), others keep what VS Code answered (`fallback[i]`).
 */
export function answerConfiguration(
  items: { section?: string; scopeUri?: string }[],
  fallback: unknown[],
  settingsFor: (scopeUri?: string) => ServerSettings,
): unknown[] {
  return items.map((item, i) =>
    item.section !== undefined && !SERVER_SECTIONS.has(item.section) ? fallback[i] : settingsFor(item.scopeUri));
}

/** `~` and `${workspaceFolder}` in a configured path. */
export function expandPath(p: string, workspaceFolder?: string): string {
  let out = p;
  if (workspaceFolder) out = out.split('${workspaceFolder}').join(workspaceFolder);
  if (out === '~' || out.startsWith('~/')) out = path.join(os.homedir(), out.slice(1));
  return out;
}

export interface Launch {
  command: string;
  args: string[];
}

/** How the language server is started. */
export function serverLaunch(cfg: ConfigLike, workspaceFolder?: string): Launch {
  const serverPath = cfg.get<string>('serverPath') || 'puppet-xpp';
  const args = cfg.get<unknown>('serverArgs');
  return {
    command: expandPath(serverPath, workspaceFolder),
    args: Array.isArray(args) ? args.filter((a): a is string => typeof a === 'string') : ['--stdio'],
  };
}

/**
 * `puppet-xpp --compile ENV --puppet-version V [--strict S]` (the environment's own module path is used, as on
 * save; without a `strict` setting the level's default applies, as in the server).
 */
export function compileArgs(envDir: string, settings: ServerSettings): string[] {
  const args = ['--compile', envDir, '--puppet-version', settings.puppetVersion];
  return settings.strict ? [...args, '--strict', settings.strict] : args;
}

export type DumpFormat = 'pn' | 'tree';

/** `puppet-xpp --dump FILE --format pn --pretty` or `--format tree`. */
export function dumpArgs(file: string, format: DumpFormat): string[] {
  return format === 'tree' ? ['--dump', file, '--format', 'tree'] : ['--dump', file, '--format', 'pn', '--pretty'];
}

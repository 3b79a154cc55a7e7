// Finding the puppet-xpp server, checking its version, installing it with pipx, and spotting the incumbent
// Puppet extension. Free of the `vscode` module (the editor's answers are passed in) so that plain node tests
// exercise exactly the code the extension runs.
import * as fs from 'fs';
import * as path from 'path';

import { expandPath, Launch } from './config';

/** The executable's name, as installed by pip/pipx (`[project.scripts]`). */
export const SERVER_NAME = 'puppet-xpp';

/** Where a discovered server came from, in the order they are tried. */
export type ServerSource = 'setting' | 'PATH' | 'python' | 'private';

export interface FoundServer extends Launch {
  source: ServerSource;
}

/** True for a regular file this process may execute. */
export function isExecutable(file: string): boolean {
  try {
    if (!fs.statSync(file).isFile()) return false;
    fs.accessSync(file, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * The file names an executable `name` may have: itself, and on Windows with each PATHEXT extension (pip and
 * pipx install `puppet-xpp.exe` there).
 */
export function executableNames(name: string, platform = process.platform, pathExt = process.env.PATHEXT): string[] {
  if (platform !== 'win32' || path.extname(name) !== '') return [name];
  const exts = (pathExt || '.COM;.EXE;.BAT;.CMD').split(';').filter((e) => e !== '');
  return [name, ...exts.map((e) => name + e.toLowerCase())];
}

/** The first of `names` in `dir` that is executable. */
function firstIn(dir: string, names: string[], exists: (file: string) => boolean): string | undefined {
  for (const n of names) {
    const candidate = path.join(dir, n);
    if (exists(candidate)) return candidate;
  }
  return undefined;
}

/** The first `dir/name` on a PATH-like string that is executable (as a shell's lookup would). */
export function whichOnPath(name: string, pathEnv: string | undefined, exists = isExecutable): string | undefined {
  if (name.includes('/') || name.includes(path.sep)) return exists(name) ? name : undefined;
  for (const dir of (pathEnv ?? '').split(path.delimiter)) {
    if (!dir) continue;
    const hit = firstIn(dir, executableNames(name), exists);
    if (hit) return hit;
  }
  return undefined;
}

export interface DiscoveryInput {
  /** `puppetXpp.serverPath` when the user set it (anywhere: user, workspace, folder), else undefined. */
  configured?: string;
  /** `puppetXpp.serverArgs`. */
  args: string[];
  workspaceFolder?: string;
  /** The PATH the server would be started with. */
  pathEnv: string | undefined;
  /**
   * The Python extension's interpreter for the workspace (absent extension, no interpreter selected:
   * undefined). Only asked when the setting and PATH found nothing.
   */
  pythonInterpreter: () => Promise<string | undefined>;
  /** Does `python -c "import puppet_xpp"` succeed? (the server installed as a module, without the script) */
  pythonHasModule: (python: string) => Promise<boolean>;
  /** The directory the pipx installation of the "Install" command puts its executable in. */
  privateBin: string;
  exists?: (file: string) => boolean;
}

export interface Discovery {
  server?: FoundServer;
  /** Where each source looked, for the message when nothing is found. */
  tried: string[];
}

/**
 * The server: the `serverPath` setting when set (a name is looked up on PATH; a set path that does not exist
 * is reported, and nothing else is tried — the user asked for that one), then `puppet-xpp` on PATH, then the
 * Python extension's interpreter (`puppet-xpp` beside it, or `python -m puppet_xpp`), then the private pipx
 * installation made by the extension's "Install the language server" command.
 */
export async function discoverServer(input: DiscoveryInput): Promise<Discovery> {
  const exists = input.exists ?? isExecutable;
  const tried: string[] = [];
  if (input.configured !== undefined && input.configured !== '') {
    const wanted = expandPath(input.configured, input.workspaceFolder);
    const hit = whichOnPath(wanted, input.pathEnv, exists);
    tried.push(`the setting puppetXpp.serverPath (${wanted})`);
    return { server: hit ? { command: hit, args: input.args, source: 'setting' } : undefined, tried };
  }
  const onPath = whichOnPath(SERVER_NAME, input.pathEnv, exists);
  tried.push(`${SERVER_NAME} on PATH`);
  if (onPath) return { server: { command: onPath, args: input.args, source: 'PATH' }, tried };
  const python = await input.pythonInterpreter();
  if (python) {
    tried.push(`the Python extension's interpreter (${python})`);
    const beside = firstIn(path.dirname(python), executableNames(SERVER_NAME), exists);
    if (beside) return { server: { command: beside, args: input.args, source: 'python' }, tried };
    if (await input.pythonHasModule(python)) {
      return { server: { command: python, args: ['-m', 'puppet_xpp', ...input.args], source: 'python' }, tried };
    }
  } else {
    tried.push("the Python extension's interpreter (none: extension absent or no interpreter selected)");
  }
  tried.push(`the extension's own installation (${path.join(input.privateBin, SERVER_NAME)})`);
  const installed = firstIn(input.privateBin, executableNames(SERVER_NAME), exists);
  if (installed) return { server: { command: installed, args: input.args, source: 'private' }, tried };
  return { tried };
}

/** A command line that runs the server's CLI (`--compile`, `--dump`): the launch without its server args. */
export function cliLaunch(server: FoundServer, cliArgs: string[]): Launch {
  const prefix = server.args[0] === '-m' ? server.args.slice(0, 2) : [];
  return { command: server.command, args: [...prefix, ...cliArgs] };
}

// ---------------------------------------------------------------------------------------------
// The version check

/**
 * The warning to show when the server's `serverInfo.version` is not the extension's version (both come from
 * `puppet_xpp.__version__` in one release), or undefined when they agree. Versions are compared as written,
 * apart from a leading `v` and surrounding blanks.
 */
export function versionWarning(serverVersion: string | undefined, extensionVersion: string, command: string): string | undefined {
  const norm = (v: string) => v.trim().replace(/^v/, '');
  if (serverVersion === undefined || norm(serverVersion) === '') {
    return `Puppet XPP: the language server (${command}) did not report its version; this extension is ` +
      `${extensionVersion}. Install puppet-xpp ${extensionVersion}.`;
  }
  if (norm(serverVersion) === norm(extensionVersion)) return undefined;
  return `Puppet XPP: the language server (${command}) is version ${norm(serverVersion)}, this extension is ` +
    `${norm(extensionVersion)}: settings and features may not match. Install puppet-xpp ${norm(extensionVersion)}.`;
}

// ---------------------------------------------------------------------------------------------
// Installing the server with pipx into the extension's own storage

export interface InstallPlan extends Launch {
  env: Record<string, string>;
  /** Where the executable will be. */
  server: string;
}

export type InstallerLookup = { plan: InstallPlan } | { error: string };

/**
 * How to install puppet-xpp `version` with pipx into `storageDir` (PIPX_HOME and PIPX_BIN_DIR inside it, so the
 * user's own pipx installations and ~/.local/bin are untouched): `pipx` on PATH, else `python3 -m pipx` when that
 * module is importable. Without either, the error says what to install.
 */
export function planInstall(
  storageDir: string,
  version: string,
  pathEnv: string | undefined,
  pythonHasPipx: (python: string) => boolean,
  exists = isExecutable,
): InstallerLookup {
  const env = {
    PIPX_HOME: path.join(storageDir, 'pipx'),
    PIPX_BIN_DIR: path.join(storageDir, 'bin'),
    PIPX_MAN_DIR: path.join(storageDir, 'man'),
  };
  const args = ['install', '--force', `${SERVER_NAME}==${version}`];
  const server = path.join(env.PIPX_BIN_DIR, SERVER_NAME);
  const pipx = whichOnPath('pipx', pathEnv, exists);
  if (pipx) return { plan: { command: pipx, args, env, server } };
  const python = whichOnPath('python3', pathEnv, exists);
  if (!python) {
    return {
      error: 'Puppet XPP: cannot install the language server: neither pipx nor python3 is on PATH. Install ' +
        'Python 3.11 or later and pipx (Debian/Ubuntu: `sudo apt install pipx`; macOS: `brew install pipx`), ' +
        'then run "Puppet XPP: Install the language server" again, or set "puppetXpp.serverPath".',
    };
  }
  if (pythonHasPipx(python)) return { plan: { command: python, args: ['-m', 'pipx', ...args], env, server } };
  return {
    error: `Puppet XPP: cannot install the language server: pipx is not installed (${python} has no pipx module ` +
      'and there is no pipx on PATH). Install pipx (Debian/Ubuntu: `sudo apt install pipx`; elsewhere: ' +
      '`python3 -m pip install --user pipx`), then run "Puppet XPP: Install the language server" again.',
  };
}

// ---------------------------------------------------------------------------------------------
// The incumbent Puppet extension

export const INCUMBENT_ID = 'puppet.puppet-vscode';

/** What we need from a vscode.Extension. */
export interface ExtensionLike {
  isActive: boolean;
  packageJSON: { contributes?: { languages?: { id?: string; extensions?: string[] }[] } };
}

/**
 * The warning when the Puppet extension is active and claims `.pp` or `.epp` files (two servers would then
 * publish diagnostics, completions and formatting for the same documents), or undefined.
 */
export function incumbentWarning(ext: ExtensionLike | undefined): string | undefined {
  if (!ext || !ext.isActive) return undefined;
  const langs = ext.packageJSON.contributes?.languages ?? [];
  const claimed = langs.some((l) => l.id === 'puppet' || l.id === 'epp' ||
    (l.extensions ?? []).some((e) => e === '.pp' || e === '.epp'));
  if (!claimed && langs.length > 0) return undefined;
  return `Puppet XPP: the Puppet extension (${INCUMBENT_ID}) is also active on .pp/.epp files: both language ` +
    'servers will report diagnostics and offer completions and formatting for the same documents. Disable one ' +
    'of them for this workspace (Extensions view → Disable (Workspace)).';
}

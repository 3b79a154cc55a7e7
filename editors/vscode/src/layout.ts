// Where the language server writes the .xpp of a source file (mirrors server/analysis/workspace.py and xpp/compile/layout.py):
//   <env>/.xpp/modules/<module>/<path inside the module, .pp/.epp -> .xpp>
//   <env>/.xpp/modules/environment/<path relative to env>   for files of the environment's own tree.
// An environment is a directory with environment.conf (module path from its `modulepath`, default
// site-modules:modules), or else a directory holding manifests/ and one of site-modules/, site/, modules/
// that is not itself a module (no metadata.json).
import * as fs from 'fs';
import * as path from 'path';

export const XPP_DIR = '.xpp';
export const ENV_MODULE = 'environment';

export interface Environment {
  root: string;
  modulepath: string[];
}

function isFile(p: string): boolean {
  try { return fs.statSync(p).isFile(); } catch { return false; }
}
function isDir(p: string): boolean {
  try { return fs.statSync(p).isDirectory(); } catch { return false; }
}

function parseConf(file: string): Record<string, string> {
  const out: Record<string, string> = {};
  let text = '';
  try { text = fs.readFileSync(file, 'utf8'); } catch { return out; }
  for (let line of text.split('\n')) {
    line = line.trim();
    if (!line || line[0] === '#' || line[0] === ';' || line[0] === '[') continue;
    const eq = line.indexOf('=');
    if (eq < 0) continue;
    out[line.slice(0, eq).trim()] = line.slice(eq + 1).trim().replace(/^"+|"+$/g, '');
  }
  return out;
}

function resolveEntries(root: string, entries: string): string[] {
  const out: string[] = [];
  for (let e of entries.split(path.delimiter)) {
    e = e.trim();
    if (!e || e.startsWith('$')) continue;
    if (e === '~' || e.startsWith('~/')) e = path.join(require('os').homedir(), e.slice(1));
    out.push(path.normalize(path.isAbsolute(e) ? e : path.join(root, e)));
  }
  return out;
}

/** The environment rooted at `dir`, or undefined. */
export function environmentAt(dir: string): Environment | undefined {
  const root = path.resolve(dir);
  const conf = path.join(root, 'environment.conf');
  if (isFile(conf)) {
    const c = parseConf(conf);
    const mp = 'modulepath' in c ? resolveEntries(root, c.modulepath) :
      ['site-modules', 'modules'].map((d) => path.join(root, d));
    return { root, modulepath: mp };
  }
  const mods = ['site-modules', 'site', 'modules'].map((d) => path.join(root, d)).filter(isDir);
  if (isDir(path.join(root, 'manifests')) && mods.length && !isFile(path.join(root, 'metadata.json'))) {
    return { root, modulepath: mods };
  }
  return undefined;
}

/** The environment containing `file` (searching upwards). */
export function findEnvironment(file: string): Environment | undefined {
  let d = path.resolve(file);
  if (!isDir(d)) d = path.dirname(d);
  for (let i = 0; i <= 40; i++) {
    const env = environmentAt(d);
    if (env) return env;
    const parent = path.dirname(d);
    if (parent === d) return undefined;
    d = parent;
  }
  return undefined;
}

function xppName(rel: string): string {
  const ext = path.extname(rel);
  return ext === '.pp' || ext === '.epp' ? rel.slice(0, -ext.length) + '.xpp' : rel + '.xpp';
}

/** The .xpp file of `src` in `env`, or undefined when `src` is outside the environment. */
export function xppTarget(env: Environment, src: string): { outPath: string; module: string } | undefined {
  const root = path.resolve(env.root);
  const file = path.resolve(src);
  const outBase = path.join(root, XPP_DIR, 'modules');
  if (file.startsWith(path.join(root, XPP_DIR) + path.sep)) return undefined;
  for (const d of env.modulepath) {
    const prefix = path.resolve(d).replace(/[\\/]+$/, '') + path.sep;
    if (file.startsWith(prefix)) {
      const parts = file.slice(prefix.length).split(path.sep);
      if (parts.length < 2) continue;
      return { outPath: path.join(outBase, parts[0], xppName(path.join(...parts.slice(1)))), module: parts[0] };
    }
  }
  if (file.startsWith(root + path.sep)) {
    return { outPath: path.join(outBase, ENV_MODULE, xppName(path.relative(root, file))), module: ENV_MODULE };
  }
  return undefined;
}

/** Convenience: the .xpp path of a source file, or undefined when it is not in an environment. */
export function xppPathFor(src: string): string | undefined {
  const env = findEnvironment(src);
  return env ? xppTarget(env, src)?.outPath : undefined;
}

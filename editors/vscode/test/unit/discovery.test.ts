// The server-discovery order, the version check, the pipx installation plan and the incumbent-extension
// warning, on real files (executables made in a scratch directory).
import { strict as assert } from 'assert';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { test } from 'node:test';

import {
  cliLaunch, discoverServer, DiscoveryInput, executableNames, incumbentWarning, planInstall, versionWarning,
  whichOnPath,
} from '../../src/discovery';

function scratch(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'puppet-xpp-discovery-'));
}

function executable(file: string, mode = 0o755): string {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, '#!/bin/sh\nexit 0\n');
  fs.chmodSync(file, mode);
  return file;
}

/** A world with a PATH directory, a Python venv (bin/python) and the extension's private bin directory. */
function world(): { dir: string; pathDir: string; venvBin: string; privateBin: string; base: DiscoveryInput; asked: string[] } {
  const dir = scratch();
  const pathDir = path.join(dir, 'path');
  const venvBin = path.join(dir, 'venv', 'bin');
  const privateBin = path.join(dir, 'storage', 'bin');
  fs.mkdirSync(pathDir, { recursive: true });
  executable(path.join(venvBin, 'python'));
  const asked: string[] = [];
  const base: DiscoveryInput = {
    args: ['--stdio'],
    pathEnv: [path.join(dir, 'missing'), pathDir].join(path.delimiter),
    pythonInterpreter: async () => { asked.push('python'); return path.join(venvBin, 'python'); },
    pythonHasModule: async () => { asked.push('module'); return false; },
    privateBin,
    workspaceFolder: dir,
  };
  return { dir, pathDir, venvBin, privateBin, base, asked };
}

test('discovery: the setting comes first, and a set path that is missing is not replaced by another', async () => {
  const w = world();
  executable(path.join(w.pathDir, 'puppet-xpp'));
  const mine = executable(path.join(w.dir, 'tools', 'puppet-xpp'));
  let found = await discoverServer({ ...w.base, configured: '${workspaceFolder}/tools/puppet-xpp' });
  assert.deepEqual(found.server, { command: mine, args: ['--stdio'], source: 'setting' });
  // a name in the setting is looked up on PATH
  executable(path.join(w.pathDir, 'my-xpp'));
  found = await discoverServer({ ...w.base, configured: 'my-xpp' });
  assert.deepEqual(found.server, { command: path.join(w.pathDir, 'my-xpp'), args: ['--stdio'], source: 'setting' });
  found = await discoverServer({ ...w.base, configured: path.join(w.dir, 'nope', 'puppet-xpp') });
  assert.equal(found.server, undefined);
  assert.match(found.tried.join(), /puppetXpp\.serverPath \(.*nope\/puppet-xpp\)/);
  assert.deepEqual(w.asked, [], 'the Python extension is not asked when the setting decides');
});

test('discovery: PATH before the Python extension; a file that is not executable does not count', async () => {
  const w = world();
  executable(path.join(w.pathDir, 'puppet-xpp'), 0o644);
  executable(path.join(w.venvBin, 'puppet-xpp'));
  let found = await discoverServer(w.base);
  assert.equal(found.server?.source, 'python');
  executable(path.join(w.pathDir, 'puppet-xpp'));
  found = await discoverServer({ ...w.base, configured: '' });
  assert.deepEqual(found.server, { command: path.join(w.pathDir, 'puppet-xpp'), args: ['--stdio'], source: 'PATH' });
});

test('discovery: the Python interpreter: the script beside it, else python -m puppet_xpp when importable', async () => {
  const w = world();
  executable(path.join(w.privateBin, 'puppet-xpp'));
  executable(path.join(w.venvBin, 'puppet-xpp'));
  let found = await discoverServer(w.base);
  assert.deepEqual(found.server, { command: path.join(w.venvBin, 'puppet-xpp'), args: ['--stdio'], source: 'python' });
  fs.rmSync(path.join(w.venvBin, 'puppet-xpp'));
  found = await discoverServer({ ...w.base, pythonHasModule: async () => true });
  assert.deepEqual(found.server,
    { command: path.join(w.venvBin, 'python'), args: ['-m', 'puppet_xpp', '--stdio'], source: 'python' });
  // the CLI through that interpreter keeps `-m puppet_xpp` and drops the server arguments
  assert.deepEqual(cliLaunch(found.server!, ['--dump', 'x.xpp']),
    { command: path.join(w.venvBin, 'python'), args: ['-m', 'puppet_xpp', '--dump', 'x.xpp'] });
  assert.deepEqual(cliLaunch({ command: '/b/puppet-xpp', args: ['--stdio'], source: 'PATH' }, ['--compile', '/e']),
    { command: '/b/puppet-xpp', args: ['--compile', '/e'] });
});

test('discovery: the private pipx installation last; nothing found lists every place looked at', async () => {
  const w = world();
  let found = await discoverServer({ ...w.base, pythonInterpreter: async () => undefined });
  assert.equal(found.server, undefined);
  assert.equal(found.tried.length, 3);
  assert.match(found.tried.join('\n'), /puppet-xpp on PATH\n.*Python extension.*none.*\n.*storage\/bin\/puppet-xpp/);
  executable(path.join(w.privateBin, 'puppet-xpp'));
  found = await discoverServer(w.base);
  assert.deepEqual(found.server, { command: path.join(w.privateBin, 'puppet-xpp'), args: ['--stdio'], source: 'private' });
  assert.deepEqual(w.asked, ['python', 'module']);
});

test('which: the first executable on PATH, empty entries skipped', () => {
  const w = world();
  const second = path.join(w.dir, 'second');
  executable(path.join(second, 'tool'));
  executable(path.join(w.pathDir, 'tool'));
  assert.equal(whichOnPath('tool', `${path.delimiter}${w.pathDir}${path.delimiter}${second}`), path.join(w.pathDir, 'tool'));
  assert.equal(whichOnPath('absent', w.pathDir), undefined);
  assert.equal(whichOnPath('tool', undefined), undefined);
  // Windows: the names PATHEXT gives (pipx installs puppet-xpp.exe there)
  assert.deepEqual(executableNames('puppet-xpp', 'win32', '.EXE;.CMD'), ['puppet-xpp', 'puppet-xpp.exe', 'puppet-xpp.cmd']);
  assert.deepEqual(executableNames('puppet-xpp', 'linux', '.EXE'), ['puppet-xpp']);
  assert.deepEqual(executableNames('python.exe', 'win32', '.EXE'), ['python.exe']);
});

test('version check: equal versions pass, a different or missing one warns with both', () => {
  assert.equal(versionWarning('0.2.0', '0.2.0', 'puppet-xpp'), undefined);
  assert.equal(versionWarning(' v0.2.0 ', '0.2.0', 'puppet-xpp'), undefined);
  const older = versionWarning('0.1.0', '0.2.0', '/usr/bin/puppet-xpp');
  assert.ok(older && older.includes('0.1.0') && older.includes('0.2.0') && older.includes('/usr/bin/puppet-xpp'), older);
  assert.ok(versionWarning('0.2.0.dev1', '0.2.0', 'x'));
  assert.match(versionWarning(undefined, '0.2.0', 'x') ?? '', /did not report its version/);
  assert.match(versionWarning('', '0.2.0', 'x') ?? '', /did not report its version/);
});

test('install plan: pipx on PATH, else python3 -m pipx, into the extension storage; clear errors without them', () => {
  const w = world();
  const storage = path.join(w.dir, 'storage');
  // neither pipx nor python3
  let r = planInstall(storage, '0.2.0', w.pathDir, () => true);
  assert.ok('error' in r && /neither pipx nor python3/.test(r.error), JSON.stringify(r));
  // python3 without the pipx module
  executable(path.join(w.pathDir, 'python3'));
  r = planInstall(storage, '0.2.0', w.pathDir, () => false);
  assert.ok('error' in r && /pipx is not installed/.test(r.error) && r.error.includes(path.join(w.pathDir, 'python3')));
  r = planInstall(storage, '0.2.0', w.pathDir, (python) => python === path.join(w.pathDir, 'python3'));
  assert.ok('plan' in r);
  assert.deepEqual([r.plan.command, r.plan.args],
    [path.join(w.pathDir, 'python3'), ['-m', 'pipx', 'install', '--force', 'puppet-xpp==0.2.0']]);
  executable(path.join(w.pathDir, 'pipx'));
  r = planInstall(storage, '0.2.0', w.pathDir, () => false);
  assert.ok('plan' in r);
  assert.deepEqual([r.plan.command, r.plan.args], [path.join(w.pathDir, 'pipx'), ['install', '--force', 'puppet-xpp==0.2.0']]);
  assert.deepEqual(r.plan.env, {
    PIPX_HOME: path.join(storage, 'pipx'), PIPX_BIN_DIR: path.join(storage, 'bin'), PIPX_MAN_DIR: path.join(storage, 'man'),
  });
  assert.equal(r.plan.server, path.join(storage, 'bin', 'puppet-xpp'));
});

test('incumbent: a warning only when puppet.puppet-vscode is active on Puppet files', () => {
  const puppetVscode = { contributes: { languages: [{ id: 'puppet', extensions: ['.pp'] }] } };
  assert.equal(incumbentWarning(undefined), undefined);
  assert.equal(incumbentWarning({ isActive: false, packageJSON: puppetVscode }), undefined);
  assert.match(incumbentWarning({ isActive: true, packageJSON: puppetVscode }) ?? '', /puppet\.puppet-vscode.*active/);
  assert.equal(incumbentWarning({ isActive: true, packageJSON: { contributes: { languages: [{ id: 'ruby' }] } } }), undefined);
});

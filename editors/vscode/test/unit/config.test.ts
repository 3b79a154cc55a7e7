import { strict as assert } from 'assert';
import * as os from 'os';
import * as path from 'path';
import { test } from 'node:test';

import {
  answerConfiguration, compileArgs, dumpArgs, expandPath, serverLaunch, serverSettings,
} from '../../src/config';

const cfg = (values: Record<string, unknown>) => ({ get: <T>(k: string) => values[k] as T | undefined });

test('server settings: defaults match the server defaults', () => {
  assert.deepEqual(serverSettings(cfg({})), { modulepath: [], puppetVersion: '8', tasks: false, xppOnSave: true });
  assert.equal(serverSettings(cfg({ strict: 'default' })).strict, undefined);
  assert.equal(serverSettings(cfg({ puppetVersion: '7.23' })).puppetVersion, '7.23');
  assert.equal(serverSettings(cfg({ puppetVersion: '6' })).puppetVersion, '8');
});

test('server settings: values are passed through, bad ones fall back', () => {
  assert.deepEqual(
    serverSettings(cfg({ modulepath: ['/a', 3, '', 'b'], strict: 'error', tasks: true, xppOnSave: false })),
    { modulepath: ['/a', 'b'], puppetVersion: '8', strict: 'error', tasks: true, xppOnSave: false });
  assert.equal(serverSettings(cfg({ strict: 'loud' })).strict, undefined);
  assert.equal(serverSettings(cfg({ tasks: 'yes' })).tasks, false);
  // lint is on unless turned off (the server's default is on too)
  assert.deepEqual(serverSettings(cfg({ 'lint.enabled': false })).lint, { enabled: false });
  assert.deepEqual(serverSettings(cfg({ 'lint.enabled': true })).lint, { enabled: true });
  assert.deepEqual(serverSettings(cfg({ 'lint.rcPath': '/x/.puppet-lint.rc' })).lint,
    { enabled: true, rcPath: '/x/.puppet-lint.rc' });
  // the deep checks: sent only when set (the server's default is on)
  assert.deepEqual(serverSettings(cfg({ 'deepChecks.enabled': false })).deepChecks, { enabled: false });
  assert.deepEqual(serverSettings(cfg({ 'deepChecks.enabled': true })).deepChecks, { enabled: true });
  assert.equal(serverSettings(cfg({})).deepChecks, undefined);
});

test('launch: default is puppet-xpp --stdio, paths are expanded', () => {
  assert.deepEqual(serverLaunch(cfg({})), { command: 'puppet-xpp', args: ['--stdio'] });
  assert.deepEqual(serverLaunch(cfg({ serverPath: '${workspaceFolder}/venv/bin/puppet-xpp', serverArgs: [] }), '/w'),
    { command: '/w/venv/bin/puppet-xpp', args: [] });
  assert.equal(expandPath('~/bin/x'), path.join(os.homedir(), 'bin/x'));
});

test('command lines', () => {
  assert.deepEqual(
    compileArgs('/env', { modulepath: ['/m1'], puppetVersion: '7.23', strict: 'error', tasks: false, xppOnSave: true }),
    ['--compile', '/env', '--puppet-version', '7.23', '--strict', 'error']);
  assert.deepEqual(compileArgs('/env', { modulepath: [], puppetVersion: '8', tasks: false, xppOnSave: true }),
    ['--compile', '/env', '--puppet-version', '8']);
  assert.deepEqual(dumpArgs('/e/.xpp/modules/m/manifests/init.xpp', 'pn'),
    ['--dump', '/e/.xpp/modules/m/manifests/init.xpp', '--format', 'pn', '--pretty']);
  assert.deepEqual(dumpArgs('/x.xpp', 'tree'), ['--dump', '/x.xpp', '--format', 'tree']);
});

test('workspace/configuration: the server sections get our settings, others what VS Code had', () => {
  const ours = { modulepath: [], puppetVersion: '8' as const, strict: 'error' as const, tasks: false, xppOnSave: true };
  const seen: (string | undefined)[] = [];
  const out = answerConfiguration(
    [{ section: 'puppet', scopeUri: 'file:///e' }, { section: 'editor' }, {}, { section: 'puppetXpp' }],
    ['a', 'b', 'c', 'd'],
    (scope) => { seen.push(scope); return ours; });
  assert.deepEqual(out, [ours, 'b', ours, ours]);
  assert.deepEqual(seen, ['file:///e', undefined, undefined]);
});

test('server settings: the facts file is passed as the server reads it (facts.file)', () => {
  assert.equal(serverSettings(cfg({})).facts, undefined);
  assert.deepEqual(serverSettings(cfg({ 'facts.file': '' })).facts, { file: '' });
  assert.deepEqual(serverSettings(cfg({ 'facts.file': '/srv/facts/node.json' })).facts, { file: '/srv/facts/node.json' });
  assert.deepEqual(serverSettings(cfg({ 'facts.file': '~/facts.yaml' })).facts,
    { file: path.join(os.homedir(), 'facts.yaml') });
});

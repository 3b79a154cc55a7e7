import { strict as assert } from 'assert';
import * as fs from 'fs';
import * as path from 'path';
import { test } from 'node:test';

// the language configurations are read by VS Code with JavaScript regexes
const root = path.join(__dirname, '..', '..', '..');
const read = (f: string) => JSON.parse(fs.readFileSync(path.join(root, f), 'utf8'));

test('puppet language configuration: indentation rules', () => {
  const c = read('language-configuration.json');
  const inc = new RegExp(c.indentationRules.increaseIndentPattern);
  const dec = new RegExp(c.indentationRules.decreaseIndentPattern);
  for (const l of ['class foo {', "file { '/x':", '  $a = [', 'notice(', "  ensure => $x ? {  # comment"]) {
    assert.ok(inc.test(l), l);
  }
  for (const l of ['# a comment {', "$a = 'x'", '}', '$h = { a => 1 }', '  # {', '$x = "a # b {"']) {
    assert.ok(!inc.test(l), l);
  }
  for (const l of ['}', '  ]', ')', '  } else {']) assert.ok(dec.test(l), l);
  assert.ok(!dec.test('$x = 1'));
  assert.deepEqual(c.comments, { lineComment: '#', blockComment: ['/*', '*/'] });
  const start = new RegExp(c.folding.markers.start);
  const end = new RegExp(c.folding.markers.end);
  assert.ok(start.test('  #region setup') && end.test('#endregion') && !start.test('# regions'));
});

test('word patterns keep $ and :: with the name', () => {
  for (const f of ['language-configuration.json', 'epp-language-configuration.json']) {
    const w = new RegExp(read(f).wordPattern, 'g');
    assert.deepEqual('$facts[\'os\'] + $::fqdn + apache::vhost + -1.5'.match(w),
      ['$facts', 'os', '$::fqdn', 'apache::vhost', '-1.5'], f);
  }
});

test('every command, grammar and configuration file of package.json exists', () => {
  const pkg = read('package.json');
  const src = path.join(root, 'src');
  const ext = fs.readdirSync(src).filter((f) => f.endsWith('.ts')).map((f) => fs.readFileSync(path.join(src, f), 'utf8')).join('\n');
  const registered = [...ext.matchAll(/registerCommand\('([^']+)'/g)].map((m) => m[1]).sort();
  assert.deepEqual(pkg.contributes.commands.map((c: { command: string }) => c.command).sort(), registered);
  for (const g of pkg.contributes.grammars) {
    assert.equal(read(g.path).scopeName, g.scopeName);
  }
  for (const l of pkg.contributes.languages) read(l.configuration);
  const props = Object.keys(pkg.contributes.configuration.properties).sort();
  assert.deepEqual(props, ['puppetXpp.deepChecks.enabled', 'puppetXpp.dumpFormat', 'puppetXpp.facts.file', 'puppetXpp.lint.enabled', 'puppetXpp.lint.rcPath',
    'puppetXpp.modulepath', 'puppetXpp.puppetVersion',
    'puppetXpp.serverArgs', 'puppetXpp.serverPath', 'puppetXpp.strict', 'puppetXpp.tasks', 'puppetXpp.trace.server', 'puppetXpp.xppOnSave']);
});

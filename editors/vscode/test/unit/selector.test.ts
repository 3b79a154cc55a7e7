import { strict as assert } from 'assert';
import { test } from 'node:test';
// (a dependency of vscode-languageclient; VS Code matches a filter's pattern against the file's path with its
// own glob, whose `**` and `*` are minimatch's for these patterns)
import { minimatch } from 'minimatch';

import { DOCUMENT_SELECTOR } from '../../src/config';

/** Whether VS Code hands the document to the client: some filter of the selector takes its scheme, language
 * and (when the filter has one) path. */
function served(scheme: string, language: string, fsPath: string): boolean {
  return DOCUMENT_SELECTOR.some((f) => f.scheme === scheme && f.language === language &&
    (f.pattern === undefined || minimatch(fsPath, f.pattern, { dot: true })));
}

const ENV = '/srv/code/environments/production';

test('selector: Hiera files of an environment or module are sent to the server', () => {
  for (const [language, file] of [
    ['yaml', `${ENV}/hiera.yaml`],
    ['yaml', `${ENV}/data/common.yaml`],
    ['yaml', `${ENV}/data/nodes/web01.example.com.yaml`],
    ['yaml', `${ENV}/data/os/Debian.yml`],
    ['json', `${ENV}/data/common.json`],
    ['yaml', `${ENV}/modules/app/hiera.yaml`],
    ['yaml', `${ENV}/modules/app/data/common.yaml`],
  ]) {
    assert.ok(served('file', language, file), `${language} ${file}`);
  }
});

test('selector: other YAML and JSON is not', () => {
  for (const [scheme, language, file] of [
    ['file', 'yaml', `${ENV}/.github/workflows/ci.yaml`],
    ['file', 'yaml', '/home/user/project/docker-compose.yml'],
    ['file', 'yaml', `${ENV}/.gitlab-ci.yml`],
    ['file', 'json', `${ENV}/package.json`],
    ['file', 'json', `${ENV}/modules/app/tasks/run.json`],
    ['untitled', 'yaml', 'Untitled-1'],
  ]) {
    assert.ok(!served(scheme, language, file), `${scheme} ${language} ${file}`);
  }
});

test('selector: the Puppet documents are kept', () => {
  assert.ok(served('file', 'puppet', `${ENV}/manifests/site.pp`));
  assert.ok(served('file', 'epp', `${ENV}/modules/app/templates/a.epp`));
  assert.ok(served('file', 'puppetfile', `${ENV}/Puppetfile`));
  assert.ok(served('file', 'json', `${ENV}/modules/app/metadata.json`));
  assert.ok(served('untitled', 'puppet', 'Untitled-1'));
});

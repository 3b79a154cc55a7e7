import { strict as assert } from 'assert';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { test } from 'node:test';

import { findEnvironment, xppPathFor } from '../../src/layout';

function tree(files: Record<string, string>): string {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'pxpp-layout-'));
  for (const [rel, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
    fs.writeFileSync(path.join(root, rel), text);
  }
  return root;
}

test('environment.conf environment: modules, own manifests, templates', () => {
  const r = tree({
    'env/environment.conf': 'modulepath = site:modules:$basemodulepath\n',
    'env/site/role/manifests/web.pp': '',
    'env/modules/ntp/templates/ntp.conf.epp': '',
    'env/manifests/site.pp': '',
  });
  const env = path.join(r, 'env');
  assert.deepEqual(findEnvironment(path.join(env, 'manifests/site.pp'))?.modulepath,
    [path.join(env, 'site'), path.join(env, 'modules')]);
  assert.equal(xppPathFor(path.join(env, 'site/role/manifests/web.pp')),
    path.join(env, '.xpp/modules/role/manifests/web.xpp'));
  assert.equal(xppPathFor(path.join(env, 'modules/ntp/templates/ntp.conf.epp')),
    path.join(env, '.xpp/modules/ntp/templates/ntp.conf.xpp'));
  assert.equal(xppPathFor(path.join(env, 'manifests/site.pp')),
    path.join(env, '.xpp/modules/environment/manifests/site.xpp'));
});

test('control repository without environment.conf; a module alone is no environment', () => {
  const r = tree({
    'repo/manifests/site.pp': '',
    'repo/site-modules/profile/manifests/base.pp': '',
    'lonely/metadata.json': '{}',
    'lonely/manifests/init.pp': '',
  });
  assert.equal(xppPathFor(path.join(r, 'repo/site-modules/profile/manifests/base.pp')),
    path.join(r, 'repo/.xpp/modules/profile/manifests/base.xpp'));
  assert.equal(xppPathFor(path.join(r, 'lonely/manifests/init.pp')), undefined);
});

test('files inside the .xpp tree have no target', () => {
  const r = tree({ 'e/environment.conf': '', 'e/.xpp/modules/environment/manifests/a.pp': '' });
  assert.equal(xppPathFor(path.join(r, 'e/.xpp/modules/environment/manifests/a.pp')), undefined);
});

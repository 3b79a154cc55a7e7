import { strict as assert } from 'assert';
import { test } from 'node:test';

import { fixedText, resourceText, versionStatus } from '../../src/messages';
import { graphDot, graphParts, graphSvg, layers, layoutGraph, nodeGraphHtml } from '../../src/nodegraph';

// the shape puppet-editor-services sends: edges name their ends by vertex label
const graph = {
  vertices: [{ label: 'Class[Main]' }, { label: 'Package[ntp]' }, { label: 'File[/etc/ntp.conf]' }, { label: 'Service[ntp]' }],
  edges: [
    { source: 'Package[ntp]', target: 'File[/etc/ntp.conf]' },
    { source: 'File[/etc/ntp.conf]', target: 'Service[ntp]' },
    { source: 'Package[ntp]', target: 'Service[ntp]' },
  ],
  error: '',
};

test('node graph: layers follow the longest path, cycles do not loop', () => {
  const { labels, edges } = graphParts(graph);
  const l = layers(labels, edges);
  assert.deepEqual(Object.fromEntries(l), {
    'Class[Main]': 0, 'Package[ntp]': 0, 'File[/etc/ntp.conf]': 1, 'Service[ntp]': 2,
  });
  const cyc = layers(['a', 'b', 'c'], [{ source: 'a', target: 'b' }, { source: 'b', target: 'c' }, { source: 'c', target: 'a' }]);
  assert.deepEqual([...cyc.keys()].sort(), ['a', 'b', 'c']);
  // an edge's unknown end becomes a vertex; a repeated edge is drawn once; a malformed one is dropped
  const parts = graphParts({ vertices: [{ label: 'a' }], edges: [{ source: 'a', target: 'z' }, { source: 'a', target: 'z' },
    { source: 'a' } as never] });
  assert.deepEqual(parts, { labels: ['a', 'z'], edges: [{ source: 'a', target: 'z' }] });
});

test('node graph: every box is placed, rows do not overlap, edges point down', () => {
  const lay = layoutGraph(graph);
  assert.equal(lay.nodes.length, 4);
  const by = new Map(lay.nodes.map((n) => [n.label, n]));
  for (const e of lay.edges) assert.ok(by.get(e.source)!.y < by.get(e.target)!.y, JSON.stringify(e));
  for (const a of lay.nodes) {
    assert.ok(a.x >= 0 && a.x + a.width <= lay.width && a.y >= 0 && a.y <= lay.height, JSON.stringify(a));
    for (const b of lay.nodes) {
      if (a !== b && a.y === b.y) assert.ok(a.x + a.width <= b.x || b.x + b.width <= a.x, `${a.label} ${b.label}`);
    }
  }
});

test('node graph: SVG and DOT name every vertex and edge, escaped', () => {
  const odd = { vertices: [{ label: 'File[/tmp/a "b" <c> & d\\e]' }, { label: 'Notify[x]' }],
    edges: [{ source: 'Notify[x]', target: 'File[/tmp/a "b" <c> & d\\e]' }] };
  const svg = graphSvg(odd);
  assert.equal((svg.match(/<g class="vertex"/g) ?? []).length, 2);
  assert.equal((svg.match(/<line class="edge"/g) ?? []).length, 1);
  assert.ok(svg.includes('File[/tmp/a &quot;b&quot; &lt;c&gt; &amp; d\\e]'), svg);
  assert.ok(!svg.includes('<c>'));
  assert.equal(graphDot(odd, 'site.pp'), [
    'digraph "site.pp" {',
    '  node [shape=box];',
    '  "File[/tmp/a \\"b\\" <c> & d\\\\e]";',
    '  "Notify[x]";',
    '  "Notify[x]" -> "File[/tmp/a \\"b\\" <c> & d\\\\e]";',
    '}',
    '',
  ].join('\n'));
});

test('node graph page: no script, nothing loaded, the error shown', () => {
  const html = nodeGraphHtml(graph, "Node Graph 'site.pp'");
  assert.ok(html.includes("default-src 'none'") && !/<script/i.test(html) && !/https?:\/\/(?!www\.w3\.org)/.test(html));
  assert.ok(html.includes('<svg') && html.includes('digraph'));
  const failed = nodeGraphHtml({ error: 'Evaluation Error: <oops>' }, 't');
  assert.ok(failed.includes('Evaluation Error: &lt;oops&gt;') && !failed.includes('<svg'));
});

test('puppet-vscode answers: resource text, fixes, version', () => {
  assert.deepEqual(resourceText({ data: "user { 'root':\n}", error: '' }, 'user'), { text: "user { 'root':\n}\n" });
  assert.deepEqual(resourceText({ data: '', error: 'no such type' }, 'usr'), { error: 'no such type' });
  assert.ok(resourceText(undefined, 'user').error);
  assert.equal(fixedText({ fixesApplied: 2, newContent: 'x\n' }), 'x\n');
  assert.equal(fixedText({ fixesApplied: 0, newContent: 'x\n' }), undefined);
  assert.equal(fixedText(null), undefined);
  const v = versionStatus({ puppetVersion: '7.23.0', facterVersion: '4.3.0', languageServerVersion: '0.2.0',
    factsLoaded: true, functionsLoaded: false, typesLoaded: true, classesLoaded: true });
  assert.equal(v.text, '$(terminal) Puppet 7.23.0');
  assert.ok(v.tooltip.includes('Facter 4.3.0') && v.tooltip.includes('still loading: functions'), v.tooltip);
});

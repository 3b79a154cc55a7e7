// The node graph of `puppet/compileNodeGraph` drawn without any network or script: a layered layout (each
// resource one row below the last resource it depends on) rendered as SVG inside a static webview page, and the
// same graph as Graphviz DOT text. puppet-vscode loads cytoscape.js into its webview for this; a catalog graph is
// small (tens to a few hundred resources), so a plain layered drawing needs no library and no scripts, and the
// webview can run with scripts disabled and a Content-Security-Policy that allows nothing but inline styles.
import type { NodeGraph } from './messages';

export interface Placed {
  label: string;
  layer: number;
  x: number;
  y: number;
  width: number;
}

export interface Layout {
  nodes: Placed[];
  edges: { source: string; target: string }[];
  width: number;
  height: number;
}

const CHAR_W = 7.5;
const BOX_H = 28;
const GAP_X = 24;
const GAP_Y = 56;
const MARGIN = 16;

/** The vertex labels (first appearance order, edges' ends included) and the edges between them, each once. */
export function graphParts(graph: NodeGraph): { labels: string[]; edges: { source: string; target: string }[] } {
  const labels: string[] = [];
  const seen = new Set<string>();
  const add = (l: string) => {
    if (!seen.has(l)) { seen.add(l); labels.push(l); }
  };
  for (const v of graph.vertices ?? []) if (typeof v?.label === 'string') add(v.label);
  const edges: { source: string; target: string }[] = [];
  const seenEdges = new Set<string>();
  for (const e of graph.edges ?? []) {
    if (typeof e?.source !== 'string' || typeof e?.target !== 'string') continue;
    const key = JSON.stringify([e.source, e.target]);
    if (seenEdges.has(key)) continue;
    seenEdges.add(key);
    add(e.source);
    add(e.target);
    edges.push({ source: e.source, target: e.target });
  }
  return { labels, edges };
}

/**
 * Layers by longest path from the roots (a node sits one layer below every predecessor). The edges that close
 * a cycle are ignored for the layering (a catalog with a cycle is an error in Puppet, but the graph should
 * still be drawable to show it).
 */
export function layers(labels: string[], edges: { source: string; target: string }[]): Map<string, number> {
  const preds = new Map<string, string[]>(labels.map((l) => [l, []]));
  for (const e of edges) preds.get(e.target)?.push(e.source);
  const layer = new Map<string, number>();
  const visiting = new Set<string>();
  const depth = (label: string): number => {
    const known = layer.get(label);
    if (known !== undefined) return known;
    if (visiting.has(label)) return -1; // a back edge of a cycle
    visiting.add(label);
    let d = 0;
    for (const p of preds.get(label) ?? []) d = Math.max(d, depth(p) + 1);
    visiting.delete(label);
    layer.set(label, d);
    return d;
  };
  for (const l of labels) depth(l);
  return layer;
}

/** Positions for every vertex: one row per layer, boxes as wide as their labels, rows centred. */
export function layoutGraph(graph: NodeGraph): Layout {
  const { labels, edges } = graphParts(graph);
  const layerOf = layers(labels, edges);
  const rows: string[][] = [];
  for (const l of labels) {
    const i = layerOf.get(l) ?? 0;
    while (rows.length <= i) rows.push([]);
    rows[i].push(l);
  }
  const boxWidth = (l: string) => Math.max(60, Math.ceil(l.length * CHAR_W) + 20);
  const rowWidth = (row: string[]) => row.reduce((w, l) => w + boxWidth(l), 0) + GAP_X * Math.max(0, row.length - 1);
  const width = Math.max(120, ...rows.map(rowWidth)) + 2 * MARGIN;
  const nodes: Placed[] = [];
  rows.forEach((row, i) => {
    let x = (width - rowWidth(row)) / 2;
    for (const l of row) {
      const w = boxWidth(l);
      nodes.push({ label: l, layer: i, x, y: MARGIN + i * (BOX_H + GAP_Y), width: w });
      x += w + GAP_X;
    }
  });
  const height = rows.length * (BOX_H + GAP_Y) - GAP_Y + 2 * MARGIN;
  return { nodes, edges, width, height: Math.max(height, 2 * MARGIN) };
}

function xml(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/** The graph as an SVG document: a box per vertex, an arrow per edge (source to target). */
export function graphSvg(graph: NodeGraph): string {
  const lay = layoutGraph(graph);
  const at = new Map(lay.nodes.map((n) => [n.label, n]));
  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${lay.width}" height="${lay.height}" ` +
      `viewBox="0 0 ${lay.width} ${lay.height}" role="img">`,
    '<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="8" markerHeight="8" ' +
      'orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z" class="arrowhead"/></marker></defs>',
  ];
  for (const e of lay.edges) {
    const s = at.get(e.source)!;
    const t = at.get(e.target)!;
    const x1 = s.x + s.width / 2;
    const x2 = t.x + t.width / 2;
    const down = t.layer > s.layer;
    const y1 = down ? s.y + BOX_H : s.y;
    const y2 = down ? t.y : t.y + BOX_H;
    out.push(`<line class="edge" data-source="${xml(e.source)}" data-target="${xml(e.target)}" ` +
      `x1="${x1}" y1="${y1}" x2="${x2}" y2="${y2}" marker-end="url(#arrow)"/>`);
  }
  for (const n of lay.nodes) {
    out.push(`<g class="vertex" data-label="${xml(n.label)}"><rect x="${n.x}" y="${n.y}" width="${n.width}" ` +
      `height="${BOX_H}" rx="6"/><text x="${n.x + n.width / 2}" y="${n.y + BOX_H / 2}">${xml(n.label)}</text></g>`);
  }
  out.push('</svg>');
  return out.join('\n');
}

function dotId(s: string): string {
  return `"${s.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')}"`;
}

/** The graph as Graphviz DOT (`dot -Tsvg` draws it): every vertex, then every edge. */
export function graphDot(graph: NodeGraph, name = 'node graph'): string {
  const { labels, edges } = graphParts(graph);
  const lines = [`digraph ${dotId(name)} {`, '  node [shape=box];'];
  for (const l of labels) lines.push(`  ${dotId(l)};`);
  for (const e of edges) lines.push(`  ${dotId(e.source)} -> ${dotId(e.target)};`);
  lines.push('}');
  return lines.join('\n') + '\n';
}

/**
 * The webview page: the SVG drawing, or the error, and the DOT text below it. No script, nothing loaded: the
 * Content-Security-Policy allows inline styles only. Colours come from the editor theme's CSS variables.
 */
export function nodeGraphHtml(graph: NodeGraph, title: string): string {
  const body = graph.error
    ? `<p class="error">${xml(graph.error)}</p>`
    : (graph.vertices ?? []).length === 0
      ? '<p>The catalog has no resources.</p>'
      : graphSvg(graph);
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline';">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<title>${xml(title)}</title>
<style>
body { color: var(--vscode-foreground); font-family: var(--vscode-font-family); }
.vertex rect { fill: var(--vscode-button-background, #0e639c); }
.vertex text { fill: var(--vscode-button-foreground, #fff); font-size: 12px; text-anchor: middle; dominant-baseline: central; }
.edge { stroke: var(--vscode-foreground, #888); stroke-width: 1.5; }
.arrowhead { fill: var(--vscode-foreground, #888); }
.error { color: var(--vscode-errorForeground, #f44); white-space: pre-wrap; }
pre { white-space: pre-wrap; }
</style>
</head>
<body>
<h3>${xml(title)}</h3>
${body}
<details><summary>DOT</summary><pre>${xml(graphDot(graph, title))}</pre></details>
</body>
</html>
`;
}

// The custom requests puppet-vscode sends to puppet-editor-services, which our server answers under the same
// names and shapes (issue 29). The names and fields are the incumbent's (puppet-vscode's src/messages.ts,
// src/views/facts.ts and src/feature/*.ts): a client written for one server works with the other. Kept free of
// `vscode`, so that the unit tests load it with plain node.

export const GET_VERSION = 'puppet/getVersion';
export const GET_FACTS = 'puppet/getFacts';
export const GET_RESOURCE = 'puppet/getResource';
export const COMPILE_NODE_GRAPH = 'puppet/compileNodeGraph';
export const FIX_DIAGNOSTIC_ERRORS = 'puppet/fixDiagnosticErrors';
export const PUPPETFILE_DEPENDENCIES = 'puppetfile/getDependencies';

/** `puppet/getVersion` (no parameters). */
export interface VersionDetails {
  puppetVersion: string;
  facterVersion: string;
  languageServerVersion: string;
  factsLoaded: boolean;
  functionsLoaded: boolean;
  typesLoaded: boolean;
  classesLoaded: boolean;
}

/** `puppet/getFacts` (no parameters): `facts` is facter's hash, `error` set when it could not be had. */
export interface FactsResponse {
  facts?: Record<string, unknown>;
  error?: string;
}

/** `puppet/getResource`: the text `puppet resource <typename> [<title>]` prints, or an error. */
export interface ResourceParams {
  typename: string;
  title?: string;
}
export interface ResourceResponse {
  data?: string;
  error?: string;
}

/** `puppet/compileNodeGraph` {external: the document's URI}: edges name their ends by vertex label. */
export interface NodeGraphParams {
  external: string;
}
export interface NodeGraph {
  vertices?: { label: string }[];
  edges?: { source: string; target: string }[];
  error?: string;
}

/** `puppet/fixDiagnosticErrors`: puppet-lint's fixes of the document as the server has it. */
export interface FixParams {
  documentUri: string;
  alwaysReturnContent: boolean;
}
export interface FixResponse {
  documentUri?: string;
  fixesApplied?: number;
  newContent?: string;
}

/** What a `puppet/getResource` answer means for the editor: the text to insert, or why there is none. */
export function resourceText(answer: ResourceResponse | null | undefined, typename: string): { text?: string; error?: string } {
  if (!answer) return { error: `no answer to ${GET_RESOURCE} for ${typename}` };
  if (answer.error) return { error: answer.error };
  if (!answer.data) return { error: `puppet resource ${typename} printed nothing` };
  return { text: answer.data.endsWith('\n') ? answer.data : `${answer.data}\n` };
}

/** What a `puppet/fixDiagnosticErrors` answer means: the new text of the document, or undefined (nothing fixed). */
export function fixedText(answer: FixResponse | null | undefined): string | undefined {
  if (!answer || !answer.fixesApplied || answer.fixesApplied <= 0 || typeof answer.newContent !== 'string') {
    return undefined;
  }
  return answer.newContent;
}

/** The one-line status bar text and its tooltip for a `puppet/getVersion` answer. */
export function versionStatus(details: VersionDetails): { text: string; tooltip: string } {
  const loaded = (['facts', 'functions', 'types', 'classes'] as const)
    .filter((k) => !details[`${k}Loaded`]);
  const tooltip = [
    `puppet-xpp ${details.languageServerVersion}`,
    `Puppet ${details.puppetVersion || 'not found'}`,
    `Facter ${details.facterVersion || 'not found'}`,
    loaded.length > 0 ? `still loading: ${loaded.join(', ')}` : 'facts, functions, types and classes loaded',
  ].join('\n');
  return { text: `$(terminal) Puppet ${details.puppetVersion || '(not found)'}`, tooltip };
}

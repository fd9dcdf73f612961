import { HeadwaterError } from './errors.js';

/** A parsed lineage node id, in Marquez's grammar. */
export type NodeId =
  | {
      readonly type: 'dataset' | 'job';
      readonly namespace: string;
      readonly name: string;
      readonly version?: string;
    }
  | {
      readonly type: 'datasetField';
      readonly namespace: string;
      readonly name: string;
      readonly field: string;
      readonly version?: string;
    }
  | { readonly type: 'run'; readonly runId: string };

const VERSION_RE = /#([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})$/;

/**
 * Colons that separate parts. A colon followed by `//` (a URI scheme) or by a digit (a port) belongs to the
 * namespace, so `dataset:postgres://host:5432:db.schema.table` has namespace `postgres://host:5432`.
 */
function separators(text: string): number[] {
  const all: number[] = [];
  for (let i = text.indexOf(':'); i !== -1; i = text.indexOf(':', i + 1)) all.push(i);
  return all.filter((i) => !text.startsWith('//', i + 1) && !/[0-9]/.test(text[i + 1] ?? ''));
}

function invalid(nodeId: string, why: string): HeadwaterError {
  return new HeadwaterError(
    'INVALID_NODE_ID',
    `Invalid nodeId ${JSON.stringify(nodeId)}: ${why}. Use dataset:<namespace>:<name>, job:<namespace>:<name>, ` +
      'datasetField:<namespace>:<dataset>:<field> or run:<uuid>, optionally followed by #<version>.',
  );
}

/** Parses a nodeId; throws INVALID_NODE_ID (400) with the expected grammar when it does not parse. */
export function parseNodeId(nodeId: string): NodeId {
  const typeEnd = nodeId.indexOf(':');
  const type = nodeId.slice(0, typeEnd);
  if (typeEnd === -1 || !['dataset', 'job', 'datasetField', 'run'].includes(type)) {
    throw invalid(nodeId, 'it must start with dataset:, job:, datasetField: or run:');
  }
  let rest = nodeId.slice(typeEnd + 1);
  if (type === 'run') {
    if (!/^[0-9a-fA-F-]{36}$/.test(rest)) throw invalid(nodeId, 'a run id must be a UUID');
    return { type: 'run', runId: rest.toLowerCase() };
  }
  const version = VERSION_RE.exec(rest)?.[1]?.toLowerCase();
  if (version) rest = rest.slice(0, -version.length - 1);
  const all = [...rest.matchAll(/:/g)].map((match) => match.index);
  const cuts = all.length === (type === 'datasetField' ? 2 : 1) ? all : separators(rest);
  const first = cuts[0];
  if (first === undefined || first === 0) throw invalid(nodeId, 'it has no namespace');
  const namespace = rest.slice(0, first);
  const afterNamespace = rest.slice(first + 1);
  const withVersion = version ? { version } : {};
  if (type === 'datasetField') {
    const last = afterNamespace.lastIndexOf(':');
    if (last <= 0 || last === afterNamespace.length - 1)
      throw invalid(nodeId, 'it needs a dataset and a field');
    return {
      type,
      namespace,
      name: afterNamespace.slice(0, last),
      field: afterNamespace.slice(last + 1),
      ...withVersion,
    };
  }
  if (afterNamespace === '') throw invalid(nodeId, 'it has no name');
  return { type: type as 'dataset' | 'job', namespace, name: afterNamespace, ...withVersion };
}

/** Builds the nodeId of a dataset or job. */
export const nodeIdOf = (type: 'dataset' | 'job', namespace: string, name: string): string =>
  `${type}:${namespace}:${name}`;

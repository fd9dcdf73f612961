/**
 * Every view's URL in one place, so that links built by one page are parsed by another the same way. Namespaces
 * and names are whole path segments, percent-encoded: `postgres://host:5432` contains slashes.
 */
import type { Direction } from './api/types.js';

const seg = encodeURIComponent;

export const paths = {
  home: () => '/',
  dataset: (namespace: string, name: string) => `/datasets/${seg(namespace)}/${seg(name)}`,
  job: (namespace: string, name: string) => `/jobs/${seg(namespace)}/${seg(name)}`,
  run: (id: string) => `/runs/${seg(id)}`,
  lineage: (
    nodeId: string,
    options: { depth?: number; direction?: Direction; select?: string } = {},
  ): string => {
    const search = new URLSearchParams({ node: nodeId });
    if (options.depth !== undefined) search.set('depth', String(options.depth));
    if (options.direction !== undefined) search.set('direction', options.direction);
    if (options.select !== undefined) search.set('select', options.select);
    return `/lineage?${search.toString().replace(/%3A/g, ':').replace(/%2F/g, '/')}`;
  },
  /** The page of a lineage node id (`dataset:ns:name` / `job:ns:name`). */
  node: (nodeId: string): string => {
    const parsed = parseNodeId(nodeId);
    if (!parsed) return '/';
    return parsed.type === 'dataset'
      ? paths.dataset(parsed.namespace, parsed.name)
      : paths.job(parsed.namespace, parsed.name);
  },
};

/**
 * Splits `dataset:<namespace>:<name>` or `job:<namespace>:<name>` with the server's rule: a `:` followed by `//`
 * (a URI scheme) or a digit (a port) belongs to the namespace, so `postgres://host:5432` stays whole.
 */
export function parseNodeId(
  nodeId: string,
): { type: 'dataset' | 'job'; namespace: string; name: string } | undefined {
  const match = /^(dataset|job):(.*)$/.exec(nodeId);
  if (!match) return undefined;
  const rest = match[2]!;
  for (let i = rest.indexOf(':'); i > 0; i = rest.indexOf(':', i + 1)) {
    if (rest.startsWith('//', i + 1) || /[0-9]/.test(rest[i + 1] ?? '')) continue;
    return { type: match[1] as 'dataset' | 'job', namespace: rest.slice(0, i), name: rest.slice(i + 1) };
  }
  return undefined;
}

export const datasetNodeId = (namespace: string, name: string) => `dataset:${namespace}:${name}`;
export const jobNodeId = (namespace: string, name: string) => `job:${namespace}:${name}`;

/**
 * A route param as the page needs it. React Router decodes params but leaves `%2F` encoded so that a slash in a
 * segment cannot be confused with a separator; namespaces like `s3://bucket` need it back.
 */
export const fromParam = (value: string | undefined): string => (value ?? '').replace(/%2F/gi, '/');

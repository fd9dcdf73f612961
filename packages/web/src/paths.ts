/**
 * Every view's URL in one place, so that links built by one page are parsed by another the same way. Namespaces
 * and names are whole path segments, percent-encoded: `postgres://host:5432` contains slashes.
 */
import type { IncidentFilter } from './api/incidents.js';
import type { Direction } from './api/types.js';

const seg = encodeURIComponent;
/** Query strings with node ids stay legible when pasted: `:` and `/` are safe in a query. */
export const readable = (search: URLSearchParams) =>
  search.toString().replace(/%3A/g, ':').replace(/%2F/g, '/');

export const paths = {
  home: () => '/',
  dataset: (namespace: string, name: string) => `/datasets/${seg(namespace)}/${seg(name)}`,
  /** A dataset's journey (or, with `column`, one column's): where its data went in a window, and the proof. */
  datasetJourney: (namespace: string, name: string, column?: string): string =>
    `${paths.dataset(namespace, name)}/journey${column === undefined ? '' : `?${readable(new URLSearchParams({ column }))}`}`,
  job: (namespace: string, name: string) => `/jobs/${seg(namespace)}/${seg(name)}`,
  run: (id: string) => `/runs/${seg(id)}`,
  /** A parent run's child runs as a graph; `select` a child run id or a dataset node id. */
  workflow: (id: string, options: { select?: string; datasets?: boolean } = {}): string => {
    const search = new URLSearchParams();
    if (options.select !== undefined) search.set('select', options.select);
    if (options.datasets === false) search.set('datasets', 'hide');
    const text = readable(search);
    return `/runs/${seg(id)}/workflow${text ? `?${text}` : ''}`;
  },
  lineage: (
    nodeId: string,
    options: { depth?: number; direction?: Direction; select?: string; asOf?: string } = {},
  ): string => {
    const search = new URLSearchParams({ node: nodeId });
    if (options.depth !== undefined) search.set('depth', String(options.depth));
    if (options.direction !== undefined) search.set('direction', options.direction);
    if (options.select !== undefined) search.set('select', options.select);
    if (options.asOf !== undefined) search.set('asOf', options.asOf);
    return `/lineage?${readable(search)}`;
  },
  /** Everything downstream of a dataset, column or job, for `change` (see `/api/v1/analysis/impact`). */
  impact: (nodeId: string, change?: string): string => {
    const search = new URLSearchParams({ node: nodeId });
    if (change !== undefined) search.set('change', change);
    return `/impact?${readable(search)}`;
  },
  /**
   * The incidents, unresolved ones unless `status` says otherwise. The server's messages link to `/incidents/<id>`
   * (packages/server/src/alerts/notice.ts, noticeLinks): keep the two in step.
   */
  incidents: (status: IncidentFilter = 'unresolved'): string =>
    status === 'unresolved' ? '/incidents' : `/incidents?status=${status}`,
  incident: (id: string): string => `/incidents/${seg(id)}`,
  /** Two runs compared; `from` the earlier. */
  runDiff: (from: string, to: string): string =>
    `/runs/compare?${readable(new URLSearchParams({ from, to }))}`,
  /** A preview's lineage against production's: each change, its category and the consumers it reaches. */
  preview: (name: string): string => `/previews/${seg(name)}`,
  /** The page of a lineage node id (`dataset:ns:name` / `job:ns:name`). */
  node: (nodeId: string): string => {
    const field = parseFieldNodeId(nodeId);
    if (field) return `${paths.dataset(field.namespace, field.dataset)}#column-${seg(field.field)}`;
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

/** The dataset and column of `datasetField:<namespace>:<dataset>:<field>` (the field is after the last `:`). */
export function parseFieldNodeId(
  nodeId: string,
): { namespace: string; dataset: string; field: string } | undefined {
  if (!nodeId.startsWith('datasetField:')) return undefined;
  const last = nodeId.lastIndexOf(':');
  const dataset = parseNodeId(`dataset:${nodeId.slice('datasetField:'.length, last)}`);
  if (!dataset || last <= 'datasetField:'.length) return undefined;
  return { namespace: dataset.namespace, dataset: dataset.name, field: nodeId.slice(last + 1) };
}

/** What a person calls a node: a dataset's or job's name, `dataset.column` for a column. */
export function nodeLabel(nodeId: string): string {
  const field = parseFieldNodeId(nodeId);
  if (field) return `${field.dataset}.${field.field}`;
  return parseNodeId(nodeId)?.name ?? nodeId;
}

export const datasetNodeId = (namespace: string, name: string) => `dataset:${namespace}:${name}`;
export const jobNodeId = (namespace: string, name: string) => `job:${namespace}:${name}`;

/**
 * A route param as the page needs it. React Router decodes params but leaves `%2F` encoded so that a slash in a
 * segment cannot be confused with a separator; namespaces like `s3://bucket` need it back.
 */
export const fromParam = (value: string | undefined): string => (value ?? '').replace(/%2F/gi, '/');

/**
 * The journey view's pure parts: the question as the explorer's address holds it and as the server's
 * `/api/v1/compliance/journey` takes it, the jurisdiction lines a person types, and the time axis the lanes share.
 */
import type { JourneyJson, JourneyNode } from './analysis.js';
import type { Direction } from './types.js';

/** The report formats the server renders; `json` is the answer the view itself reads. */
export const JOURNEY_FORMATS = ['json', 'markdown', 'csv', 'html'] as const;
export type JourneyFormat = (typeof JOURNEY_FORMATS)[number];

/** A journey's question, in the server's parameters; what is left out takes the server's default. */
export interface JourneyParams {
  readonly nodeId: string;
  readonly from?: string;
  readonly to?: string;
  readonly direction?: Direction;
  readonly depth?: number;
  /** Comma-separated, as the server takes them: `pii,gdpr`. */
  readonly tags?: string;
  /** `PATTERN=NAME` each, the first match winning. */
  readonly jurisdictions?: readonly string[];
}

/**
 * The query string of the journey endpoint for `params` (`jurisdiction` repeated, in order), with `format` when
 * one other than the view's JSON is asked for.
 *
 * @example
 * journeyQuery({ nodeId: 'dataset:s3://raw:customers', jurisdictions: ['s3://*=EU'] }, 'markdown')
 * // '?nodeId=dataset%3As3%3A%2F%2Fraw%3Acustomers&jurisdiction=s3%3A%2F%2F*%3DEU&format=markdown'
 */
export function journeyQuery(params: JourneyParams, format: JourneyFormat = 'json'): string {
  const search = new URLSearchParams({ nodeId: params.nodeId });
  if (params.from) search.set('from', params.from);
  if (params.to) search.set('to', params.to);
  if (params.direction) search.set('direction', params.direction);
  if (params.depth !== undefined) search.set('depth', String(params.depth));
  if (params.tags) search.set('tags', params.tags);
  for (const entry of params.jurisdictions ?? []) search.append('jurisdiction', entry);
  if (format !== 'json') search.set('format', format);
  return `?${search.toString()}`;
}

/** The journey controls as a person fills them in, each a text (empty: the server's default). */
export interface JourneyForm {
  /** A column of the dataset, or empty for the whole dataset. */
  readonly column: string;
  readonly from: string;
  readonly to: string;
  readonly direction: Direction;
  readonly depth: string;
  readonly tags: string;
  /** One `PATTERN=NAME` a line. */
  readonly jurisdictions: string;
}

/** The controls as the explorer's address (`?column=&from=&…&jurisdiction=`) holds them. */
export function journeyFormOf(search: URLSearchParams): JourneyForm {
  return {
    column: search.get('column') ?? '',
    from: search.get('from') ?? '',
    to: search.get('to') ?? '',
    direction: search.get('direction') === 'upstream' ? 'upstream' : 'downstream',
    depth: search.get('depth') ?? '',
    tags: search.get('tags') ?? '',
    jurisdictions: search.getAll('jurisdiction').join('\n'),
  };
}

/**
 * The address's query for `form` (the inverse of {@link journeyFormOf}), without what is empty or a default, and
 * with `keep` (the other parameters of the address, such as the preview shown) as they were.
 */
export function journeySearch(form: JourneyForm, keep = new URLSearchParams()): URLSearchParams {
  const search = new URLSearchParams(keep);
  for (const key of ['column', 'from', 'to', 'direction', 'depth', 'tags', 'jurisdiction'])
    search.delete(key);
  const set = (key: string, value: string) => {
    if (value.trim() !== '') search.set(key, value.trim());
  };
  set('column', form.column);
  set('from', form.from);
  set('to', form.to);
  if (form.direction === 'upstream') search.set('direction', 'upstream');
  set('depth', form.depth);
  set('tags', form.tags);
  for (const line of form.jurisdictions.split('\n'))
    if (line.trim() !== '') search.append('jurisdiction', line.trim());
  return search;
}

/**
 * The `PATTERN=NAME` lines of a jurisdiction map, blank lines skipped and spaces around `=` dropped, each checked
 * with the server's rule (one `=`, text on both sides); `problems` says which line is wrong and how to write it.
 *
 * @example
 * parseJurisdictions('s3://acme-eu-* = EU\n\npostgres://*=US') // { entries: ['s3://acme-eu-*=EU', 'postgres://*=US'], problems: [] }
 */
export function parseJurisdictions(text: string): { entries: string[]; problems: string[] } {
  const entries: string[] = [];
  const problems: string[] = [];
  text.split(/\r?\n/).forEach((raw, index) => {
    const line = raw.trim();
    if (line === '') return;
    const parts = line.split('=').map((part) => part.trim());
    if (parts.length !== 2 || parts[0] === '' || parts[1] === '')
      problems.push(
        `Jurisdiction line ${index + 1} ("${line}") is not PATTERN=NAME: write one namespace pattern, "=", and a jurisdiction, e.g. s3://acme-eu-*=EU.`,
      );
    else entries.push(`${parts[0]}=${parts[1]}`);
  });
  return { entries, problems };
}

/**
 * The server's question for `form` about `datasetNodeId` (or its column `form.column`), or the problems that
 * keep it from being asked: a time that does not parse, a depth out of the server's range, a jurisdiction line.
 */
export function journeyParamsOf(
  datasetNodeId: string,
  form: JourneyForm,
): { params: JourneyParams; problems: string[] } {
  const problems: string[] = [];
  const nodeId =
    form.column === ''
      ? datasetNodeId
      : `datasetField:${datasetNodeId.slice('dataset:'.length)}:${form.column}`;
  const time = (label: string, text: string): string | undefined => {
    const value = text.trim();
    if (value === '') return undefined;
    const ms = Date.parse(value);
    if (Number.isNaN(ms)) {
      problems.push(`${label} "${value}" is not a time: write it as ISO 8601, e.g. 2026-03-01T00:00:00Z.`);
      return undefined;
    }
    return new Date(ms).toISOString();
  };
  const from = time('From', form.from);
  const to = time('To', form.to);
  let depth: number | undefined;
  if (form.depth.trim() !== '') {
    depth = Number(form.depth);
    if (!Number.isInteger(depth) || depth < 1 || depth > 100) {
      problems.push(`Depth "${form.depth.trim()}" is not a whole number from 1 to 100.`);
      depth = undefined;
    }
  }
  const tags = form.tags
    .split(',')
    .map((tag) => tag.trim())
    .filter((tag) => tag !== '')
    .join(',');
  const jurisdictions = parseJurisdictions(form.jurisdictions);
  problems.push(...jurisdictions.problems);
  return {
    params: {
      nodeId,
      ...(from !== undefined ? { from } : {}),
      ...(to !== undefined ? { to } : {}),
      direction: form.direction,
      ...(depth !== undefined ? { depth } : {}),
      ...(tags !== '' ? { tags } : {}),
      ...(jurisdictions.entries.length > 0 ? { jurisdictions: jurisdictions.entries } : {}),
    },
    problems,
  };
}

/** Where `iso` lies on the axis from `bounds.from` to `bounds.to`, from 0 to 1 (clamped; 0 for an empty window). */
export function axisFraction(iso: string, bounds: { from: string; to: string }): number {
  const from = Date.parse(bounds.from);
  const span = Date.parse(bounds.to) - from;
  if (!(span > 0)) return 0;
  return Math.min(1, Math.max(0, (Date.parse(iso) - from) / span));
}

/** `count` + 1 evenly spaced times from `bounds.from` to `bounds.to`, both included, for the axis labels. */
export function axisTicks(bounds: { from: string; to: string }, count = 4): string[] {
  const from = Date.parse(bounds.from);
  const span = Date.parse(bounds.to) - from;
  if (!(span > 0)) return [new Date(from).toISOString()];
  return Array.from({ length: count + 1 }, (_, index) =>
    new Date(from + (span * index) / count).toISOString(),
  );
}

/** A change of a node's owners within the window: the owner period that began at `at`, and the one before. */
export interface OwnerChange {
  readonly nodeId: string;
  readonly at: string;
  readonly owners: JourneyNode['owners'][number]['owners'];
  readonly before: JourneyNode['owners'][number]['owners'];
}

/**
 * The owner changes of the journey's nodes in time order: each owner period after a node's first (the first is
 * the owners the window began with, not a change).
 */
export function ownerChanges(nodes: JourneyJson['nodes']): OwnerChange[] {
  const changes: OwnerChange[] = [];
  for (const node of nodes)
    node.owners.forEach((period, index) => {
      if (index === 0) return;
      changes.push({
        nodeId: node.nodeId,
        at: period.from,
        owners: period.owners,
        before: node.owners[index - 1]!.owners,
      });
    });
  return changes.sort((a, b) => Date.parse(a.at) - Date.parse(b.at) || (a.nodeId < b.nodeId ? -1 : 1));
}

import type {
  ColumnLineageResponse,
  CountBucket,
  Dataset,
  DatasetVersion,
  Direction,
  Incident,
  IncidentDetail,
  Job,
  LineageEventsBucket,
  LineageGraphJson,
  Namespace,
  Preview,
  Run,
  SearchResult,
} from './types.js';
import type { EventTimeAndType } from './activity.js';
import { credentialRefused, currentToken, serverMessage } from './auth.js';
import type { IncidentAction, IncidentFilter } from './incidents.js';
import { withRedactedPlaceholders } from './redacted.js';
import { apiPathIn, previewOf } from '../preview.js';
import type {
  DatasetQualityJson,
  DeclaredLineageResult,
  GraphDiffResult,
  ImpactChange,
  ImpactResult,
  PreviewDiff,
  RootCauseResult,
  RunChildrenJson,
  RunDiffResult,
  JourneyJson,
  RunQualityJson,
  SchemaDiffResult,
} from './analysis.js';
import { journeyQuery, type JourneyFormat, type JourneyParams } from './journey.js';

/** Why a request to the server did not give data; `status` is 0 when the server could not be reached. */
export class ApiError extends Error {
  override readonly name = 'ApiError';
  constructor(
    message: string,
    readonly status: number,
    readonly path: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }

  /** True when there is no such thing on the server, which the pages show as an empty state, not a failure. */
  get notFound(): boolean {
    return this.status === 404;
  }
}

const segment = encodeURIComponent;

/**
 * GETs `path` under `/api/v1` of the server that served the page and returns the parsed JSON, signed with the
 * session's credential when there is one. While the explorer shows a preview (`?preview=` in its address), the
 * read is the preview's (preview.ts, apiPathIn). A 401 refreshes an OIDC session once and sends the request again, or
 * ends the session (the explorer then shows its sign-in screen). Errors say what failed and what to do: the
 * server's own message when it answered, a hint to start it when it did not.
 */
export function getJson<T>(path: string, signal?: AbortSignal): Promise<T> {
  return request('GET', path, undefined, signal).then((response) => response.json() as Promise<T>);
}

/**
 * GETs `path` under `/api/v1` as text (a report the server renders: markdown, CSV, HTML), signed, refreshed and
 * reported as {@link getJson} does.
 */
export function getText(path: string, signal?: AbortSignal): Promise<string> {
  return request('GET', path, undefined, signal).then((response) => response.text());
}

/**
 * POSTs `body` as JSON to `path` under `/api/v1` and returns the parsed answer; signed, refreshed and reported
 * as {@link getJson} does. A refusal keeps the server's status (409: the thing changed meanwhile) on the ApiError.
 */
export function postJson<T>(path: string, body: unknown, signal?: AbortSignal): Promise<T> {
  return request('POST', path, body, signal).then((response) => response.json() as Promise<T>);
}

/** The server's successful response to `method path`, or the ApiError that says why there is none. */
async function request(
  method: 'GET' | 'POST',
  path: string,
  body: unknown,
  signal: AbortSignal | undefined,
): Promise<Response> {
  // Read from the address at each request: it is the one record of what the explorer shows.
  const url = `/api/v1${apiPathIn(previewOf(location.search), method, path)}`;
  for (let retried = false; ; retried = true) {
    const token = await currentToken();
    let response: Response;
    try {
      response = await fetch(url, {
        method,
        headers: {
          accept: 'application/json',
          ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
          ...(token !== undefined ? { authorization: `Bearer ${token}` } : {}),
        },
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
        ...(signal ? { signal } : {}),
      });
    } catch (error) {
      if (signal?.aborted) throw error;
      throw new ApiError(
        `Cannot reach the Headwater server at ${location.origin} (${method} ${url}). Is \`headwater serve\` running?`,
        0,
        path,
        { cause: error },
      );
    }
    if (response.ok) return response;
    const message = await serverMessage(response);
    // A page left while its answer was read: nothing to report, and no reason to end the session.
    signal?.throwIfAborted();
    if (response.status === 401 && (await credentialRefused(token, message, retried))) continue;
    throw new ApiError(`${method} ${url} failed: ${message}`, response.status, path);
  }
}

const query = (params: Record<string, string | number | undefined>) => {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) if (value !== undefined) search.set(key, String(value));
  const text = search.toString();
  return text ? `?${text}` : '';
};

/** The typed client of the server's read API; one function per endpoint the explorer uses. */
export const api = {
  namespaces: (signal?: AbortSignal) =>
    getJson<{ namespaces: Namespace[] }>('/namespaces?limit=10000', signal),
  datasets: (namespace: string, limit = 200, signal?: AbortSignal) =>
    getJson<{ datasets: Dataset[]; totalCount: number }>(
      `/namespaces/${segment(namespace)}/datasets${query({ limit })}`,
      signal,
    ),
  dataset: (namespace: string, name: string, signal?: AbortSignal) =>
    getJson<Dataset>(`/namespaces/${segment(namespace)}/datasets/${segment(name)}`, signal),
  datasetVersions: (namespace: string, name: string, limit = 100, signal?: AbortSignal) =>
    getJson<{ versions: DatasetVersion[]; totalCount: number }>(
      `/namespaces/${segment(namespace)}/datasets/${segment(name)}/versions${query({ limit })}`,
      signal,
    ),
  jobs: (params: { namespace?: string; lastRunStates?: string; limit?: number }, signal?: AbortSignal) =>
    getJson<{ jobs: Job[]; totalCount: number }>(
      `${params.namespace === undefined ? '/jobs' : `/namespaces/${segment(params.namespace)}/jobs`}${query({
        limit: params.limit ?? 200,
        lastRunStates: params.lastRunStates,
      })}`,
      signal,
    ),
  job: (namespace: string, name: string, signal?: AbortSignal) =>
    getJson<Job>(`/namespaces/${segment(namespace)}/jobs/${segment(name)}`, signal),
  jobRuns: (namespace: string, name: string, limit = 100, signal?: AbortSignal) =>
    getJson<{ runs: Run[]; totalCount?: number }>(
      `/namespaces/${segment(namespace)}/jobs/${segment(name)}/runs${query({ limit })}`,
      signal,
    ),
  run: (id: string, signal?: AbortSignal) => getJson<Run>(`/jobs/runs/${segment(id)}`, signal),
  /** Each assertion's latest result and history, and what the runs reported (statistics, metrics). */
  datasetQuality: (namespace: string, name: string, signal?: AbortSignal) =>
    getJson<DatasetQualityJson>(
      `/namespaces/${segment(namespace)}/datasets/${segment(name)}/quality`,
      signal,
    ),
  /** The runs that name this one as their parent, in the order they ran, with the edges between them. */
  runChildren: (id: string, limit: number, signal?: AbortSignal) =>
    getJson<RunChildrenJson>(`/jobs/runs/${segment(id)}/children${query({ limit })}`, signal),
  runQuality: (id: string, signal?: AbortSignal) =>
    getJson<RunQualityJson>(`/jobs/runs/${segment(id)}/quality`, signal),
  search: (q: string, limit = 20, signal?: AbortSignal) =>
    getJson<{ results: SearchResult[]; totalCount: number }>(`/search${query({ q, limit })}`, signal),
  /** `asOf`: the lineage as a store holding only the events up to that time would show it. */
  lineage: (nodeId: string, depth: number, direction: Direction, signal?: AbortSignal, asOf?: string) =>
    getJson<LineageGraphJson>(`/lineage${query({ nodeId, depth, direction, asOf })}`, signal).then(
      withRedactedPlaceholders,
    ),
  columnLineage: (nodeId: string, depth: number, signal?: AbortSignal) =>
    getJson<ColumnLineageResponse>(
      `/column-lineage${query({ nodeId, depth, withDownstream: 'true', edges: 'lineage' })}`,
      signal,
    ),
  /** Stored events by eventTime, newest first (`after`/`before` bound it). */
  events: (params: { after?: string; before?: string; limit: number }, signal?: AbortSignal) =>
    getJson<{ events: EventTimeAndType[] }>(`/events/lineage${query(params)}`, signal),
  lineageEventStats: (period: 'DAY' | 'WEEK', signal?: AbortSignal) =>
    getJson<LineageEventsBucket[]>(
      `/stats/lineage-events${query({ period, timezone: Intl.DateTimeFormat().resolvedOptions().timeZone })}`,
      signal,
    ),
  countStats: (what: 'jobs' | 'datasets' | 'sources', signal?: AbortSignal) =>
    getJson<CountBucket[]>(
      `/stats/${what}${query({ period: 'DAY', timezone: Intl.DateTimeFormat().resolvedOptions().timeZone })}`,
      signal,
    ),
  /** What may explain bad data in a dataset or column: failures, assertions, staleness, schema changes. */
  rootCause: (nodeId: string, signal?: AbortSignal) =>
    getJson<RootCauseResult>(`/analysis/root-cause${query({ nodeId })}`, signal),
  impact: (nodeId: string, change: ImpactChange, signal?: AbortSignal) =>
    getJson<ImpactResult>(`/analysis/impact${query({ nodeId, change })}`, signal),
  /** Without versions: the two newest. */
  schemaDiff: (dataset: string, versions: { from?: string; to?: string }, signal?: AbortSignal) =>
    getJson<SchemaDiffResult>(`/analysis/schema-diff${query({ dataset, ...versions })}`, signal),
  runDiff: (from: string, to: string, signal?: AbortSignal) =>
    getJson<RunDiffResult>(`/analysis/run-diff${query({ from, to })}`, signal),
  graphDiff: (
    params: { nodeId: string; from: string; to?: string; depth: number; direction: Direction },
    signal?: AbortSignal,
  ) => getJson<GraphDiffResult>(`/analysis/graph-diff${query(params)}`, signal),
  /** Where a dataset's or column's data went (or came from) in a window, with the runs that prove each hop. */
  journey: (params: JourneyParams, signal?: AbortSignal) =>
    getJson<JourneyJson>(`/compliance/journey${journeyQuery(params)}`, signal),
  /** The same journey as the server renders it for an auditor: markdown, CSV, printable HTML (or JSON text). */
  journeyReport: (params: JourneyParams, format: JourneyFormat, signal?: AbortSignal) =>
    getText(`/compliance/journey${journeyQuery(params, format)}`, signal),
  /** A job's (and its child jobs') declared edges against those of their latest completed runs. */
  declaredLineage: (nodeId: string, signal?: AbortSignal) =>
    getJson<DeclaredLineageResult>(`/analysis/declared-lineage${query({ nodeId })}`, signal),
  /** The previews: pull requests whose pipelines run apart from production; always production's list. */
  previews: (signal?: AbortSignal) => getJson<{ previews: Preview[] }>('/previews', signal),
  preview: (name: string, signal?: AbortSignal) => getJson<Preview>(`/previews/${segment(name)}`, signal),
  /** A preview's lineage against production's: each change, its category and the consumers it reaches. */
  previewDiff: (name: string, signal?: AbortSignal) =>
    getJson<PreviewDiff>(`/previews/${segment(name)}/diff`, signal),
  /** Incidents newest first; `unresolved`: open or acknowledged. Empty when the server has no alerts configured. */
  incidents: (params: { status: IncidentFilter; limit?: number; offset?: number }, signal?: AbortSignal) =>
    getJson<{ incidents: Incident[]; totalCount: number }>(
      `/incidents${query({
        status: params.status === 'all' ? undefined : params.status,
        limit: params.limit ?? 200,
        offset: params.offset,
      })}`,
      signal,
    ),
  /** One incident with its signals and its timeline of transitions and deliveries. */
  incident: (id: string, signal?: AbortSignal) =>
    getJson<IncidentDetail>(`/incidents/${segment(id)}`, signal),
  /** Acknowledges or resolves an incident, with an optional note; the server answers 409 when it already is. */
  actOnIncident: (id: string, action: IncidentAction, note?: string) =>
    postJson<Incident>(`/incidents/${segment(id)}/${action}`, note === undefined ? {} : { note }),
};

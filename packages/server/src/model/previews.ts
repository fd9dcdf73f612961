/**
 * The rules of previews (a pull request's pipeline run apart from production): which events are a preview's,
 * and which production dataset or job a preview's one stands for. Shared by the server's routing, the diff and
 * the CLI's `--map` parsing.
 */
import { wildcard } from '../core/wildcard.js';

/** One rule of a preview's name mapping: names matching `from` stand for the production names of `to`. */
export interface PreviewMapping {
  /** A name pattern (`*` matches any run of characters), and optionally the namespace it applies in. */
  readonly from: { readonly namespace: string | null; readonly name: string };
  readonly to: { readonly namespace: string | null; readonly name: string };
}

/** What routing needs of a preview. */
export interface PreviewRoute {
  readonly name: string;
  /** Events of jobs in this namespace are the preview's. */
  readonly jobNamespace: string;
  /** Events whose job's sourceCodeLocation names this pull request are the preview's too. */
  readonly pullRequest: number | null;
  /** ... or this commit (its `version`). */
  readonly commitSha: string | null;
}

/** What a caller gives to create a preview. */
export interface PreviewInput extends PreviewRoute {
  /** The production job namespace the preview's jobs stand in for. */
  readonly baseNamespace: string;
  readonly mappings: readonly PreviewMapping[];
  /** How long it lives; null: until deleted. */
  readonly ttlMs: number | null;
}

/** The preview a request names (`?preview=NAME`), or undefined: it is production's. */
export function previewOfUrl(url: string): string | undefined {
  const query = url.indexOf('?');
  if (query < 0 || !url.includes('preview=', query)) return undefined;
  return new URLSearchParams(url.slice(query + 1)).get('preview') ?? undefined;
}

/** `url` without its `preview` query parameter: what the preview's own routes are asked. */
export function withoutPreview(url: string): string {
  const query = url.indexOf('?');
  if (query < 0) return url;
  const params = new URLSearchParams(url.slice(query + 1));
  params.delete('preview');
  const rest = params.toString();
  return rest === '' ? url.slice(0, query) : `${url.slice(0, query)}?${rest}`;
}

/** `to` with its `*`s replaced, in order, by what the `*`s of the pattern matched (the last one repeats). */
function fill(to: string, captures: readonly string[]): string {
  let index = 0;
  return to.replace(/\*/g, () => captures[Math.min(index++, captures.length - 1)] ?? '');
}

/**
 * The production name a preview's dataset (or job) stands for: the first mapping whose pattern matches it
 * (and whose namespace, when it names one, is the node's), or undefined when none does. A mapping without a
 * `to` namespace keeps the node's namespace.
 */
export function mapPreviewName(
  mappings: readonly PreviewMapping[],
  namespace: string,
  name: string,
): { namespace: string; name: string } | undefined {
  for (const mapping of mappings) {
    if (mapping.from.namespace !== null && mapping.from.namespace !== namespace) continue;
    const match = wildcard(mapping.from.name).exec(name);
    if (!match) continue;
    return { namespace: mapping.to.namespace ?? namespace, name: fill(mapping.to.name, match.slice(1)) };
  }
  return undefined;
}

/**
 * Reads one `FROM=TO` mapping as the CLI takes it: name patterns, each optionally `namespace::name`.
 * Undefined when it is not of that form.
 */
export function parsePreviewMapping(text: string): PreviewMapping | undefined {
  const at = text.indexOf('=');
  if (at <= 0 || at === text.length - 1) return undefined;
  const side = (part: string) => {
    const split = part.indexOf('::');
    return split < 0
      ? { namespace: null, name: part }
      : { namespace: part.slice(0, split), name: part.slice(split + 2) };
  };
  const from = side(text.slice(0, at));
  const to = side(text.slice(at + 1));
  if (from.name === '' || to.name === '') return undefined;
  return { from, to };
}

/** Whether a sourceCodeLocation's text names pull request `number` (GitHub, GitLab, Bitbucket and CI forms). */
function namesPullRequest(text: string, number: number): boolean {
  return new RegExp(
    `(?:^|[/:_-])(?:pull|pulls|pull-requests|merge_requests|merge-requests|pr|mr)[/_-]?${number}(?![0-9])`,
    'i',
  ).test(text);
}

/**
 * The preview an event belongs to: the one whose job namespace is the event's, else the one whose pull request
 * or commit the job's sourceCodeLocation facet names; undefined for production's events.
 */
export function previewOfEvent(
  previews: Iterable<PreviewRoute>,
  job: { readonly namespace: string; readonly facets: Readonly<Record<string, unknown>> } | undefined,
): string | undefined {
  if (job === undefined) return undefined;
  let byLocation: string | undefined;
  const location = job.facets.sourceCodeLocation as Record<string, unknown> | undefined;
  const texts =
    location && location._deleted !== true
      ? ['url', 'repoUrl', 'branch', 'tag'].flatMap((key) => {
          const text = location[key];
          return typeof text === 'string' ? [text] : [];
        })
      : [];
  const version = typeof location?.version === 'string' ? location.version : undefined;
  for (const preview of previews) {
    if (preview.jobNamespace === job.namespace) return preview.name;
    if (byLocation !== undefined || !location) continue;
    if (
      (preview.commitSha !== null && version !== undefined && version === preview.commitSha) ||
      (preview.pullRequest !== null && texts.some((text) => namesPullRequest(text, preview.pullRequest!)))
    )
      byLocation = preview.name;
  }
  return byLocation;
}

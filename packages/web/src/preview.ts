/**
 * Which store the explorer reads: production's, or a preview's (a pull request's pipeline, run apart). The
 * preview is part of the explorer's address (`?preview=NAME`), so a link to a preview's page opens it there; the
 * API client reads it from the address and asks the server with the same parameter. Links inside the explorer are
 * built without it, so a navigation that drops it keeps the preview, unless it says it goes to production.
 */
import { readable } from './paths.js';

/** The query parameter, the same in the explorer's address and in the server's API. */
export const PREVIEW_PARAM = 'preview';

/**
 * Navigation state of a link that leaves the preview for production, e.g. a production consumer listed in a
 * preview's diff: `<Link to={paths.node(id)} state={TO_PRODUCTION}>`.
 */
export const TO_PRODUCTION = { headwaterPreview: 'production' } as const;

const goesToProduction = (state: unknown) =>
  typeof state === 'object' &&
  state !== null &&
  (state as { headwaterPreview?: unknown }).headwaterPreview === TO_PRODUCTION.headwaterPreview;

/** The preview a query string names (`?preview=pr-7`), or undefined for production. */
export function previewOf(search: string): string | undefined {
  return new URLSearchParams(search).get(PREVIEW_PARAM) || undefined;
}

/**
 * `to` (a path with an optional query and hash) reading `preview`, or production when it is undefined. The other
 * parameters and the hash are kept.
 *
 * @example
 * withPreview('/lineage?node=dataset:ns:a#x', 'pr-7') // '/lineage?node=dataset:ns:a&preview=pr-7#x'
 */
export function withPreview(to: string, preview: string | undefined): string {
  const hashAt = to.indexOf('#');
  const hash = hashAt < 0 ? '' : to.slice(hashAt);
  const rest = hashAt < 0 ? to : to.slice(0, hashAt);
  const queryAt = rest.indexOf('?');
  const path = queryAt < 0 ? rest : rest.slice(0, queryAt);
  const search = new URLSearchParams(queryAt < 0 ? '' : rest.slice(queryAt + 1));
  if (preview === undefined) search.delete(PREVIEW_PARAM);
  else search.set(PREVIEW_PARAM, preview);
  const text = readable(search);
  return `${path}${text ? `?${text}` : ''}${hash}`;
}

/** What a navigation brings: React Router's location and navigation type. */
export interface Navigation {
  readonly search: string;
  readonly state: unknown;
  /** `POP`: the browser's back or forward, or the first page: the address is all there is to go by. */
  readonly type: 'POP' | 'PUSH' | 'REPLACE';
}

/**
 * The preview shown after `navigation`, `previous` the one shown before it: the address's when it names one;
 * otherwise production after back, forward or a link to production, and `previous` after any other link (the
 * explorer's links do not carry the parameter).
 */
export function previewAfter(previous: string | undefined, navigation: Navigation): string | undefined {
  const named = previewOf(navigation.search);
  if (named !== undefined) return named;
  if (navigation.type === 'POP' || goesToProduction(navigation.state)) return undefined;
  return previous;
}

/**
 * The API path (under `/api/v1`) a request of the explorer sends: reads carry the preview shown; writes do not
 * (the server refuses them: edits are production's), nor do the previews' own routes, which are production's.
 */
export function apiPathIn(preview: string | undefined, method: string, path: string): string {
  if (preview === undefined || method !== 'GET' || /^\/previews(?:[/?]|$)/.test(path)) return path;
  return `${path}${path.includes('?') ? '&' : '?'}${PREVIEW_PARAM}=${encodeURIComponent(preview)}`;
}

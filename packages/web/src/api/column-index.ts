import { api } from './client.js';
import type { Dataset } from './types.js';

/** Bounds on what the browser reads to search columns: the server's /search has no column search yet. */
const maxNamespaces = 50;
const datasetsPerNamespace = 500;
const refreshMs = 60_000;

let cached: { at: number; datasets: Promise<Dataset[]> } | undefined;

/**
 * The datasets (with their fields) of the first {@link maxNamespaces} namespaces, read once a minute at most,
 * for the palette's column search. A stop-gap until the server's `/search` searches columns.
 */
export function datasetsForColumnSearch(): Promise<Dataset[]> {
  if (cached && Date.now() - cached.at < refreshMs) return cached.datasets;
  const datasets = api.namespaces().then(async ({ namespaces }) => {
    const pages = await Promise.all(
      namespaces.slice(0, maxNamespaces).map((n) => api.datasets(n.name, datasetsPerNamespace)),
    );
    return pages.flatMap((page) => page.datasets);
  });
  cached = { at: Date.now(), datasets };
  // A failed read must not be cached: the next keystroke tries again.
  datasets.catch(() => (cached = undefined));
  return datasets;
}

/** What a rule matches on; each list is "any of", and every field given must match. */
export interface EventMatch {
  /** Namespaces (of the job, or of a DatasetEvent's dataset); `*` matches any run of characters. */
  readonly namespace?: readonly string[];
  /** Job names, with `*` as above. */
  readonly job?: readonly string[];
  /** RunEvent types (START, RUNNING, COMPLETE, ABORT, FAIL, OTHER); DATASET and JOB name the other kinds. */
  readonly eventType?: readonly string[];
  /** Producer URIs, with `*` as above. */
  readonly producer?: readonly string[];
}

/** Simple rewrites applied to what a route sends. */
export interface EventTransform {
  /** Facet names removed wherever they appear (run, job, datasets, input and output facets). */
  readonly dropFacets?: readonly string[];
  /** Namespaces renamed wherever they appear (job, parent and root jobs, datasets). */
  readonly renameNamespaces?: Readonly<Record<string, string>>;
}

/** A routing rule: events that match `include` (all when absent) and not `exclude` go to `sinks`. */
export interface Route {
  readonly sinks: readonly string[];
  readonly include?: EventMatch;
  readonly exclude?: EventMatch;
  readonly transform?: EventTransform;
}

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const globCache = new Map<string, RegExp>();
function glob(pattern: string): RegExp {
  let regex = globCache.get(pattern);
  if (!regex) {
    regex = new RegExp(
      `^${pattern
        .split('*')
        .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
        .join('.*')}$`,
    );
    globCache.set(pattern, regex);
  }
  return regex;
}

const anyGlob = (patterns: readonly string[] | undefined, value: string | undefined) =>
  patterns === undefined || (value !== undefined && patterns.some((pattern) => glob(pattern).test(value)));

/** Whether `event` matches every field of `match`. */
export function matches(event: Json, match: EventMatch): boolean {
  const job = isObject(event.job) ? event.job : undefined;
  const dataset = isObject(event.dataset) ? event.dataset : undefined;
  const text = (value: unknown) => (typeof value === 'string' ? value : undefined);
  const namespace = text(job?.namespace) ?? text(dataset?.namespace);
  const kind = event.run !== undefined ? (text(event.eventType) ?? 'OTHER') : job ? 'JOB' : 'DATASET';
  return (
    anyGlob(match.namespace, namespace) &&
    anyGlob(match.job, text(job?.name)) &&
    (match.eventType === undefined || match.eventType.includes(kind)) &&
    anyGlob(match.producer, text(event.producer))
  );
}

/** A copy of `event` with the transform applied (the event itself is left alone). */
export function transformEvent(event: Json, transform: EventTransform): Json {
  const copy = structuredClone(event);
  const drop = new Set(transform.dropFacets ?? []);
  const rename = transform.renameNamespaces ?? {};
  const renameIn = (node: unknown) => {
    if (isObject(node) && typeof node.namespace === 'string' && rename[node.namespace] !== undefined)
      node.namespace = rename[node.namespace];
  };
  const dropIn = (facets: unknown) => {
    if (isObject(facets)) for (const name of drop) delete facets[name];
  };
  const list = (value: unknown): unknown[] => (Array.isArray(value) ? (value as unknown[]) : []);
  const datasets: unknown[] = [
    ...list(copy.inputs),
    ...list(copy.outputs),
    ...(copy.dataset === undefined ? [] : [copy.dataset]),
  ];
  for (const dataset of datasets) {
    renameIn(dataset);
    if (!isObject(dataset)) continue;
    dropIn(dataset.facets);
    dropIn(dataset.inputFacets);
    dropIn(dataset.outputFacets);
  }
  renameIn(copy.job);
  if (isObject(copy.job)) dropIn(copy.job.facets);
  if (isObject(copy.run)) {
    const facets = copy.run.facets;
    dropIn(facets);
    if (isObject(facets) && isObject(facets.parent)) {
      renameIn(facets.parent.job);
      if (isObject(facets.parent.root)) renameIn(facets.parent.root.job);
    }
  }
  return copy;
}

/**
 * Where each event goes: per sink, the text to send. Routes are tried in order; a sink gets the event from the
 * first route that matches it and names that sink, with that route's transform. With no routes, every sink gets
 * every event as it came.
 */
export function createRouter(routes: readonly Route[], allSinks: readonly string[]) {
  return (event: Json, text: string): Map<string, string> => {
    const out = new Map<string, string>();
    if (routes.length === 0) {
      for (const sink of allSinks) out.set(sink, text);
      return out;
    }
    for (const route of routes) {
      if (route.include && !matches(event, route.include)) continue;
      if (route.exclude && matches(event, route.exclude)) continue;
      const pending = route.sinks.filter((sink) => !out.has(sink));
      if (pending.length === 0) continue;
      const sent = route.transform ? JSON.stringify(transformEvent(event, route.transform)) : text;
      for (const sink of pending) out.set(sink, sent);
    }
    return out;
  };
}

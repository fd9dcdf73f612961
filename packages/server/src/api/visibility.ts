import type { FastifyRequest } from 'fastify';
import type { NamespaceScope } from '../store/queries/stats.js';
import type { ReadModel } from '../store/read-model.js';

/** The namespaces a caller may read, by name and id, as the queries that list across namespaces filter them. */
export type Readable = NamespaceScope;

/**
 * What of the store the caller of `request` may read: undefined when every namespace (no filter needed), else the
 * known namespaces their grants cover. Routes that list or count across namespaces pass this to their queries;
 * everything else they answer is filtered again by the security layer (src/security/redact.ts).
 */
export function readableNamespaces(request: FastifyRequest, state: ReadModel): Readable | undefined {
  const principal = request.principal;
  if (principal.readsAll) return undefined;
  const names: string[] = [];
  const ids: number[] = [];
  for (const namespace of state.namespaces.values()) {
    if (!principal.canRead(namespace.name)) continue;
    names.push(namespace.name);
    ids.push(namespace.id);
  }
  return { names, ids };
}

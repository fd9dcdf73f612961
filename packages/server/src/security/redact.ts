import { jobUuid } from '../model/identity.js';
import { parseNodeId } from '../core/node-id.js';
import type { Principal } from './access.js';

/** What a hidden namespace or name reads as. */
export const REDACTED = '(redacted)';

const NODE_ID = /^(dataset|job|datasetField):/;

/**
 * The answer `value` with everything of the namespaces `principal` may not read taken out. It is the last line
 * of defence, applied to every JSON answer of every read route for a caller who cannot read every namespace (the
 * routes that list or count across namespaces also filter in their queries, so that counts and pages are right):
 *
 * - an object that names a hidden namespace (a `namespace` field, an `id` of `{namespace, name}`, a `nodeId`) is
 *   dropped from the list it is in; outside a list it becomes a placeholder `{namespace: '(redacted)', name:
 *   '(redacted)'}`;
 * - a lineage node in a hidden namespace stays, as a placeholder node without data whose id is
 *   `<type>:(redacted):<n>`, so that the edges into it keep the graph's shape without naming it;
 * - any string that is a nodeId in a hidden namespace becomes the same placeholder id.
 */
export function redactAnswer(
  value: unknown,
  principal: Principal,
  readableNamespaces: () => readonly string[],
): unknown {
  let readable: readonly string[] | undefined;
  // A job's parent is named without its namespace (Marquez's parentJobName, parentJobUuid); the uuid is that of
  // job:<namespace>:<name>, so the parent is visible when it is the uuid of one in a namespace the caller reads.
  const visibleParent = (name: string, uuid: string) =>
    (readable ??= readableNamespaces()).some((namespace) => jobUuid(namespace, name) === uuid);
  const placeholders = new Map<string, string>();
  const hiddenNodeId = (text: string): string | undefined => {
    if (!NODE_ID.test(text)) return undefined;
    let namespace: string;
    let type: string;
    try {
      const parsed = parseNodeId(text);
      if (parsed.type === 'run') return undefined;
      namespace = parsed.namespace;
      type = parsed.type;
    } catch {
      return undefined;
    }
    if (principal.canRead(namespace)) return undefined;
    let placeholder = placeholders.get(text);
    if (placeholder === undefined) {
      placeholder = `${type}:${REDACTED}:${placeholders.size + 1}`;
      placeholders.set(text, placeholder);
    }
    return placeholder;
  };
  const hidden = (object: Record<string, unknown>): boolean => {
    if (typeof object.namespace === 'string' && !principal.canRead(object.namespace)) return true;
    const id = object.id;
    if (typeof id === 'object' && id !== null && !Array.isArray(id)) {
      const ns = (id as Record<string, unknown>).namespace;
      if (typeof ns === 'string' && !principal.canRead(ns)) return true;
    }
    for (const key of ['nodeId', 'id']) {
      const text = object[key];
      if (typeof text === 'string' && hiddenNodeId(text) !== undefined) return true;
    }
    return false;
  };
  const isLineageNode = (object: Record<string, unknown>) =>
    typeof object.id === 'string' && 'inEdges' in object && 'outEdges' in object;

  const walk = (item: unknown, inList: boolean, depth: number): unknown => {
    if (depth > 200) return null;
    if (typeof item === 'string') return hiddenNodeId(item) ?? item;
    if (typeof item !== 'object' || item === null) return item;
    if (Array.isArray(item)) {
      const kept: unknown[] = [];
      for (const element of item) {
        if (typeof element === 'object' && element !== null && !Array.isArray(element)) {
          const object = element as Record<string, unknown>;
          if (hidden(object)) {
            if (isLineageNode(object)) kept.push(placeholderNode(object));
            continue;
          }
        }
        kept.push(walk(element, true, depth + 1));
      }
      return kept;
    }
    const object = item as Record<string, unknown>;
    if (!inList && hidden(object)) return { namespace: REDACTED, name: REDACTED };
    const out: Record<string, unknown> = {};
    for (const [key, child] of Object.entries(object)) out[key] = walk(child, false, depth + 1);
    if (typeof object.parentJobName === 'string') {
      const uuid = typeof object.parentJobUuid === 'string' ? object.parentJobUuid : '';
      if (!visibleParent(object.parentJobName, uuid)) {
        delete out.parentJobName;
        delete out.parentJobUuid;
      }
    }
    return out;
  };
  const placeholderNode = (node: Record<string, unknown>) => ({
    id: hiddenNodeId(node.id as string),
    type: node.type,
    data: null,
    inEdges: walk(node.inEdges, false, 1),
    outEdges: walk(node.outEdges, false, 1),
  });
  return walk(value, false, 0);
}

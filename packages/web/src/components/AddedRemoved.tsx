import type { ReactNode } from 'react';
import { nodeLabel } from '../paths.js';

/**
 * Node ids added and removed, each marked in words (not by colour alone); `show` renders a node, its label by
 * default (a link where the node has a page to go to).
 */
export function AddedRemoved({
  label,
  added,
  removed,
  show = (nodeId) => nodeLabel(nodeId),
}: {
  label: string;
  added: readonly string[];
  removed: readonly string[];
  show?: (nodeId: string, side: 'added' | 'removed') => ReactNode;
}) {
  return (
    <ul className="link-list" aria-label={label}>
      {added.map((id) => (
        <li key={`+${id}`}>
          <span className="diff-word diff-word--added">+ added</span> {show(id, 'added')}
        </li>
      ))}
      {removed.map((id) => (
        <li key={`-${id}`}>
          <span className="diff-word diff-word--removed">− removed</span> {show(id, 'removed')}
        </li>
      ))}
    </ul>
  );
}

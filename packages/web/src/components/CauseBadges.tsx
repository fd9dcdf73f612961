import type { CauseKind } from '../api/analysis.js';
import { causeLabels, causeMarks } from './RootCause.js';

/** The root causes at a graph node, in words with a mark: never colour alone. */
export function CauseBadges({ causes }: { causes: readonly CauseKind[] }) {
  if (causes.length === 0) return null;
  return (
    <div className="graph-node__causes" data-testid="cause-badges">
      {causes.map((kind) => (
        <span key={kind} className={`cause-badge cause-badge--${kind}`}>
          <span aria-hidden="true">{causeMarks[kind]}</span> {causeLabels[kind]}
        </span>
      ))}
    </div>
  );
}

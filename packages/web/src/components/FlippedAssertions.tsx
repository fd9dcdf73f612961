import { Link } from 'react-router';
import type { FlippedAssertion } from '../api/analysis.js';
import { nodeLabel, paths } from '../paths.js';

/** Assertions that passed at one side of a comparison and failed at the other (run diff, graph diff). */
export function FlippedAssertions({ assertions }: { assertions: readonly FlippedAssertion[] }) {
  return (
    <ul className="link-list" aria-label="Assertions that flipped">
      {assertions.map((a) => (
        <li key={`${a.dataset}:${a.assertion}:${a.column}`}>
          <span className="mono">
            {a.assertion}({a.column})
          </span>{' '}
          on <Link to={paths.node(a.dataset)}>{nodeLabel(a.dataset)}</Link>: {a.from ? 'passed' : 'failed'} →{' '}
          <strong>{a.to ? 'passed' : 'failed'}</strong>
        </li>
      ))}
    </ul>
  );
}

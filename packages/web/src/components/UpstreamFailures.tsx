import { Link } from 'react-router';
import type { JobNode } from '../api/types.js';
import { formatTime } from '../format.js';
import { paths } from '../paths.js';

/** A banner naming the failing jobs upstream of a dataset or job, each a link to its page. */
export function UpstreamFailures({
  failing,
  lineageUrl,
}: {
  failing: readonly JobNode[];
  lineageUrl: string;
}) {
  if (failing.length === 0) return null;
  return (
    <div className="alert alert--failed" role="alert" aria-label="Failed upstream">
      <strong>
        {failing.length === 1 ? 'A job upstream failed:' : `${failing.length} jobs upstream failed:`}
      </strong>
      <ul>
        {failing.map((job) => (
          <li key={job.id}>
            <Link to={paths.job(job.data.namespace, job.data.name)}>{job.data.name}</Link>{' '}
            <span className="muted">
              ({job.data.namespace}, {job.data.latestRun?.state.toLowerCase()}{' '}
              {formatTime(job.data.latestRun?.endedAt ?? job.data.latestRun?.updatedAt)})
            </span>
          </li>
        ))}
      </ul>
      <Link to={lineageUrl}>Show the path in the lineage graph</Link>
    </div>
  );
}

import { api } from '../api/client.js';
import type { Incident } from '../api/types.js';
import { useApi, type ApiState } from './useApi.js';

/**
 * Most unresolved incidents one look reads. Incidents are one per broken root, so even a bad day has few; past
 * this many the oldest are left out of badges and the home page, and the incidents page still lists them.
 */
export const UNRESOLVED_LIMIT = 500;

/** The unresolved (open or acknowledged) incidents, newest first; none when the server has no alerts configured. */
export function useUnresolvedIncidents(): ApiState<Incident[]> {
  return useApi('incidents:unresolved', (signal) =>
    api
      .incidents({ status: 'unresolved', limit: UNRESOLVED_LIMIT }, signal)
      .then((answer) => answer.incidents),
  );
}

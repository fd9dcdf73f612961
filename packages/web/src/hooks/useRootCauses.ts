import { api } from '../api/client.js';
import type { RootCauseResult } from '../api/analysis.js';
import { useApi, type ApiState } from './useApi.js';

/** The server's root cause of each of `targets` (datasets or columns), in the order given. */
export function useRootCauses(targets: readonly string[]): ApiState<RootCauseResult[]> {
  return useApi(`root-cause:${targets.join('\n')}`, (signal) =>
    Promise.all(targets.map((target) => api.rootCause(target, signal))),
  );
}

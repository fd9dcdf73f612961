import { api } from '../api/client.js';
import type { Run } from '../api/types.js';
import { useApi, type ApiState } from './useApi.js';

/** How many recent runs of each job are read for histories and charts. */
export const historyRuns = 50;

/** The recent runs of each of `jobs` (namespace and name), newest first per job, all in one list. */
export function useRunsOf(jobs: readonly { namespace: string; name: string }[]): ApiState<Run[]> {
  const key = jobs.map((j) => `${j.namespace}:${j.name}`).join('\n');
  return useApi(`runs-of:${key}`, async (signal) => {
    const answers = await Promise.all(jobs.map((j) => api.jobRuns(j.namespace, j.name, historyRuns, signal)));
    return answers.flatMap((a) => a.runs);
  });
}

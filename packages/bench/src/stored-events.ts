import { createHttpClient } from './http-client.js';

/** Acknowledged events against what the server says it holds. */
export interface StoredEventsCheck {
  /** Events the server acknowledged (201, or counted successful in a batch answer) during the whole run. */
  readonly acknowledged: number;
  /** `totalCount` of GET /api/v1/events/lineage at the end of the run. */
  readonly stored: number;
}

/**
 * Asks the server how many events it stores, to compare with how many it acknowledged: every generated event is
 * distinct, so fewer stored than acknowledged means acknowledged events were lost. Fast ingest that drops events
 * is not fast ingest. Returns undefined when the server cannot answer (e.g. the events API is missing).
 */
export async function checkStoredEvents(
  baseUrl: string,
  acknowledged: number,
): Promise<StoredEventsCheck | undefined> {
  const client = createHttpClient(baseUrl, { maxSockets: 1 });
  try {
    const response = await client.get('/api/v1/events/lineage?limit=1');
    if (response.status !== 200) return undefined;
    const total = (JSON.parse(response.body) as { totalCount?: unknown }).totalCount;
    return typeof total === 'number' ? { acknowledged, stored: total } : undefined;
  } catch {
    return undefined;
  } finally {
    client.close();
  }
}

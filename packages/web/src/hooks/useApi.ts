import { useEffect, useState } from 'react';

/** The three states every view shows: loading, an error a person can act on, or the data. */
export type ApiState<T> =
  | { status: 'loading'; data?: undefined; error?: undefined }
  | { status: 'error'; data?: undefined; error: Error }
  | { status: 'ready'; data: T; error?: undefined };

/**
 * Runs `load` when `key` changes and tracks its state. The previous request is aborted, so a fast click
 * through pages never shows the answer of an older one.
 *
 * @param key - a string naming what is loaded (the URL path is a good one); a change reloads.
 * @example
 * const dataset = useApi(`dataset:${ns}:${name}`, (signal) => api.dataset(ns, name, signal));
 */
export function useApi<T>(key: string, load: (signal: AbortSignal) => Promise<T>): ApiState<T> {
  const [state, setState] = useState<ApiState<T> & { key: string }>({ status: 'loading', key });
  useEffect(() => {
    const controller = new AbortController();
    setState({ status: 'loading', key });
    load(controller.signal).then(
      (data) => {
        if (!controller.signal.aborted) setState({ status: 'ready', data, key });
      },
      (error: unknown) => {
        if (!controller.signal.aborted)
          setState({
            status: 'error',
            error: error instanceof Error ? error : new Error(String(error)),
            key,
          });
      },
    );
    return () => controller.abort();
    // `load` is a new closure on every render; `key` says when what it loads changes.
  }, [key]);
  // Between a key change and the effect, the old data must not show under the new heading.
  return state.key === key ? state : { status: 'loading' };
}

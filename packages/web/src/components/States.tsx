import type { ReactNode } from 'react';
import { ApiError } from '../api/client.js';
import type { ApiState } from '../hooks/useApi.js';

/** A quiet placeholder while data loads; `role=status` so screen readers announce it. */
export function Loading({ what }: { what: string }) {
  return (
    <p className="state state--loading" role="status">
      Loading {what}…
    </p>
  );
}

/** Said when there is nothing to show, with what the person can do about it. */
export function Empty({ children }: { children: ReactNode }) {
  return <p className="state state--empty">{children}</p>;
}

/** An error as a sentence, not a stack: the server's message, or how to start the server. */
export function ErrorMessage({ error }: { error: Error }) {
  const unreachable = error instanceof ApiError && error.status === 0;
  return (
    <div className="state state--error" role="alert">
      <strong>{unreachable ? 'The Headwater server is unreachable.' : 'Something went wrong.'}</strong>
      <p>{error.message}</p>
      {unreachable && (
        <p>
          Start it with <code>headwater serve</code>, then reload this page.
        </p>
      )}
    </div>
  );
}

/**
 * Renders the loading, error or not-found state of an {@link ApiState}, or `children(data)` once it is ready.
 */
export function Async<T>({
  state,
  what,
  notFound,
  children,
}: {
  state: ApiState<T>;
  what: string;
  notFound?: ReactNode;
  children: (data: T) => ReactNode;
}) {
  if (state.status === 'loading') return <Loading what={what} />;
  if (state.status === 'error') {
    if (notFound !== undefined && state.error instanceof ApiError && state.error.notFound)
      return <Empty>{notFound}</Empty>;
    return <ErrorMessage error={state.error} />;
  }
  return <>{children(state.data)}</>;
}

import { useSyncExternalStore } from 'react';
import { authState, subscribeAuth, type AuthState } from '../api/auth.js';

/** The explorer's session (see `api/auth.ts`); re-renders when one signs in or out, or a session ends. */
export function useAuth(): AuthState {
  return useSyncExternalStore(subscribeAuth, authState);
}

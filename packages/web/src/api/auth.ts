/**
 * The explorer's session: whether the server needs credentials, the credential that signs every API request
 * (a pasted API key or an OIDC access token), its refresh, and what happens when the server refuses it.
 * Framework-free; React reads it through `useAuth`.
 */
import {
  beginOidcSignIn,
  completeOidcSignIn,
  refreshOidcTokens,
  revokeOidcToken,
  type OidcSettings,
} from './oidc.js';

/** The server's `GET /api/v1/auth/config`. */
export interface AuthConfig {
  /** Whether a key exists or an issuer is configured: every request then needs credentials. */
  readonly authRequired: boolean;
  /** Whether some namespaces may be read without credentials (`--anonymous-read`). */
  readonly anonymousRead: boolean;
  /** The issuer and client for OIDC sign-in; null when the server offers none. */
  readonly oidc: OidcSettings | null;
}

/** What signs the explorer's requests. */
export interface Credential {
  readonly kind: 'key' | 'oidc';
  /** The API key or the access token: sent only in the Authorization header, never in a URL or a log. */
  readonly token: string;
  /** Who signed in, for the header. */
  readonly name: string;
  readonly refreshToken?: string;
  readonly expiresAtMs?: number;
}

/** Where the explorer stands: not known yet, no sign-in needed, signed in, or waiting for a sign-in. */
export type AuthState =
  | { readonly status: 'starting' }
  | { readonly status: 'open'; readonly config: AuthConfig }
  | { readonly status: 'signed-in'; readonly config: AuthConfig; readonly credential: Credential }
  | { readonly status: 'signed-out'; readonly config: AuthConfig; readonly reason?: string };

/**
 * sessionStorage, not localStorage and not a cookie: it belongs to this tab and ends with it, so a credential
 * does not outlive the window it was entered in nor spread to other tabs; it is never sent by the browser on
 * its own (no CSRF); and it survives a reload and the redirect back from the issuer, which memory alone would
 * not. A script injected into the page could read it, but it could as well call the API from the page; the
 * explorer loads no third-party script.
 */
const STORAGE_KEY = 'headwater.credential';
/** An access token this close to its expiry is refreshed before it is sent. */
const EXPIRY_MARGIN_MS = 30_000;

let state: AuthState = { status: 'starting' };
const listeners = new Set<() => void>();

function setState(next: AuthState): void {
  state = next;
  for (const listener of listeners) listener();
}

/** For useSyncExternalStore. */
export function subscribeAuth(listener: () => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

/** The session now (for useSyncExternalStore). */
export function authState(): AuthState {
  return state;
}

function store(credential: Credential | undefined): void {
  if (credential) sessionStorage.setItem(STORAGE_KEY, JSON.stringify(credential));
  else sessionStorage.removeItem(STORAGE_KEY);
}

function stored(): Credential | undefined {
  try {
    const value = JSON.parse(sessionStorage.getItem(STORAGE_KEY) ?? 'null') as Credential | null;
    return value && typeof value.token === 'string' ? value : undefined;
  } catch {
    return undefined;
  }
}

/** No credential: the sign-in screen, unless nothing needs one. */
function signedOutState(config: AuthConfig, reason?: string): AuthState {
  if (!config.authRequired || (config.anonymousRead && reason === undefined))
    return { status: 'open', config };
  return { status: 'signed-out', config, ...(reason !== undefined ? { reason } : {}) };
}

let starting: Promise<void> | undefined;

/**
 * Reads the server's auth configuration and the tab's stored credential, once. A server that cannot be reached
 * (or predates the endpoint) leaves the explorer open: its pages then say what failed.
 */
export function startAuth(): Promise<void> {
  starting ??= (async () => {
    let config: AuthConfig = { authRequired: false, anonymousRead: false, oidc: null };
    try {
      const response = await fetch('/api/v1/auth/config', { headers: { accept: 'application/json' } });
      if (response.ok) config = (await response.json()) as AuthConfig;
    } catch {
      // Unreachable: the pages' own requests report it.
    }
    const credential = stored();
    setState(credential ? { status: 'signed-in', config, credential } : signedOutState(config));
  })();
  return starting;
}

/** The server's message in an error answer, or its status line (a proxy's HTML error page says no more). */
export async function serverMessage(response: Response): Promise<string> {
  try {
    const body = (await response.json()) as { message?: unknown };
    if (typeof body.message === 'string') return body.message;
  } catch {
    // Not JSON.
  }
  return `${response.status} ${response.statusText}`;
}

/** Who `token` signs in as, from the server; throws the server's refusal. */
async function whoIs(token: string): Promise<string> {
  const response = await fetch('/api/v1/auth/me', {
    headers: { accept: 'application/json', authorization: `Bearer ${token}` },
  });
  if (!response.ok) throw new Error(await serverMessage(response));
  return ((await response.json()) as { name: string }).name;
}

function configOf(current: AuthState): AuthConfig {
  if (current.status === 'starting') throw new Error('The sign-in configuration is not read yet.');
  return current.config;
}

/** Signs in with a pasted API key: checked by the server first, refused with its message. */
export async function signInWithKey(key: string): Promise<void> {
  const config = configOf(state);
  const token = key.trim();
  if (!token) throw new Error('Paste an API key (it starts with hw_).');
  const credential: Credential = { kind: 'key', token, name: await whoIs(token) };
  store(credential);
  setState({ status: 'signed-in', config, credential });
}

/** Leaves for the issuer's login page; `returnTo` is the explorer path to come back to. */
export async function signInWithOidc(returnTo: string): Promise<void> {
  const { oidc } = configOf(state);
  if (!oidc) throw new Error('This server has no OIDC sign-in configured (--oidc-client-id).');
  await beginOidcSignIn(oidc, returnTo);
}

/**
 * On the callback page: exchanges the code, checks that the server accepts the token (a valid token matching no
 * `--oidc-grants` rule is refused there), and keeps it. Returns the path to go back to.
 */
export async function completeSignIn(callbackUrl: URL): Promise<string> {
  await startAuth();
  const config = configOf(state);
  if (!config.oidc) throw new Error('This server has no OIDC sign-in configured (--oidc-client-id).');
  const { tokens, returnTo } = await completeOidcSignIn(config.oidc, callbackUrl);
  const serverName = await whoIs(tokens.accessToken);
  const credential: Credential = {
    kind: 'oidc',
    token: tokens.accessToken,
    name: tokens.name ?? serverName,
    ...(tokens.refreshToken ? { refreshToken: tokens.refreshToken } : {}),
    ...(tokens.expiresAtMs !== undefined ? { expiresAtMs: tokens.expiresAtMs } : {}),
  };
  store(credential);
  setState({ status: 'signed-in', config, credential });
  return returnTo.startsWith('/') && !returnTo.startsWith('//') ? returnTo : '/';
}

/** Ends the session here (and revokes the refresh token at the issuer, when it can). */
export async function signOut(): Promise<void> {
  if (state.status !== 'signed-in') return;
  const { config, credential } = state;
  store(undefined);
  setState(config.anonymousRead ? { status: 'open', config } : signedOutState(config, 'You signed out.'));
  if (credential.kind === 'oidc' && config.oidc && credential.refreshToken)
    await revokeOidcToken(config.oidc, credential.refreshToken);
}

/** Ends the session because the server or the issuer refused it; the sign-in screen shows `reason`. */
function endSession(reason: string): void {
  if (state.status === 'starting') return;
  store(undefined);
  setState(signedOutState(state.config, reason));
}

let refreshing: Promise<Credential | undefined> | undefined;

/** Refreshes the OIDC session once for all requests waiting on it; undefined (and signed out) if it cannot. */
function refresh(credential: Credential): Promise<Credential | undefined> {
  refreshing ??= (async () => {
    const config = configOf(state);
    try {
      if (!config.oidc || !credential.refreshToken) throw new Error('no refresh token');
      const tokens = await refreshOidcTokens(config.oidc, credential.refreshToken);
      const next: Credential = {
        ...credential,
        token: tokens.accessToken,
        ...(tokens.refreshToken ? { refreshToken: tokens.refreshToken } : {}),
        ...(tokens.expiresAtMs !== undefined ? { expiresAtMs: tokens.expiresAtMs } : {}),
      };
      store(next);
      setState({ status: 'signed-in', config, credential: next });
      return next;
    } catch {
      endSession('Your session expired: sign in again.');
      return undefined;
    }
  })().finally(() => (refreshing = undefined));
  return refreshing;
}

/** The token to send now (refreshed first when it is about to expire), or undefined when there is none. */
export async function currentToken(): Promise<string | undefined> {
  if (state.status !== 'signed-in') return undefined;
  const { credential } = state;
  if (credential.expiresAtMs !== undefined && credential.expiresAtMs - EXPIRY_MARGIN_MS <= Date.now())
    return (await refresh(credential))?.token;
  return credential.token;
}

/**
 * The server answered 401 to a request sent with `token`. On a first refusal an OIDC session is refreshed once
 * (true: send the request again); otherwise, or when the request was already sent again, the session ends with
 * the server's `message` and the answer is false.
 */
export async function credentialRefused(
  token: string | undefined,
  message: string,
  retried: boolean,
): Promise<boolean> {
  if (state.status === 'signed-in') {
    // Refreshed, or signed in, while this request was out: it only needs sending again.
    if (state.credential.token !== token) return !retried;
    if (!retried && state.credential.refreshToken) return (await refresh(state.credential)) !== undefined;
    const what = state.credential.kind === 'key' ? 'API key' : 'session';
    endSession(`The server refused your ${what}: ${message} Sign in again.`);
  } else if (state.status === 'open') {
    endSession(`This server needs you to sign in: ${message}`);
  }
  // Already signed out: the first refusal's reason stands.
  return false;
}

/**
 * OIDC sign-in for the explorer: the authorisation code flow with PKCE, in the browser, as a public client (no
 * secret). oauth4webapi does the protocol (discovery, PKCE, state and nonce, the ID token's claims, refresh,
 * revocation); this module only keeps what must survive the redirect to the issuer and back.
 */
import * as oauth from 'oauth4webapi';

/** What the server's `/api/v1/auth/config` says about the issuer (`--oidc-issuer`, `--oidc-client-id`, `--oidc-scopes`). */
export interface OidcSettings {
  readonly issuer: string;
  readonly clientId: string;
  readonly scopes: string;
}

/** The tokens of a signed-in session. */
export interface OidcTokens {
  readonly accessToken: string;
  readonly refreshToken?: string;
  /** When the access token expires (from `expires_in`); undefined when the issuer did not say. */
  readonly expiresAtMs?: number;
  /** Who signed in, from the ID token: a user name, e-mail, name or subject. */
  readonly name?: string;
}

/** Where the issuer sends the browser back; register `<explorer origin>/signin/callback` as the client's redirect URI. */
export const CALLBACK_PATH = '/signin/callback';

/**
 * The PKCE verifier, state and nonce live in sessionStorage between leaving for the issuer and coming back (a
 * full page load, so memory is gone): this tab only, and removed as soon as the code is exchanged.
 */
const PENDING_KEY = 'headwater.oidc.pending';

interface Pending {
  readonly codeVerifier: string;
  readonly state: string;
  readonly nonce: string;
  /** The explorer path to return to (a path, never a token). */
  readonly returnTo: string;
}

/** Refuses an issuer over plain HTTP, except on this machine's loopback (a local issuer, as in tests). */
function requestOptions(issuer: URL): { [oauth.allowInsecureRequests]?: boolean } {
  const loopback = ['localhost', '127.0.0.1', '[::1]'].includes(issuer.hostname);
  return issuer.protocol === 'http:' && loopback ? { [oauth.allowInsecureRequests]: true } : {};
}

const discovered = new Map<string, Promise<oauth.AuthorizationServer>>();

/** The issuer's endpoints, from its discovery document (once per page load). */
function discover(settings: OidcSettings): Promise<oauth.AuthorizationServer> {
  let server = discovered.get(settings.issuer);
  if (!server) {
    const issuer = new URL(settings.issuer);
    server = oauth
      .discoveryRequest(issuer, { algorithm: 'oidc', ...requestOptions(issuer) })
      .then((response) => oauth.processDiscoveryResponse(issuer, response))
      .catch((error: unknown) => {
        discovered.delete(settings.issuer);
        throw new Error(
          `Cannot read the discovery document of the OIDC issuer ${settings.issuer}: ${messageOf(error)}`,
          { cause: error },
        );
      });
    discovered.set(settings.issuer, server);
  }
  return server;
}

const redirectUri = () => `${location.origin}${CALLBACK_PATH}`;

/** Sends the browser to the issuer's login page; it comes back to {@link CALLBACK_PATH}. */
export async function beginOidcSignIn(settings: OidcSettings, returnTo: string): Promise<void> {
  const server = await discover(settings);
  if (!server.authorization_endpoint)
    throw new Error(`The OIDC issuer ${settings.issuer} has no authorization_endpoint.`);
  const pending: Pending = {
    codeVerifier: oauth.generateRandomCodeVerifier(),
    state: oauth.generateRandomState(),
    nonce: oauth.generateRandomNonce(),
    returnTo,
  };
  const url = new URL(server.authorization_endpoint);
  url.search = new URLSearchParams({
    client_id: settings.clientId,
    redirect_uri: redirectUri(),
    response_type: 'code',
    scope: settings.scopes,
    code_challenge: await oauth.calculatePKCECodeChallenge(pending.codeVerifier),
    code_challenge_method: 'S256',
    state: pending.state,
    nonce: pending.nonce,
  }).toString();
  sessionStorage.setItem(PENDING_KEY, JSON.stringify(pending));
  location.assign(url);
}

/**
 * Finishes a sign-in on the callback page: checks the state, exchanges the code with the PKCE verifier and
 * checks the ID token's claims (issuer, audience, nonce, times).
 */
export async function completeOidcSignIn(
  settings: OidcSettings,
  callbackUrl: URL,
): Promise<{ tokens: OidcTokens; returnTo: string }> {
  const text = sessionStorage.getItem(PENDING_KEY);
  sessionStorage.removeItem(PENDING_KEY);
  if (!text)
    throw new Error('This sign-in was not started in this tab (or was already finished): sign in again.');
  const pending = JSON.parse(text) as Pending;
  const server = await discover(settings);
  const client: oauth.Client = { client_id: settings.clientId };
  const options = requestOptions(new URL(settings.issuer));
  const parameters = oauth.validateAuthResponse(server, client, callbackUrl, pending.state);
  const response = await oauth.authorizationCodeGrantRequest(
    server,
    client,
    oauth.None(),
    parameters,
    redirectUri(),
    pending.codeVerifier,
    options,
  );
  const result = await oauth.processAuthorizationCodeResponse(server, client, response, {
    expectedNonce: pending.nonce,
    requireIdToken: true,
  });
  return { tokens: tokensOf(result), returnTo: pending.returnTo };
}

/** New tokens for a refresh token (the issuer may rotate it: the answer's replaces the old one). */
export async function refreshOidcTokens(settings: OidcSettings, refreshToken: string): Promise<OidcTokens> {
  const server = await discover(settings);
  const client: oauth.Client = { client_id: settings.clientId };
  const response = await oauth.refreshTokenGrantRequest(
    server,
    client,
    oauth.None(),
    refreshToken,
    requestOptions(new URL(settings.issuer)),
  );
  const result = await oauth.processRefreshTokenResponse(server, client, response);
  const tokens = tokensOf(result);
  return { ...tokens, refreshToken: tokens.refreshToken ?? refreshToken };
}

/** Revokes `token` at the issuer when it has a revocation endpoint; failures are ignored (sign-out goes on). */
export async function revokeOidcToken(settings: OidcSettings, token: string): Promise<void> {
  try {
    const server = await discover(settings);
    if (!server.revocation_endpoint) return;
    const client: oauth.Client = { client_id: settings.clientId };
    await oauth.processRevocationResponse(
      await oauth.revocationRequest(
        server,
        client,
        oauth.None(),
        token,
        requestOptions(new URL(settings.issuer)),
      ),
    );
  } catch {
    // The local session ends whatever the issuer says; a refresh token left valid expires on its own.
  }
}

function tokensOf(result: oauth.TokenEndpointResponse): OidcTokens {
  const claims = oauth.getValidatedIdTokenClaims(result);
  const name = [claims?.preferred_username, claims?.email, claims?.name, claims?.sub].find(
    (value): value is string => typeof value === 'string' && value.length > 0,
  );
  return {
    accessToken: result.access_token,
    ...(result.refresh_token ? { refreshToken: result.refresh_token } : {}),
    ...(typeof result.expires_in === 'number' ? { expiresAtMs: Date.now() + result.expires_in * 1000 } : {}),
    ...(name ? { name } : {}),
  };
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

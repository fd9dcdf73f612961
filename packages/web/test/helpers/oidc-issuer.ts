import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair } from 'jose';
import Provider from 'oidc-provider';

/** The test account, the client id and the audience the issuer's access tokens are for. */
export const TEST_USER = { login: 'alice', password: 'correct horse battery staple', group: 'data-eng' };
export const CLIENT_ID = 'headwater-explorer';
export const AUDIENCE = 'https://headwater.test/api';
export const API_SCOPE = 'lineage:read';

/** A real OpenID provider on loopback, with the explorer registered as a public client (PKCE) and one account. */
export interface TestIssuer {
  readonly url: string;
  /** Registers the explorer whose sign-in comes back to `redirectUri`, and starts answering. */
  start(redirectUri: string): Promise<void>;
  /** Counts of token endpoint grants, by grant type. */
  readonly grants: Map<string, number>;
  close(): Promise<void>;
}

const page = (title: string, body: string) =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title}</title></head><body>${body}</body></html>`;

const loginForm = (uid: string, error?: string) =>
  page(
    'Test issuer: sign in',
    `<h1>Test issuer</h1>${error ? `<p role="alert">${error}</p>` : ''}
<form method="post" action="/interaction/${uid}">
<label>User name <input name="login" autocomplete="username"></label>
<label>Password <input name="password" type="password" autocomplete="current-password"></label>
<button type="submit">Log in</button></form>`,
  );

async function formOf(request: http.IncomingMessage): Promise<URLSearchParams> {
  let text = '';
  for await (const chunk of request) text += String(chunk);
  return new URLSearchParams(text);
}

/**
 * Binds the issuer's port first (the Headwater server under test needs the issuer's URL, and the issuer needs the
 * explorer's redirect URI, which exists only once that server listens). The login page is the test's own (the
 * library's development pages load fonts from the internet); the consent of this first-party client is given
 * without a page. Access tokens are JWTs for {@link AUDIENCE}, valid 5 minutes, with a `groups` claim.
 */
export async function openTestIssuer(): Promise<TestIssuer> {
  let handler: http.RequestListener = (_request, response) => response.writeHead(503).end();
  const server = http.createServer((request, response) => handler(request, response));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const grants = new Map<string, number>();

  const start = async (redirectUri: string) => {
    const { privateKey } = await generateKeyPair('RS256', { extractable: true });
    const provider = new Provider(url, {
      clients: [
        {
          client_id: CLIENT_ID,
          token_endpoint_auth_method: 'none',
          redirect_uris: [redirectUri],
          grant_types: ['authorization_code', 'refresh_token'],
          response_types: ['code'],
        },
      ],
      jwks: { keys: [{ ...(await exportJWK(privateKey)), kid: 'test-1', alg: 'RS256', use: 'sig' }] },
      cookies: { keys: ['test-issuer-cookie-key'] },
      scopes: ['openid', 'profile', 'offline_access', API_SCOPE],
      claims: { openid: ['sub'], profile: ['preferred_username'] },
      findAccount: (_ctx, id) =>
        id === TEST_USER.login
          ? { accountId: id, claims: () => ({ sub: id, preferred_username: id }) }
          : undefined,
      interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
      features: {
        devInteractions: { enabled: false },
        revocation: { enabled: true },
        resourceIndicators: {
          enabled: true,
          defaultResource: () => AUDIENCE,
          useGrantedResource: () => true,
          getResourceServerInfo: () => ({
            scope: API_SCOPE,
            audience: AUDIENCE,
            accessTokenFormat: 'jwt',
            accessTokenTTL: 300,
            jwt: { sign: { alg: 'RS256' } },
          }),
        },
      },
      // The explorer is a public client: refresh tokens for it without offline_access (the library's default
      // asks for that scope and a consent prompt).
      issueRefreshToken: (_ctx, client) => client.grantTypeAllowed('refresh_token'),
      extraTokenClaims: (_ctx, token) =>
        'accountId' in token && token.accountId === TEST_USER.login
          ? { groups: [TEST_USER.group] }
          : undefined,
      pkce: { required: () => true },
    });
    provider.on('grant.success', (ctx) => {
      const type = String((ctx.oidc.params as Record<string, unknown> | undefined)?.grant_type);
      grants.set(type, (grants.get(type) ?? 0) + 1);
    });
    const callback = provider.callback();
    handler = (request, response) => {
      const match = /^\/interaction\/([^/?]+)/.exec(request.url ?? '');
      if (!match) return void callback(request, response);
      void (async () => {
        const details = await provider.interactionDetails(request, response);
        if (details.prompt.name === 'login') {
          if (request.method !== 'POST')
            return void response.writeHead(200, { 'content-type': 'text/html' }).end(loginForm(match[1]!));
          const form = await formOf(request);
          if (form.get('login') !== TEST_USER.login || form.get('password') !== TEST_USER.password)
            return void response
              .writeHead(200, { 'content-type': 'text/html' })
              .end(loginForm(match[1]!, 'Wrong user name or password.'));
          await provider.interactionFinished(
            request,
            response,
            { login: { accountId: TEST_USER.login } },
            { mergeWithLastSubmission: false },
          );
          return;
        }
        // Consent: everything asked for.
        const missing = details.prompt.details as {
          missingOIDCScope?: string[];
          missingResourceScopes?: Record<string, string[]>;
        };
        const grant = details.grantId
          ? (await provider.Grant.find(details.grantId))!
          : new provider.Grant({ accountId: details.session!.accountId, clientId: CLIENT_ID });
        if (missing.missingOIDCScope) grant.addOIDCScope(missing.missingOIDCScope.join(' '));
        for (const [resource, scopes] of Object.entries(missing.missingResourceScopes ?? {}))
          grant.addResourceScope(resource, scopes.join(' '));
        await provider.interactionFinished(
          request,
          response,
          { consent: { grantId: await grant.save() } },
          { mergeWithLastSubmission: true },
        );
      })().catch((error: unknown) => {
        response.writeHead(500, { 'content-type': 'text/plain' }).end(String(error));
      });
    };
  };

  return {
    url,
    start,
    grants,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

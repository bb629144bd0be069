/**
 * A real OpenID provider on loopback for tests: the certified `oidc-provider`, with users
 * and groups the test sets, its dev login form (any password) and consent granted at once
 * (a first-party client). In front of it a small proxy that is the issuer's address: it
 * records every request the relying party or the browser makes to the provider, and can
 * forge the token endpoint's ID token (signed by another key, for another audience,
 * expired, without its nonce) to show that each forgery is refused.
 */
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { decodeJwt, exportJWK, generateKeyPair, type JWK, SignJWT } from 'jose';
import Provider from 'oidc-provider';

export interface ProviderUser {
  username: string;
  groups: string[];
}

type SigningKey = Awaited<ReturnType<typeof generateKeyPair>>['privateKey'];

export type Forgery = 'other-key' | 'wrong-audience' | 'expired' | 'no-nonce' | null;

export interface TestProvider {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** Users by subject (`sub`): what the login form accepts as its login. */
  users: Map<string, ProviderUser>;
  /** The next token answers' ID token is forged this way (null: as the provider signed it). */
  forge: Forgery;
  /** Every request that reached the provider: method, URL, headers and body. */
  requests: Array<{ method: string; url: string; headers: string; body: string }>;
  /** Stops answering (the port is kept closed) and starts again. */
  pause(): Promise<void>;
  resume(): Promise<void>;
  close(): Promise<void>;
}

const listen = (server: Server, port = 0) =>
  new Promise<number>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve((server.address() as AddressInfo).port));
  });
const closeServer = (server: Server) =>
  new Promise<void>((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });

export async function startProvider(redirectUri: string, issuerPort = 0): Promise<TestProvider> {
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const jwk: JWK = { ...(await exportJWK(privateKey)), kid: 'provider-key', alg: 'RS256', use: 'sig' };
  const other = await generateKeyPair('RS256');
  const clientId = 'logscope';
  const clientSecret = 'a-client-secret-long-enough-for-hs256-0123456789';
  const users = new Map<string, ProviderUser>();

  // The proxy listens first: its address is the issuer.
  const proxy = createServer();
  const proxyPort = await listen(proxy, issuerPort);
  const issuer = `http://127.0.0.1:${proxyPort}`;

  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: clientId,
        client_secret: clientSecret,
        redirect_uris: [redirectUri],
        grant_types: ['authorization_code'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_basic',
      },
    ],
    jwks: { keys: [jwk] },
    cookies: { keys: ['test-cookie-key-0123456789'] },
    scopes: ['openid', 'offline_access', 'profile', 'email', 'groups'],
    claims: {
      openid: ['sub'],
      profile: ['preferred_username', 'name'],
      email: ['email'],
      groups: ['groups'],
    },
    conformIdTokenClaims: false,
    ttl: {
      AccessToken: 600,
      AuthorizationCode: 60,
      Grant: 600,
      IdToken: 600,
      Interaction: 600,
      Session: 600,
    },
    pkce: { required: () => true },
    features: { devInteractions: { enabled: true } },
    async findAccount(_ctx, sub) {
      const user = users.get(sub);
      if (!user) return undefined;
      return {
        accountId: sub,
        claims: async () => ({
          sub,
          preferred_username: user.username,
          name: user.username,
          email: `${user.username}@example.test`,
          groups: user.groups,
        }),
      };
    },
    // A first-party client: the scopes it asks for are granted without a consent page.
    async loadExistingGrant(ctx) {
      const oidc = ctx.oidc;
      const accountId = oidc.session?.accountId;
      if (!oidc.client || !accountId) return undefined;
      const grant = new oidc.provider.Grant({ clientId: oidc.client.clientId, accountId });
      grant.addOIDCScope(String(oidc.params?.scope ?? 'openid'));
      await grant.save();
      return grant;
    },
  });
  const inner = createServer(provider.callback());
  const innerPort = await listen(inner);

  const state: TestProvider = {
    issuer,
    clientId,
    clientSecret,
    users,
    forge: null,
    requests: [],
    async pause() {
      await closeServer(proxy);
    },
    async resume() {
      await listen(proxy, proxyPort);
    },
    async close() {
      await closeServer(proxy);
      await closeServer(inner);
    },
  };

  proxy.on('request', (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      state.requests.push({
        method: req.method ?? '',
        url: req.url ?? '',
        headers: JSON.stringify(req.headers),
        body: body.toString('utf8'),
      });
      const up = httpRequest(
        { host: '127.0.0.1', port: innerPort, method: req.method, path: req.url, headers: req.headers },
        (answer) => {
          const parts: Buffer[] = [];
          answer.on('data', (c: Buffer) => parts.push(c));
          answer.on('end', async () => {
            let out = Buffer.concat(parts);
            const headers = { ...answer.headers };
            if (req.url?.startsWith('/token') && state.forge && answer.statusCode === 200) {
              out = Buffer.from(
                await forged(out.toString('utf8'), state.forge, privateKey, other.privateKey),
              );
              delete headers['content-length'];
              delete headers.etag;
            }
            res.writeHead(answer.statusCode ?? 502, headers);
            res.end(out);
          });
        },
      );
      up.on('error', () => res.writeHead(502).end());
      up.end(body);
    });
  });
  return state;
}

/** The token answer with its ID token forged as asked, then signed by the provider's key or another. */
async function forged(text: string, how: Forgery, key: SigningKey, otherKey: SigningKey): Promise<string> {
  const answer = JSON.parse(text) as { id_token: string };
  const claims = { ...decodeJwt(answer.id_token) } as Record<string, unknown>;
  const now = Math.floor(Date.now() / 1000);
  if (how === 'wrong-audience') claims.aud = 'another-client';
  if (how === 'expired') {
    claims.iat = now - 7200;
    claims.exp = now - 3600;
  }
  if (how === 'no-nonce') delete claims.nonce;
  const signer = how === 'other-key' ? otherKey : key;
  answer.id_token = await new SignJWT(claims)
    .setProtectedHeader({ alg: 'RS256', kid: 'provider-key', typ: 'JWT' })
    .sign(signer);
  return JSON.stringify(answer);
}

/** A browser's cookies for one host: enough of a jar to walk the provider's pages. */
export class CookieJar {
  private readonly cookies = new Map<string, string>();
  take(setCookie: string[] | string | undefined): void {
    for (const line of [setCookie ?? []].flat()) {
      const [pair] = line.split(';');
      const eq = pair?.indexOf('=') ?? -1;
      if (!pair || eq < 0) continue;
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1).trim();
      if (/max-age=0|expires=thu, 01 jan 1970/i.test(line) || value === '') this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }
  header(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }
  get(name: string): string | undefined {
    return this.cookies.get(name);
  }
}

/**
 * Walks the provider's side of a sign-in as a browser would, from its authorization URL
 * to the redirect back to Logscope: the login form filled with `sub` (any password).
 * Answers the callback URL the provider sent the browser to.
 */
export async function loginAtProvider(authUrl: string, sub: string): Promise<URL> {
  const jar = new CookieJar();
  let url = authUrl;
  for (let hop = 0; hop < 10; hop++) {
    const res = await fetch(url, { redirect: 'manual', headers: { cookie: jar.header() } });
    jar.take(res.headers.getSetCookie());
    if (res.status >= 300 && res.status < 400) {
      const to = new URL(res.headers.get('location') ?? '', url);
      if (!to.href.startsWith(new URL(authUrl).origin)) return to;
      url = to.href;
      continue;
    }
    const html = await res.text();
    const action = /<form[^>]*action="([^"]+)"/.exec(html)?.[1];
    if (res.status !== 200 || !action)
      throw new Error(`provider answered ${res.status}: ${html.slice(0, 300)}`);
    const prompt = /name="prompt" value="([^"]+)"/.exec(html)?.[1] ?? 'login';
    const form = new URLSearchParams(
      prompt === 'login' ? { prompt, login: sub, password: 'any' } : { prompt },
    );
    const posted = await fetch(new URL(action.replace(/&amp;/g, '&'), url), {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie: jar.header(), 'content-type': 'application/x-www-form-urlencoded' },
      body: form,
    });
    jar.take(posted.headers.getSetCookie());
    url = new URL(posted.headers.get('location') ?? '', url).href;
  }
  throw new Error('the provider never sent the browser back');
}

// A real OpenID Connect provider for the sign-in tests: oidc-provider (a certified
// implementation from the npm registry) with its development sign-in page, started on
// 127.0.0.1 by tests/oidc_helpers.py. Nothing here re-implements the protocol.
//
// Usage: node provider.mjs ISSUER PORT CLIENT_ID SECRET_FILE REDIRECT_URI POST_LOGOUT_URI
//
// Any login is accepted (the development sign-in page asks for any login and password). The
// login is the account's email; a login starting with "admin" is in the group "cnb-admins".
// Three logins ask for a faulty ID token, as a broken or hostile provider would send it:
// "expired@..." (re-signed with the provider's key, expired an hour ago), "wrongaud@..."
// (re-signed, issued to another client with this one as authorized party) and "tampered@..." (claims changed after signing).
import { readFileSync } from 'node:fs';
import Provider from 'oidc-provider';
import { exportJWK, generateKeyPair, SignJWT, decodeJwt, decodeProtectedHeader } from 'jose';

const [issuer, port, clientId, secretFile, redirectUri, postLogoutUri] = process.argv.slice(2);
const clientSecret = readFileSync(secretFile, 'utf8').trim();
const { privateKey } = await generateKeyPair('RS256', { extractable: true });
const signingKey = { ...(await exportJWK(privateKey)), kid: 'test-key', use: 'sig', alg: 'RS256' };

const provider = new Provider(issuer, {
  clients: [{
    client_id: clientId,
    client_secret: clientSecret,
    redirect_uris: [redirectUri],
    post_logout_redirect_uris: [postLogoutUri],
    grant_types: ['authorization_code'],
    response_types: ['code'],
    token_endpoint_auth_method: 'client_secret_basic',
  }],
  jwks: { keys: [signingKey] },
  cookies: { keys: ['cookie-signing-key-for-tests-only'] },
  // the groups ride on the profile scope, as a Keycloak groups mapper on a default scope does
  claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name', 'groups'] },
  conformIdTokenClaims: false, // the scope's claims go into the ID token
  pkce: { required: () => true },
  async findAccount(ctx, id) {
    return {
      accountId: id,
      async claims() {
        return {
          sub: id,
          email: id,
          email_verified: !id.startsWith('unverified'),
          name: id.split('@')[0],
          groups: id.startsWith('admin') ? ['cnb-admins', 'staff'] : ['staff'],
        };
      },
    };
  },
});
provider.proxy = false;

async function faulty(idToken) {
  const claims = decodeJwt(idToken);
  const header = decodeProtectedHeader(idToken);
  const now = Math.floor(Date.now() / 1000);
  const resign = (changed) => new SignJWT({ ...claims, ...changed })
    .setProtectedHeader(header).sign(privateKey);
  if (claims.sub.startsWith('expired')) return resign({ iat: now - 7200, exp: now - 3600 });
  // issued to another client, and naming this one as the authorized party: only the aud
  // check refuses it
  if (claims.sub.startsWith('wrongaud')) return resign({ aud: 'another-client', azp: claims.aud });
  if (claims.sub.startsWith('tampered')) {
    const [head, , signature] = idToken.split('.');
    const body = Buffer.from(JSON.stringify({ ...claims, email: 'someone-else@example.org' }));
    return [head, body.toString('base64url'), signature].join('.');
  }
  return idToken;
}

provider.use(async (ctx, next) => {
  await next();
  if (ctx.path === '/token' && ctx.status === 200 && ctx.body && ctx.body.id_token) {
    ctx.body = { ...ctx.body, id_token: await faulty(ctx.body.id_token) };
  }
});

provider.listen(Number(port), '127.0.0.1', () => {
  process.stdout.write(`listening ${issuer}\n`);
});

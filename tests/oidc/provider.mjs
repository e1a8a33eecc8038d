// A real OpenID provider for tests/jobs/review/test_oidc.py: panva/oidc-provider (an OpenID
// Certified implementation) on 127.0.0.1, with its development sign-in pages (any account name
// signs in) and one confidential client. Every account's e-mail is <name>@firm.example.
// Usage: node provider.mjs PORT CLIENT_ID CLIENT_SECRET REDIRECT_URI
import Provider from "oidc-provider";

const [port, clientId, clientSecret, redirectUri] = process.argv.slice(2);
const issuer = `http://127.0.0.1:${port}`;
const provider = new Provider(issuer, {
  clients: [{
    client_id: clientId, client_secret: clientSecret, redirect_uris: [redirectUri],
    response_types: ["code"], grant_types: ["authorization_code"],
  }],
  claims: { openid: ["sub"], email: ["email", "email_verified"] },
  conformIdTokenClaims: false,
  findAccount: async (ctx, id) => ({
    accountId: id,
    claims: async () => ({ sub: id, email: `${id}@firm.example`, email_verified: true }),
  }),
  features: { devInteractions: { enabled: true } },
  cookies: { keys: ["tribunal-test-only"] },
});
provider.listen(Number(port), "127.0.0.1", () => { console.log(`issuer ${issuer}`); });

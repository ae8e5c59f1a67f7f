/**
 * The OIDC identity token attached to dispatches of tasks that ask for one. It is unsigned (`alg: none`)
 * but well-formed, carrying the claims a Google-signed token for a service account has, so a handler (or a
 * test) can decode it and check the audience and the service account.
 */

function b64url(value: unknown): string {
  return Buffer.from(JSON.stringify(value)).toString('base64url');
}

/** `header.payload.` with `aud` = the audience (the task URL when unset) and `email` = the service account. */
export function oidcToken(serviceAccountEmail: string, audience: string, nowMs: number): string {
  const iat = Math.floor(nowMs / 1000);
  const payload = {
    iss: 'https://accounts.google.com',
    aud: audience,
    azp: serviceAccountEmail,
    sub: serviceAccountEmail,
    email: serviceAccountEmail,
    email_verified: true,
    iat,
    exp: iat + 3600,
  };
  return `${b64url({ alg: 'none', typ: 'JWT' })}.${b64url(payload)}.`;
}

// Webhook URLs in `recipients` and chat URLs are credentials (the path usually carries the
// token). Responses show only the scheme, host and the last four characters of the secret
// part (path, query, fragment), the rest as bullets. A masked value sent back unchanged
// keeps the stored URL; a full URL replaces it.
export const BULLET = '•'

export function isUrlLike(v: string): boolean {
  return /^[a-z][a-z0-9+.-]*:\/\//i.test(v)
}

export function maskUrl(raw: string): string {
  let u: URL
  try {
    u = new URL(raw)
  } catch {
    return BULLET.repeat(8)
  }
  const origin = `${u.protocol}//${u.host}`
  const secret = raw.slice(raw.indexOf(u.host) + u.host.length)
  if (secret.length <= 8) return origin + BULLET.repeat(8)
  return origin + BULLET.repeat(secret.length - 4) + secret.slice(-4)
}

export function isMasked(v: string): boolean {
  return v.includes(BULLET)
}

/** The stored URL whose mask is `masked`, or undefined. */
export function unmask(masked: string, stored: readonly string[]): string | undefined {
  return stored.find((s) => isUrlLike(s) && maskUrl(s) === masked)
}

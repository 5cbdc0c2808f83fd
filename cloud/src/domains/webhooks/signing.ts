// The `svc-signature` header: `t=<unix seconds>,v1=<hex>` where v1 is the lowercase hex
// HMAC-SHA256 of `<t>.<raw body>` keyed with the endpoint secret.
// No space after the comma: common verifiers split on "," exactly.
import { createHmac, createSecretKey, randomBytes, type KeyObject } from 'node:crypto'

export const SIGNATURE_HEADER = 'svc-signature'
export const EVENT_HEADER = 'x-svc-event'
export const USER_AGENT = 'Svc-Webhooks/1'

/** Secrets as key objects (the worker signs thousands of deliveries a second with a few secrets). */
const keys = new Map<string, KeyObject>()

function keyOf(secret: string): KeyObject {
  let k = keys.get(secret)
  if (!k) {
    if (keys.size >= 1000) keys.clear()
    keys.set(secret, (k = createSecretKey(Buffer.from(secret, 'utf8'))))
  }
  return k
}

export function sign(secret: string, rawBody: string, unixSeconds: number): string {
  const v1 = createHmac('sha256', keyOf(secret)).update(`${unixSeconds}.${rawBody}`, 'utf8').digest('hex')
  return `t=${unixSeconds},v1=${v1}`
}

/** A new signing secret: 32 random bytes as 64 lowercase hex characters. */
export function newSigningSecret(random: (n: number) => Buffer = randomBytes): string {
  return random(32).toString('hex')
}

/** Headers of a signed JSON POST. */
export function signedHeaders(secret: string, rawBody: string, event: string, now: Date): Record<string, string> {
  return {
    'content-type': 'application/json',
    'user-agent': USER_AGENT,
    [EVENT_HEADER]: event,
    [SIGNATURE_HEADER]: sign(secret, rawBody, Math.floor(now.getTime() / 1000)),
  }
}

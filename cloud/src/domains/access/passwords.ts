// Console users' passwords: scrypt from node:crypto with a random 16-byte salt per
// password, stored as `scrypt$<log2 N>$<r>$<p>$<salt>$<key>` (base64url), so the cost can
// rise later without breaking stored hashes. The cost is one of OWASP's equivalent scrypt
// settings (N = 2^15, r = 8, p = 3: 32 MiB, about 0.1 s here); N is a setting
// (SVC_PASSWORD_SCRYPT_LOG_N, at least 2^14), and the tests' configuration uses 2^10 so a
// suite of sign-ins does not spend its minute deriving keys. Verification compares in
// constant time; an account without a password is checked against a fixed dummy hash, so
// "no such user" and "wrong password" take the same time. At most SCRYPT_CONCURRENCY
// derivations run at once and SCRYPT_QUEUE wait; past that a sign-in answers 429 at once,
// so a flood of sign-ins cannot take every core (without holding anyone's address off).
import { randomBytes, scrypt, timingSafeEqual } from 'node:crypto'
import type { RandomSource } from '../../platform/clock.js'
import { ApiError } from '../../platform/errors.js'

export const PASSWORD_MIN_LENGTH = 12
export const PASSWORD_MAX_LENGTH = 1024

/** The default work factor: N = 2^15. */
export const SCRYPT_LOG_N = 15
const R = 8
const P = 3
const KEY_LENGTH = 32

const SCRYPT_CONCURRENCY = 2
const SCRYPT_QUEUE = 64
let running = 0
const waiting: (() => void)[] = []

/** Waits for one of the derivation slots (a slot freed goes straight to the longest waiting). */
async function slot(): Promise<void> {
  if (running < SCRYPT_CONCURRENCY) {
    running++
    return
  }
  if (waiting.length >= SCRYPT_QUEUE)
    throw new ApiError('rate_limited', 'Too many sign-ins at once; retry in a few seconds.', {
      extra: { retryAfterSeconds: 2 },
      headers: { 'retry-after': '2' },
    })
  await new Promise<void>((resolve) => waiting.push(resolve))
}

function release(): void {
  const next = waiting.shift()
  if (next) next()
  else running--
}

async function derive(password: string, salt: Buffer, logN: number, r: number, p: number): Promise<Buffer> {
  await slot()
  const N = 2 ** logN
  try {
    return await new Promise((resolve, reject) =>
      scrypt(password.normalize('NFC'), salt, KEY_LENGTH, { N, r, p, maxmem: 256 * N * r + 1024 * 1024 }, (err, key) => (err ? reject(err) : resolve(key))),
    )
  } finally {
    release()
  }
}

/** Why `password` cannot be a password (too short or too long), or null when it can. */
export function passwordProblem(password: string): string | null {
  const length = [...password].length
  if (length < PASSWORD_MIN_LENGTH) return `password must be at least ${PASSWORD_MIN_LENGTH} characters.`
  if (length > PASSWORD_MAX_LENGTH) return `password must be at most ${PASSWORD_MAX_LENGTH} characters.`
  return null
}

export async function hashPassword(password: string, random: RandomSource = randomBytes, logN = SCRYPT_LOG_N): Promise<string> {
  const salt = Buffer.from(random(16))
  const key = await derive(password, salt, logN, R, P)
  return ['scrypt', logN, R, P, salt.toString('base64url'), key.toString('base64url')].join('$')
}

/** Per work factor: the fixed hash a missing or malformed one is checked against. */
const dummies = new Map<number, Promise<string>>()

/**
 * Whether `password` matches `stored`; a null or malformed `stored` never matches but costs
 * the same as a stored hash of work factor `logN` (the one new passwords get).
 */
export async function verifyPassword(password: string, stored: string | null, logN = SCRYPT_LOG_N): Promise<boolean> {
  const parts = stored?.split('$') ?? []
  const ok = parts.length === 6 && parts[0] === 'scrypt'
  let dummy = dummies.get(logN)
  if (!dummy) dummies.set(logN, (dummy = hashPassword('not a password of anyone', randomBytes, logN)))
  const [, storedLogN, r, p, salt, key] = ok ? parts : (await dummy).split('$')
  const expected = Buffer.from(key!, 'base64url')
  const got = await derive(password, Buffer.from(salt!, 'base64url'), Number(storedLogN), Number(r), Number(p))
  return ok && got.length === expected.length && timingSafeEqual(got, expected)
}

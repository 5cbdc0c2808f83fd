// Console users' passwords: scrypt from node:crypto with a random 16-byte salt per
// password, stored as `scrypt$<log2 N>$<r>$<p>$<salt>$<key>` (base64url), so the cost can
// rise later without breaking stored hashes. The cost is one of OWASP's equivalent scrypt
// settings (N = 2^15, r = 8, p = 3: 32 MiB, about 0.1 s here); N is a setting
// (SVC_PASSWORD_SCRYPT_LOG_N, at least 2^14), and the tests' configuration uses 2^10 so a
// suite of sign-ins does not spend its minute deriving keys. Verification compares in
// constant time; an account without a password is checked against a fixed dummy hash, so
// "no such user" and "wrong password" take the same time. At most SCRYPT_CONCURRENCY
// derivations run at once. The others wait in one of two lanes: `known` (a browser holding
// the address's device cookie, an invite link being accepted) and `stranger` (every other
// sign-in). A freed slot goes to the known lane first, and each lane has its own bound
// (SCRYPT_QUEUE); past it the attempt answers 429 at once. So a flood of sign-ins from
// strangers cannot take every core, and cannot make the owner's browser wait behind it.
// A password must not be blank nor trivially weak (passwordProblem says why).
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

/** Whose derivation it is: a browser or link known for the address, or anyone else. */
export type ScryptLane = 'known' | 'stranger'

const SCRYPT_CONCURRENCY = 2
export const SCRYPT_QUEUE: Record<ScryptLane, number> = { known: 64, stranger: 16 }
let running = 0
const waiting: Record<ScryptLane, (() => void)[]> = { known: [], stranger: [] }

/** Thrown when the lane's queue is full: the attempt was not checked. */
export class ScryptBusy extends ApiError {
  constructor() {
    super('rate_limited', 'Too many sign-ins at once; retry in a few seconds.', { extra: { retryAfterSeconds: 2 }, headers: { 'retry-after': '2' } })
  }
}

/** Waits for one of the derivation slots (a slot freed goes to the known lane's longest waiting, else the strangers'). */
async function slot(lane: ScryptLane): Promise<void> {
  if (running < SCRYPT_CONCURRENCY) {
    running++
    return
  }
  if (waiting[lane].length >= SCRYPT_QUEUE[lane]) throw new ScryptBusy()
  await new Promise<void>((resolve) => waiting[lane].push(resolve))
}

function release(): void {
  const next = waiting.known.shift() ?? waiting.stranger.shift()
  if (next) next()
  else running--
}

async function derive(password: string, salt: Buffer, logN: number, r: number, p: number, lane: ScryptLane): Promise<Buffer> {
  await slot(lane)
  const N = 2 ** logN
  try {
    return await new Promise((resolve, reject) =>
      scrypt(password.normalize('NFC'), salt, KEY_LENGTH, { N, r, p, maxmem: 256 * N * r + 1024 * 1024 }, (err, key) => (err ? reject(err) : resolve(key))),
    )
  } finally {
    release()
  }
}

/** Words that, with digits or symbols around them, make the passwords guessed first. */
const COMMON_WORDS = new Set([
  'password',
  'passwort',
  'motdepasse',
  'contrasena',
  'qwerty',
  'azerty',
  'letmein',
  'welcome',
  'admin',
  'administrator',
  'iloveyou',
  'changeme',
  'secret',
  'signage',
  'monkey',
  'dragon',
  'football',
  'baseball',
  'sunshine',
  'princess',
  'trustno',
])
/** Runs a password may not be a piece of: the alphabet, digits, keyboard rows (each also backwards). */
const RUNS = [
  'abcdefghijklmnopqrstuvwxyz',
  '01234567890123456789',
  'qwertyuiopasdfghjklzxcvbnm',
  'azertyuiopqsdfghjklmwxcvbn',
  'qwertzuiopasdfghjklyxcvbnm',
  '1qaz2wsx3edc4rfv5tgb6yhn7ujm8ik9ol0p',
]
const MIN_DISTINCT = 5

/** Why `password` cannot be a password (too short or long, blank, trivially weak), or null when it can. */
export function passwordProblem(password: string): string | null {
  const chars = [...password]
  if (chars.length < PASSWORD_MIN_LENGTH) return `password must be at least ${PASSWORD_MIN_LENGTH} characters.`
  if (chars.length > PASSWORD_MAX_LENGTH) return `password must be at most ${PASSWORD_MAX_LENGTH} characters.`
  if (!password.trim()) return 'password must not be blank: it is only spaces.'
  const lower = password.normalize('NFKC').toLowerCase()
  if (new Set(lower).size < MIN_DISTINCT) return `password is too weak: it must use at least ${MIN_DISTINCT} different characters.`
  const alnum = lower.replace(/[^\p{L}\p{N}]/gu, '')
  if (alnum.length >= PASSWORD_MIN_LENGTH - 2 && RUNS.some((run) => run.includes(alnum) || [...run].reverse().join('').includes(alnum)))
    return 'password is too weak: it is a sequence of the alphabet, digits or a keyboard row.'
  if (COMMON_WORDS.has(alnum.replace(/^\d+|\d+$/g, '')) || COMMON_WORDS.has(alnum.replace(/\d/g, '')))
    return 'password is too weak: it is a common password with digits or symbols added.'
  return null
}

/** A new hash of `password`; its derivation waits in the known lane (an invite link was checked first). */
export async function hashPassword(password: string, random: RandomSource = randomBytes, logN = SCRYPT_LOG_N, lane: ScryptLane = 'known'): Promise<string> {
  const salt = Buffer.from(random(16))
  const key = await derive(password, salt, logN, R, P, lane)
  return ['scrypt', logN, R, P, salt.toString('base64url'), key.toString('base64url')].join('$')
}

/** Per work factor: the fixed hash a missing or malformed one is checked against. */
const dummies = new Map<number, Promise<string>>()

/**
 * Whether `password` matches `stored`; a null or malformed `stored` never matches but costs
 * the same as a stored hash of work factor `logN` (the one new passwords get).
 */
export async function verifyPassword(password: string, stored: string | null, logN = SCRYPT_LOG_N, lane: ScryptLane = 'stranger'): Promise<boolean> {
  const parts = stored?.split('$') ?? []
  const ok = parts.length === 6 && parts[0] === 'scrypt'
  let dummy = dummies.get(logN)
  if (!dummy) dummies.set(logN, (dummy = hashPassword('not a password of anyone', randomBytes, logN)))
  const [, storedLogN, r, p, salt, key] = ok ? parts : (await dummy).split('$')
  const expected = Buffer.from(key!, 'base64url')
  const got = await derive(password, Buffer.from(salt!, 'base64url'), Number(storedLogN), Number(r), Number(p), lane)
  return ok && got.length === expected.length && timingSafeEqual(got, expected)
}

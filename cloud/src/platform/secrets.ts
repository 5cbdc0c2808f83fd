// Secrets: made from injected randomness, stored only as SHA-256 hashes (they are
// long random strings, so a fast hash is enough), compared in constant time.
import { hash, randomBytes, timingSafeEqual } from 'node:crypto'
import type { RandomSource } from './clock.js'

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789'

/** `n` characters from [A-Za-z0-9], unbiased (rejection sampling). */
export function randomToken(n: number, random: RandomSource = randomBytes): string {
  let out = ''
  while (out.length < n) {
    for (const b of random(n * 2)) {
      if (b < 248) out += ALPHABET[b % 62]
      if (out.length === n) break
    }
  }
  return out
}

/** SHA-256 of the secret, hex (one-shot `crypto.hash`: a third of createHash's cost, and it runs on every request). */
export function hashSecret(secret: string): string {
  return hash('sha256', secret, 'hex')
}

/** Constant-time comparison of a presented secret with a stored hash. */
export function secretMatches(presented: string, storedHash: string): boolean {
  const a = Buffer.from(hashSecret(presented), 'hex')
  const b = Buffer.from(storedHash, 'hex')
  return a.length === b.length && timingSafeEqual(a, b)
}

export const REGIONS = ['us', 'eu', 'oc', 'apac'] as const
export type Region = (typeof REGIONS)[number]

export const API_KEY_PATTERN = /^ak_(us|eu|oc|apac)_live_[A-Za-z0-9]{32}$/
export const SESSION_TOKEN_PATTERN = /^ust_[A-Za-z0-9]{40}$/

export function newApiKeySecret(region: Region, random?: RandomSource): string {
  return `ak_${region}_live_${randomToken(32, random)}`
}

export function apiKeyPreview(secret: string): string {
  // ak_us_live_ is 11 characters, ak_apac_live_ 13: keep the region part plus five secret characters.
  const prefixEnd = secret.indexOf('_live_') + '_live_'.length
  return secret.slice(0, prefixEnd + 5)
}

export function newSessionToken(random?: RandomSource): string {
  return `ust_${randomToken(40, random)}`
}

export const sessionLookup = (token: string): string => token.slice(0, 12)

/** The parts of an HTTP Basic `authorization` header (`Basic base64(user:secret)`), else null. */
export function basicCredentials(header: string | undefined): { user: string; secret: string } | null {
  const m = /^Basic\s+([A-Za-z0-9+/=]{1,1000})$/i.exec(header ?? '')
  if (!m) return null
  const text = Buffer.from(m[1]!, 'base64').toString('utf8')
  const colon = text.indexOf(':')
  return colon > 0 ? { user: text.slice(0, colon), secret: text.slice(colon + 1) } : null
}

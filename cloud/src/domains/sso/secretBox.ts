// Secrets the cloud must use again (an OIDC client secret is sent to the provider's token
// endpoint), so they are sealed rather than hashed: AES-256-GCM under the cloud's secret key,
// `v1.<iv>.<tag>.<ciphertext>` in base64url. The key is SVC_SECRET_KEY when set (then a copy
// of the database alone opens nothing), else a random one the first instance keeps in the
// database (sso_keys) and every instance reads.
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto'
import type { RandomSource } from '../../platform/clock.js'

export class SecretBox {
  private constructor(
    private readonly key: Buffer,
    private readonly random: RandomSource,
  ) {}

  /** The box of a configured key: 64 hex characters or base64 of 32 bytes (throws otherwise). */
  static fromSetting(value: string, random: RandomSource = randomBytes): SecretBox {
    const key = /^[0-9a-f]{64}$/i.test(value) ? Buffer.from(value, 'hex') : Buffer.from(value, 'base64')
    if (key.length !== 32) throw new Error('SVC_SECRET_KEY must be 32 bytes: 64 hex characters or base64')
    return new SecretBox(key, random)
  }

  static fromKey(key: Buffer, random: RandomSource = randomBytes): SecretBox {
    if (key.length !== 32) throw new Error('a secret key is 32 bytes')
    return new SecretBox(key, random)
  }

  seal(plain: string): string {
    const iv = this.random(12)
    const cipher = createCipheriv('aes-256-gcm', this.key, iv)
    const data = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()])
    return ['v1', iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), data.toString('base64url')].join('.')
  }

  /** The sealed text, or null when it was sealed under another key or altered. */
  open(sealed: string): string | null {
    const [v, iv, tag, data] = sealed.split('.')
    if (v !== 'v1' || iv === undefined || tag === undefined || data === undefined) return null
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(iv, 'base64url'))
      decipher.setAuthTag(Buffer.from(tag, 'base64url'))
      return Buffer.concat([decipher.update(Buffer.from(data, 'base64url')), decipher.final()]).toString('utf8')
    } catch {
      return null
    }
  }
}

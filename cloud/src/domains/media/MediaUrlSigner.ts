// Signed, expiring download URLs for devices. A screen's agent has no API credential, so
// the media it must play is handed to it in the desired state as
//   /v1/media/<id>/content?exp=<unix seconds>&sig=<hex HMAC-SHA256("media:<id>:<exp>")>
// keyed with a server secret. The secret is made once (32 random bytes) and kept in the
// database (`server_secrets`, name `media_url`), so every cloud process on the same
// database signs and verifies alike and a restart keeps issued URLs valid.
//
// Expiry: at least `ttlSeconds` ahead, rounded up to the next UTC midnight, so every
// desired state rebuilt on the same day carries the same URL (the player does not reload
// for nothing) and a URL lives between ttl and ttl + 1 day. MediaUrlRefreshWorker
// republishes desired states before their URLs run out.
import crypto from 'node:crypto'
import type { Clock } from '../../platform/clock.js'
import type { Database } from '../../platform/db/Database.js'
import { MediaRepository } from './MediaRepository.js'

const DAY = 86_400
export const MEDIA_URL_TTL_SECONDS = 7 * DAY

export type SignatureCheck = 'ok' | 'expired' | 'bad'

export class MediaUrlSigner {
  private key: Promise<Buffer> | null = null
  private readonly repo: MediaRepository

  constructor(
    db: Database,
    private readonly clock: Clock,
    readonly ttlSeconds = MEDIA_URL_TTL_SECONDS,
    /** Base URL put in front of the path (SVC_PUBLIC_URL); null = a path the agent resolves against its cloud. */
    private readonly publicUrl: string | null = null,
  ) {
    this.repo = new MediaRepository(db.kysely)
  }

  private secret(): Promise<Buffer> {
    this.key ??= (async () => {
      const fresh = crypto.randomBytes(32).toString('hex')
      return Buffer.from(await this.repo.secret('media_url', fresh, this.clock.now().toISOString()), 'hex')
    })().catch((e) => {
      this.key = null
      throw e
    })
    return this.key
  }

  private mac(key: Buffer, mediaId: string, exp: number): Buffer {
    return crypto.createHmac('sha256', key).update(`media:${mediaId}:${exp}`).digest()
  }

  /** The expiry a URL signed now gets (unix seconds). */
  expiryNow(): number {
    const now = Math.floor(this.clock.now().getTime() / 1000)
    return Math.ceil((now + this.ttlSeconds) / DAY) * DAY
  }

  /** The signed download URL of a media item. `exp` for tests only. */
  async url(mediaId: string, exp = this.expiryNow()): Promise<string> {
    const sig = this.mac(await this.secret(), mediaId, exp).toString('hex')
    const path = `/v1/media/${encodeURIComponent(mediaId)}/content?exp=${exp}&sig=${sig}`
    return this.publicUrl ? this.publicUrl.replace(/\/+$/, '') + path : path
  }

  /** Constant-time check of a presented signature; expiry is checked after the MAC. */
  async verify(mediaId: string, exp: string | undefined, sig: string | undefined): Promise<SignatureCheck> {
    if (!exp || !sig || !/^[0-9]{1,12}$/.test(exp) || !/^[0-9a-f]{64}$/.test(sig)) return 'bad'
    const expected = this.mac(await this.secret(), mediaId, Number(exp))
    if (!crypto.timingSafeEqual(expected, Buffer.from(sig, 'hex'))) return 'bad'
    return Number(exp) * 1000 <= this.clock.now().getTime() ? 'expired' : 'ok'
  }
}

// Screen pairing: a device registers without a credential
// and shows a 6-character code; an operator claims the code, which creates the screen;
// the device polls with its poll secret and, on the first poll after the claim, receives
// its device secret (made right then, so only its hash is ever stored). Registrations and
// their codes live only in the database (PairingRepository): any instance claims a code
// any other handed out.
import { randomBytes } from 'node:crypto'
import type { Clock, IdGenerator, RandomSource } from '../../platform/clock.js'
import type { Database } from '../../platform/db/Database.js'
import { ApiError, notFound, validation } from '../../platform/errors.js'
import type { Principal } from '../../platform/http/Principal.js'
import { hashSecret, randomToken, secretMatches } from '../../platform/secrets.js'
import { PairingRepository } from './PairingRepository.js'
import { ScreenRepository } from './ScreenRepository.js'
import type { NodeService } from '../nodes/index.js'
import type { ScreenService, ScreenView } from './ScreenService.js'

/** "A–Z and 2–9": 34 symbols. */
export const PAIRING_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ23456789'
export const PAIRING_CODE_LENGTH = 6
export const REGISTRATION_TTL_MS = 15 * 60_000

export interface Registration {
  registrationId: string
  pairingCode: string
  pollSecret: string
  expiresAt: string
}

export type PollResult =
  | { state: 'pending' | 'expired'; expiresAt: string }
  /** `deviceSecret` only on the first poll after the claim. */
  | { state: 'paired'; screenId: string; deviceSecret?: string }

/** `n` symbols of the pairing alphabet, unbiased (rejection sampling: 238 = 7 × 34). */
export function newPairingCode(random: RandomSource = randomBytes, n = PAIRING_CODE_LENGTH): string {
  let out = ''
  while (out.length < n) {
    for (const b of random(n * 2)) {
      if (b < 238) out += PAIRING_ALPHABET[b % 34]
      if (out.length === n) break
    }
  }
  return out
}

/** What people type: case and separators (spaces, dashes) do not matter. */
export function normalisePairingCode(raw: string): string {
  return raw.replace(/[\s-]/g, '').toUpperCase()
}

export class PairingService {
  private readonly repo: PairingRepository
  private readonly screenRows: ScreenRepository

  constructor(
    private readonly db: Database,
    private readonly clock: Clock,
    private readonly ids: IdGenerator,
    private readonly nodes: NodeService,
    private readonly screens: ScreenService,
    private readonly random: RandomSource = randomBytes,
  ) {
    this.repo = new PairingRepository(db.kysely)
    this.screenRows = new ScreenRepository(db.kysely)
  }

  async register(input: { model?: string | undefined; serialNumber?: string | undefined }): Promise<Registration> {
    const now = this.clock.now()
    const nowIso = now.toISOString()
    const expiresAt = new Date(now.getTime() + REGISTRATION_TTL_MS).toISOString()
    const pollSecret = randomToken(40, this.random)
    const id = this.ids.next('registration')
    const pairingCode = await this.db.transaction(async (tx) => {
      // A code is unique among the registrations it could still claim.
      for (let attempt = 0; attempt < 20; attempt++) {
        const code = newPairingCode(this.random)
        if (await this.repo.codeTaken(code, nowIso, tx.kysely)) continue
        await this.repo.insert(
          {
            id,
            pairing_code: code,
            poll_secret_hash: hashSecret(pollSecret),
            model: input.model ?? null,
            serial_number: input.serialNumber ?? null,
            created_at: nowIso,
            expires_at: expiresAt,
          },
          tx.kysely,
        )
        return code
      }
      throw new Error('could not find a free pairing code')
    })
    return { registrationId: id, pairingCode, pollSecret, expiresAt }
  }

  /** Claims a code for the caller's workspace and creates the screen. A code is claimed once. */
  async pair(p: Principal, input: { code: string; name: string; nodeId?: string | null | undefined }): Promise<ScreenView> {
    const code = normalisePairingCode(input.code)
    const nodeId = await this.nodes.resolveHome(p, input.nodeId)
    const screenId = await this.db.transaction(async (tx) => {
      const now = this.clock.now().toISOString()
      const reg = await this.repo.claimable(code, now, tx.kysely)
      // Unknown, expired and already claimed look the same: nothing to learn by guessing.
      if (!reg) throw validation('code is not a pairing code waiting to be claimed (unknown, expired or already used).')
      const id = await this.screens.insertPaired(tx, {
        workspaceId: p.workspaceId,
        nodeId,
        name: input.name,
        model: reg.model,
        serialNumber: reg.serial_number,
      })
      const claimed = await this.repo.claim(reg.id, { claimed_at: now, workspace_id: p.workspaceId, screen_id: id }, tx.kysely)
      if (!claimed) throw validation('code is not a pairing code waiting to be claimed (unknown, expired or already used).')
      return id
    })
    // Its first desired state (version 1), retained for when the agent connects.
    this.screens.changed(p.workspaceId, screenId)
    return this.screens.get(p, screenId)
  }

  /**
   * The device's poll. Unknown id: 404. Then the poll secret: missing 401
   * missing_credentials, wrong 401 invalid_credentials (checked in constant time).
   */
  async poll(registrationId: string, pollSecret: string | null): Promise<PollResult> {
    const reg = await this.repo.byId(registrationId)
    if (!reg) throw notFound('No such registration; register again.')
    if (!pollSecret) throw new ApiError('missing_credentials', 'Send the poll secret: Authorization: Bearer <pollSecret>.')
    if (!secretMatches(pollSecret, reg.poll_secret_hash)) throw new ApiError('invalid_credentials', 'The poll secret does not match this registration.')
    if (!reg.claimed_at || !reg.screen_id) {
      const expired = reg.expires_at <= this.clock.now().toISOString()
      return { state: expired ? 'expired' : 'pending', expiresAt: reg.expires_at }
    }
    const screenId = reg.screen_id
    if (reg.secret_issued_at) return { state: 'paired', screenId }
    const deviceSecret = randomToken(48, this.random)
    const issued = await this.db.transaction(async (tx) => {
      const now = this.clock.now().toISOString()
      if (!(await this.repo.markSecretIssued(reg.id, now, tx.kysely))) return false // a concurrent poll got it first
      await this.screenRows.setDeviceSecretHash(screenId, hashSecret(deviceSecret), now, tx.kysely)
      return true
    })
    return issued ? { state: 'paired', screenId, deviceSecret } : { state: 'paired', screenId }
  }

  /** Drops unclaimed registrations that expired more than a day ago (their codes are long dead). */
  async purgeExpired(): Promise<number> {
    const cutoff = new Date(this.clock.now().getTime() - 86_400_000).toISOString()
    return this.repo.purgeUnclaimedBefore(cutoff)
  }
}

// The only code that reads or writes `device_registrations`: devices waiting to be paired,
// their pairing codes and poll secrets. Codes live only in the database (no per-process
// memory), so any instance can claim a code another one handed out.
import type { Selectable } from 'kysely'
import type { Executor } from '../../platform/db/Database.js'
import type { DeviceRegistrationsTable } from './tables.js'

export type RegistrationRecord = Selectable<DeviceRegistrationsTable>

export class PairingRepository {
  constructor(private readonly k: Executor) {}

  /** True when an unclaimed, unexpired registration holds `code`. */
  async codeTaken(code: string, now: string, k: Executor = this.k): Promise<boolean> {
    const r = await k
      .selectFrom('device_registrations')
      .select('id')
      .where('pairing_code', '=', code)
      .where('claimed_at', 'is', null)
      .where('expires_at', '>', now)
      .executeTakeFirst()
    return r !== undefined
  }

  async insert(
    row: Pick<RegistrationRecord, 'id' | 'pairing_code' | 'poll_secret_hash' | 'model' | 'serial_number' | 'created_at' | 'expires_at'>,
    k: Executor = this.k,
  ): Promise<void> {
    await k.insertInto('device_registrations').values(row).execute()
  }

  /** The newest unclaimed, unexpired registration showing `code`. */
  claimable(code: string, now: string, k: Executor = this.k): Promise<RegistrationRecord | undefined> {
    return k
      .selectFrom('device_registrations')
      .selectAll()
      .where('pairing_code', '=', code)
      .where('claimed_at', 'is', null)
      .where('expires_at', '>', now)
      .orderBy('created_at', 'desc')
      .limit(1)
      .executeTakeFirst()
  }

  /** Claims the registration for a screen; false when someone claimed it first. */
  async claim(id: string, set: { workspace_id: string; screen_id: string; claimed_at: string }, k: Executor = this.k): Promise<boolean> {
    const r = await k.updateTable('device_registrations').set(set).where('id', '=', id).where('claimed_at', 'is', null).executeTakeFirst()
    return Number(r.numUpdatedRows) === 1
  }

  byId(id: string): Promise<RegistrationRecord | undefined> {
    return this.k.selectFrom('device_registrations').selectAll().where('id', '=', id).executeTakeFirst()
  }

  /** Marks the device secret handed out; false when a concurrent poll got it first. */
  async markSecretIssued(id: string, at: string, k: Executor = this.k): Promise<boolean> {
    const r = await k
      .updateTable('device_registrations')
      .set({ secret_issued_at: at })
      .where('id', '=', id)
      .where('secret_issued_at', 'is', null)
      .executeTakeFirst()
    return Number(r.numUpdatedRows) === 1
  }

  async deleteForScreen(screenId: string, k: Executor = this.k): Promise<void> {
    await k.deleteFrom('device_registrations').where('screen_id', '=', screenId).execute()
  }

  /** Deletes unclaimed registrations that expired before `before`; returns how many. */
  async purgeUnclaimedBefore(before: string): Promise<number> {
    const r = await this.k.deleteFrom('device_registrations').where('claimed_at', 'is', null).where('expires_at', '<', before).executeTakeFirst()
    return Number(r.numDeletedRows)
  }
}

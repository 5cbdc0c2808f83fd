// The only code that reads or writes `status_measurements`, `incidents` and
// `incident_updates` (platform status). StatusService computes the public view from these
// reads and keeps it in memory; nothing here caches.
import type { Executor } from '../../platform/db/Database.js'
import type { IncidentRow, IncidentUpdateRow, StatusMeasurementRow } from './tables.js'

export class StatusRepository {
  constructor(private readonly k: Executor) {}

  /** A cheap read that needs the database: the status probe times it. */
  async ping(): Promise<void> {
    await this.k
      .selectFrom('schema_migrations')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirst()
  }

  // ---- measurements ----

  async insertMeasurement(row: StatusMeasurementRow): Promise<void> {
    await this.k.insertInto('status_measurements').values(row).execute()
  }

  latestMeasurement(): Promise<StatusMeasurementRow | undefined> {
    return this.k.selectFrom('status_measurements').selectAll().orderBy('measured_at', 'desc').orderBy('id', 'desc').limit(1).executeTakeFirst()
  }

  /** Time and state of every measurement at or after `from`. */
  measurementsSince(from: string): Promise<Pick<StatusMeasurementRow, 'measured_at' | 'state'>[]> {
    return this.k.selectFrom('status_measurements').select(['measured_at', 'state']).where('measured_at', '>=', from).execute()
  }

  async deleteMeasurementsBefore(cutoff: string): Promise<number> {
    const r = await this.k.deleteFrom('status_measurements').where('measured_at', '<', cutoff).executeTakeFirst()
    return Number(r.numDeletedRows)
  }

  // ---- incidents ----

  incident(id: string): Promise<IncidentRow | undefined> {
    return this.k.selectFrom('incidents').selectAll().where('id', '=', id).executeTakeFirst()
  }

  /** Every incident, newest first. */
  incidents(): Promise<IncidentRow[]> {
    return this.k.selectFrom('incidents').selectAll().orderBy('started_at', 'desc').orderBy('id', 'desc').execute()
  }

  openIncidents(): Promise<IncidentRow[]> {
    return this.k.selectFrom('incidents').selectAll().where('resolved_at', 'is', null).orderBy('started_at', 'desc').orderBy('id', 'desc').execute()
  }

  /** Incidents resolved at or after `from`, latest resolution first. */
  resolvedSince(from: string): Promise<IncidentRow[]> {
    return this.k
      .selectFrom('incidents')
      .selectAll()
      .where('resolved_at', 'is not', null)
      .where('resolved_at', '>=', from)
      .orderBy('resolved_at', 'desc')
      .orderBy('id', 'desc')
      .execute()
  }

  /** Incidents still open or resolved at or after `from` (the days they touch). */
  activeSince(from: string): Promise<IncidentRow[]> {
    return this.k
      .selectFrom('incidents')
      .selectAll()
      .where((eb) => eb.or([eb('resolved_at', 'is', null), eb('resolved_at', '>=', from)]))
      .orderBy('id')
      .execute()
  }

  updates(incidentId: string): Promise<Pick<IncidentUpdateRow, 'at' | 'status' | 'message'>[]> {
    return this.k
      .selectFrom('incident_updates')
      .select(['at', 'status', 'message'])
      .where('incident_id', '=', incidentId)
      .orderBy('at', 'asc')
      .orderBy('id', 'asc')
      .execute()
  }

  /** Inserts an incident with its first update (pass a transaction: both or neither). */
  async insertIncident(row: IncidentRow, first: IncidentUpdateRow, k: Executor = this.k): Promise<void> {
    await k.insertInto('incidents').values(row).execute()
    await k.insertInto('incident_updates').values(first).execute()
  }

  /** Changes an incident and records the update (pass a transaction: both or neither). */
  async updateIncident(
    id: string,
    set: Pick<IncidentRow, 'status' | 'impact' | 'screens_playing' | 'resolved_at'>,
    update: IncidentUpdateRow,
    k: Executor = this.k,
  ): Promise<void> {
    await k.updateTable('incidents').set(set).where('id', '=', id).execute()
    await k.insertInto('incident_updates').values(update).execute()
  }
}

// The status domain's tables, as the migrations (platform/db/migrations) leave them: their
// column types, added to the database's type (`DB` in platform/db/schema.ts) by declaration
// merging, so every query is checked against them while the platform names no domain.
import type { Selectable } from 'kysely'

export interface StatusMeasurementsTable {
  id: string
  measured_at: string
  state: string
  db_ok: number
  db_latency_ms: number | null
  broker_ok: number
  broker_latency_ms: number | null
  detail: string | null
}

export interface IncidentsTable {
  id: string
  title: string
  status: string
  impact: string
  screens_playing: number | null
  started_at: string
  resolved_at: string | null
}

export interface IncidentUpdatesTable {
  id: string
  incident_id: string
  at: string
  status: string
  message: string
}

export type StatusMeasurementRow = Selectable<StatusMeasurementsTable>
export type IncidentRow = Selectable<IncidentsTable>
export type IncidentUpdateRow = Selectable<IncidentUpdatesTable>

declare module '../../platform/db/schema.js' {
  interface DB {
    status_measurements: StatusMeasurementsTable
    incidents: IncidentsTable
    incident_updates: IncidentUpdatesTable
  }
}

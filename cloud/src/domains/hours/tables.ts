// The hours domain's tables, as the migrations (platform/db/migrations) leave them: their
// column types, added to the database's type (`DB` in platform/db/schema.ts) by declaration
// merging, so every query is checked against them while the platform names no domain.

/** Operating hours of a location (`node`) or a screen (`screen`): `hours` is {weekly, exceptions} JSON. */
export interface OperatingHoursTable {
  workspace_id: string
  owner_kind: string
  owner_id: string
  hours: string
  updated_at: string
}

declare module '../../platform/db/schema.js' {
  interface DB {
    operating_hours: OperatingHoursTable
  }
}

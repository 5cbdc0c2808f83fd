import type { Migration } from './Migration.js'

export default {
  version: 3,
  name: 'platform status',
  statements: [
    `CREATE TABLE status_measurements (
      id TEXT PRIMARY KEY,
      measured_at TEXT NOT NULL,
      state TEXT NOT NULL,
      db_ok INTEGER NOT NULL,
      db_latency_ms REAL,
      broker_ok INTEGER NOT NULL,
      broker_latency_ms REAL,
      detail TEXT
    )`,
    `CREATE INDEX status_measurements_at ON status_measurements(measured_at)`,
    `CREATE TABLE incidents (
      id TEXT PRIMARY KEY,
      title TEXT NOT NULL,
      status TEXT NOT NULL,
      impact TEXT NOT NULL,
      screens_playing INTEGER,
      started_at TEXT NOT NULL,
      resolved_at TEXT
    )`,
    `CREATE TABLE incident_updates (
      id TEXT PRIMARY KEY,
      incident_id TEXT NOT NULL REFERENCES incidents(id),
      at TEXT NOT NULL,
      status TEXT NOT NULL,
      message TEXT NOT NULL
    )`,
  ],
} satisfies Migration

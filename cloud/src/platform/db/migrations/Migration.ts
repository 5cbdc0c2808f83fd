// One versioned schema change: what each file of this folder exports (applied by ../migrate.ts).
import type { Dialect } from '../Database.js'

export interface Migration {
  version: number
  name: string
  /** Portable statements, or per dialect when one must differ. */
  statements: string[] | ((dialect: Dialect) => string[])
}

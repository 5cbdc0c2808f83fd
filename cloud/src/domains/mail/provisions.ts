// What the mail domain provides to the other modules, by name and type: merged into
// `DomainProvisions` (platform/provisions.ts) as its tables are into the database's type.
import type { Mailer } from './index.js'

declare module '../../platform/provisions.js' {
  interface DomainProvisions {
    /** Mail to owners and alert recipients (SMTP, or the outbox table). */
    mailer: Mailer
  }
}

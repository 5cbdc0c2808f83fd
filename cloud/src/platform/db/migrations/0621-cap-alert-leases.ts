import type { Migration } from './Migration.js'

export default {
  version: 621,
  name: 'cap alert leases',
  statements: [
    // A CAP document is claimed with a lease: `document` keeps the parsed alert (JSON) while it
    // is handled and `lease_until` says until when the claiming instance owns it. A row left in
    // state `received` past its lease (the instance died mid-handling) is handled again by the
    // CAP worker of any instance; both are emptied once the document's outcome is written.
    `ALTER TABLE cap_alerts ADD COLUMN document TEXT`,
    `ALTER TABLE cap_alerts ADD COLUMN lease_until TEXT`,
    `CREATE INDEX cap_alerts_stuck ON cap_alerts(state, lease_until)`,
    // The emergency a CAP alert started is found from the alert (a recovered handling adopts it).
    `CREATE INDEX emergencies_cap_alert ON emergencies(source_cap_alert_id)`,
    // What a CAP alert shows, field by field (JSON: severity, headline, description, instruction,
    // senderName, sent, test), so a player lays it out; null for emergencies started by hand.
    `ALTER TABLE emergencies ADD COLUMN alert TEXT`,
  ],
} satisfies Migration

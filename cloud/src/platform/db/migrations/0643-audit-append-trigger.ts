import type { Migration } from './Migration.js'

// The audit log's append on SQLite is one statement (AuditRepository): the batch's rows
// inserted from one JSON parameter, outside an explicit transaction. These triggers keep
// what the transaction's locked head kept: a row is taken only as the next entry of its
// chain (the seq after the head, linked to the head's hash; otherwise the whole statement
// is refused and nothing of it stays), and the head moves with each row in the same
// statement, so the entries and their head commit together. PostgreSQL keeps the
// transaction with the head locked (SELECT … FOR UPDATE), so it needs neither.
export default {
  version: 643,
  name: 'audit log: the chain head checked and moved by the append itself on SQLite',
  statements: (dialect) =>
    dialect === 'sqlite'
      ? [
          `CREATE TRIGGER audit_entries_follow_head BEFORE INSERT ON audit_entries
           BEGIN
             SELECT RAISE(ABORT, 'audit_entries: not the next entry of its chain')
             WHERE NOT EXISTS (SELECT 1 FROM audit_chains WHERE chain = NEW.chain AND head_seq = NEW.seq - 1 AND head_hash = NEW.prev_hash);
           END`,
          `CREATE TRIGGER audit_entries_move_head AFTER INSERT ON audit_entries
           BEGIN
             UPDATE audit_chains SET head_seq = NEW.seq, head_hash = NEW.hash WHERE chain = NEW.chain;
           END`,
        ]
      : [],
} satisfies Migration

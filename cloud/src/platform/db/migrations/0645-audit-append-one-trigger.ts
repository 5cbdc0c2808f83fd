import type { Migration } from './Migration.js'

// The audit log's append on SQLite: the two triggers of 0643 (one to check that a row follows
// its chain's head, one to move the head after it) become one. Before the row goes in, the
// head is moved to it only where it is the row's predecessor (the seq before it, the hash it
// links to); when nothing moved, the row does not follow the head and the whole statement is
// refused (nothing of it stays, the head included). Same rule, one trigger program and one
// lookup of the head per row instead of two.
export default {
  version: 645,
  name: 'audit log: the chain head checked and moved by one trigger on SQLite',
  statements: (dialect) =>
    dialect === 'sqlite'
      ? [
          'DROP TRIGGER IF EXISTS audit_entries_follow_head',
          'DROP TRIGGER IF EXISTS audit_entries_move_head',
          `CREATE TRIGGER audit_entries_next BEFORE INSERT ON audit_entries
           BEGIN
             UPDATE audit_chains SET head_seq = NEW.seq, head_hash = NEW.hash
             WHERE chain = NEW.chain AND head_seq = NEW.seq - 1 AND head_hash = NEW.prev_hash;
             SELECT RAISE(ABORT, 'audit_entries: not the next entry of its chain') WHERE changes() = 0;
           END`,
        ]
      : [],
} satisfies Migration

import type { Migration } from './Migration.js'

// Deleting a media item or a screenshot asks whether any other owner still holds its bytes
// (domains/media/StoredBytesRepository.ts): without this index that read went through every
// screenshot kept.
export default {
  version: 460,
  name: 'screenshots by sha256',
  statements: [`CREATE INDEX screenshots_sha256 ON screenshots(sha256)`],
} satisfies Migration

import type { Migration } from './Migration.js'

export default {
  version: 671,
  name: 'media thumbnails',
  statements: [
    // When the background probe made the item's thumbnail (kept in the media store beside
    // the bytes, by their hash); null when there is none (other kinds, no ffmpeg for video,
    // or files probed before thumbnails existed).
    `ALTER TABLE media ADD COLUMN thumbnail_at TEXT`,
  ],
} satisfies Migration

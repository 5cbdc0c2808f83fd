// What the media domain provides to the other modules, by name and type: merged into
// `DomainProvisions` (platform/provisions.ts) as its tables are into the database's type.
import type { MediaService, MediaStore, MediaUrlRefreshWorker, MediaUrlSigner } from './index.js'

declare module '../../platform/provisions.js' {
  interface DomainProvisions {
    /** Media files: uploads, processing, downloads. */
    media: MediaService
    /** Signed, expiring media download URLs handed to devices. */
    mediaUrls: MediaUrlSigner
    /** The content-addressed file store of media and screenshots. */
    mediaStore: MediaStore
    /** Republishes desired states whose signed media URLs are getting old (one instance at a time). */
    mediaUrlRefresh: MediaUrlRefreshWorker
  }
}

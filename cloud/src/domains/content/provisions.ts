// What the content domain provides to the other modules, by name and type: merged into
// `DomainProvisions` (platform/provisions.ts) as its tables are into the database's type.
import type { Hook } from '../../platform/hooks.js'
import type {
  ContentAccess,
  ContentChangeListener,
  ContentPlayback,
  ContentRecall,
  ContentResolver,
  ContentService,
  ContentSharing,
  ContentUsage,
} from './index.js'

declare module '../../platform/provisions.js' {
  interface PlatformProvisions {
    /** Test seam: a content library of the test's own (undefined = the real one). */
    contentOverride: ContentResolver | undefined
  }

  interface DomainProvisions {
    /** The content library (every kind), sharing, recall, playability, device descriptions. */
    content: ContentService
    /** Who may see or change a content item, and where it may play. */
    contentAccess: ContentAccess
    /** Sharing items with other locations. */
    contentSharing: ContentSharing
    /** Recall and restore. */
    contentRecall: ContentRecall
    /** Content as a screen sees it: playability and the description a player renders. */
    contentPlayback: ContentPlayback
    /** What uses content, so deleting used content is refused (409 conflict). */
    contentUsage: Hook<ContentUsage>
    /** Content updated, recalled, restored, shared, unshared or deleted. */
    contentChanges: Hook<ContentChangeListener>
  }
}

// What the targeting domain provides to the other modules, by name and type: merged into
// `DomainProvisions` (platform/provisions.ts) as its tables are into the database's type.
import type { Hook } from '../../platform/hooks.js'
import type { GroupChange, GroupService, GroupUsage, TagChange, TagService } from './index.js'

declare module '../../platform/provisions.js' {
  interface DomainProvisions {
    /** Screens' tags (PATCH /v1/screens/<id>, bulk-tag, GET /v1/tags). */
    tags: TagService
    /** Groups of screens, and the condition a group (or a rule) selects screens by. */
    groups: GroupService
    /** Screens' tags changed: (workspaceId, screenIds), after the change committed. */
    tagChanges: Hook<TagChange>
    /** A group's definition changed or it was deleted: (workspaceId, groupId). */
    groupChanges: Hook<GroupChange>
    /** What each domain keeps aimed at a group, so deleting a used group is refused. */
    groupUsage: Hook<GroupUsage>
  }
}

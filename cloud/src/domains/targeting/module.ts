// Targeting: screens' tags and groups of screens (static lists and rules), and the rule
// compiler that turns a group into one SQL condition for every write that names screens.
import { Listeners } from '../../platform/hooks.js'
import { domainModule } from '../../platform/provisions.js'
import { GroupService, type GroupChange, type GroupUsage } from './GroupService.js'
import { TagService, type TagChange } from './TagService.js'

export { default as groupRoutes } from './groupRoutes.js'
export { default as tagRoutes } from './tagRoutes.js'

export const targetingModule = domainModule({
  name: 'targeting',
  needs: ['db', 'clock', 'ids', 'housekeeping', 'nodes', 'screens'],
  provides: ['tags', 'groups', 'tagChanges', 'groupChanges', 'groupUsage'],
  create: ({ db, clock, ids, housekeeping, nodes, screens }) => {
    const tagChanges = new Listeners<TagChange>()
    const groupChanges = new Listeners<GroupChange>()
    const groupUsage = new Listeners<GroupUsage>()
    const groups = new GroupService(db, clock, ids, nodes, groupChanges, groupUsage)
    const tags = new TagService(db, nodes, screens, groups, tagChanges)
    housekeeping.add({ name: 'tags of deleted screens', run: () => tags.purgeOrphans() })
    return { tags, groups, tagChanges, groupChanges, groupUsage }
  },
})

// What other domains use of targeting (tags, groups, rules): its public surface. The module that wires it is in module.ts.
export type { GroupChange, GroupService, GroupUsage } from './GroupService.js'
export type { TagChange, TagService } from './TagService.js'
export { cleanTags, MAX_TAGS_PER_SCREEN, TAG_PATTERN } from './rules.js'

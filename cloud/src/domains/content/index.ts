// The content library: every kind of item, sharing, recall, playability; and the screens'
// assignments, which republish the screens that show an item when it changes.
import { Listeners } from '../../platform/hooks.js'
import { domainModule } from '../provisions.js'
import { AssignmentService } from './AssignmentService.js'
import { ContentAccess } from './ContentAccess.js'
import { ContentPlayback } from './ContentPlayback.js'
import { ContentRecall } from './ContentRecall.js'
import { ContentSharing } from './ContentSharing.js'
import { type ContentChangeListener, ContentService, type ContentUsage } from './ContentService.js'
import { CONTENT_KINDS, type ContentKind } from './kinds.js'

export { default as contentRoutes } from './contentRoutes.js'
export type { ContentAccess } from './ContentAccess.js'
export type { ContentPlayback } from './ContentPlayback.js'
export { pageRules } from './contentRoutes.js'
export type { ContentService } from './ContentService.js'
export { ASSIGN_KINDS, BULK_ASSIGN_MAX } from './AssignmentService.js'

export const contentModule = domainModule({
  name: 'content',
  needs: ['db', 'clock', 'ids', 'log', 'nodes', 'nodeUsage', 'outbox', 'approvals', 'heldChanges'],
  provides: ['content', 'contentAccess', 'contentSharing', 'contentRecall', 'contentPlayback', 'contentUsage', 'contentChanges'],
  create: ({ db, clock, ids, log, nodes, nodeUsage, outbox, approvals, heldChanges }) => {
    const contentUsage = new Listeners<ContentUsage>()
    const contentChanges = new Listeners<ContentChangeListener>()
    const contentAccess = new ContentAccess(db, nodes)
    const content = new ContentService(db, clock, ids, nodes, contentAccess, log, approvals, contentUsage, contentChanges)
    // The library's other jobs: sharing and recall tell its listeners of their changes.
    const contentSharing = new ContentSharing(db, clock, nodes, contentAccess, content)
    const contentRecall = new ContentRecall(db, clock, contentAccess, outbox, content)
    const contentPlayback = new ContentPlayback(contentAccess, approvals)
    nodeUsage.add(async (ws, nodeId) => ({ what: 'content item(s) or share(s)', count: await content.countAtNode(ws, nodeId) }))
    // Every kind but media (which writes its own table, see the media module) is applied in the decision's transaction.
    heldChanges.add({
      kinds: CONTENT_KINDS.filter((k) => k !== 'media'),
      applyInDecision: (tx, ws, kind, id, proposal) => content.applyHeld(tx, ws, kind, id, proposal),
      discardNew: (ws, kind, id) => content.discardNew(ws, kind as ContentKind, id),
      changed: (ws, kind, id) => content.changed(ws, kind as ContentKind, id),
    })
    return { content, contentAccess, contentSharing, contentRecall, contentPlayback, contentUsage, contentChanges }
  },
})

export const assignmentsModule = domainModule({
  name: 'assignments',
  needs: ['db', 'clock', 'log', 'nodes', 'contentResolver', 'markDirty', 'contentUsage', 'contentChanges'],
  provides: ['assignments'],
  create: ({ db, clock, log, nodes, contentResolver, markDirty, contentUsage, contentChanges }) => ({
    assignments: new AssignmentService(db, clock, nodes, contentResolver, markDirty, log, { usage: contentUsage, changes: contentChanges }),
  }),
})

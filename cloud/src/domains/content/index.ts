// The content library: every kind of item, sharing, recall, playability; and the screens'
// assignments, which republish the screens that show an item when it changes.
import { Listeners } from '../../platform/hooks.js'
import { defineModule } from '../../platform/modules.js'
import type { DomainProvisions as D, PlatformProvisions as P } from '../provisions.js'
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

type Needs = Pick<P, 'db' | 'clock' | 'ids' | 'log'> & Pick<D, 'nodes' | 'nodeUsage' | 'outbox' | 'approvals' | 'heldChanges'>

export const contentModule = defineModule<
  Needs,
  Pick<D, 'content' | 'contentAccess' | 'contentSharing' | 'contentRecall' | 'contentPlayback' | 'contentUsage' | 'contentChanges'>
>({
  name: 'content',
  needs: { db: true, clock: true, ids: true, log: true, nodes: true, nodeUsage: true, outbox: true, approvals: true, heldChanges: true },
  provides: { content: true, contentAccess: true, contentSharing: true, contentRecall: true, contentPlayback: true, contentUsage: true, contentChanges: true },
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

type AssignmentNeeds = Pick<P, 'db' | 'clock' | 'log'> & Pick<D, 'nodes' | 'contentResolver' | 'markDirty' | 'contentUsage' | 'contentChanges'>

export const assignmentsModule = defineModule<AssignmentNeeds, Pick<D, 'assignments'>>({
  name: 'assignments',
  needs: { db: true, clock: true, log: true, nodes: true, contentResolver: true, markDirty: true, contentUsage: true, contentChanges: true },
  provides: { assignments: true },
  create: ({ db, clock, log, nodes, contentResolver, markDirty, contentUsage, contentChanges }) => ({
    assignments: new AssignmentService(db, clock, nodes, contentResolver, markDirty, log, { usage: contentUsage, changes: contentChanges }),
  }),
})

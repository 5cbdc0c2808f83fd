// The content library: every kind of item, sharing, recall, playability.
import { Listeners } from '../../platform/hooks.js'
import { domainModule } from '../../platform/provisions.js'
import { ContentAccess } from './ContentAccess.js'
import { ContentPlayback } from './ContentPlayback.js'
import { ContentRecall } from './ContentRecall.js'
import { ContentSharing } from './ContentSharing.js'
import { type ContentChangeListener, ContentService, type ContentUsage } from './ContentService.js'
import { type ContentKind, KINDS } from './kinds.js'

export { default as contentRoutes } from './contentRoutes.js'

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
    // Approval policies hold every kind that can go on a screen; those of the library (media
    // writes its own table, see the media module) are applied in the decision's transaction.
    heldChanges.add({
      kinds: KINDS.filter((k) => k.playable).map((k) => k.kind),
      applyInDecision: (tx, ws, kind, id, proposal) => content.applyHeld(tx, ws, kind, id, proposal),
      discardNew: (ws, kind, id) => content.discardNew(ws, kind as ContentKind, id),
      changed: (ws, kind, id) => content.changed(ws, kind as ContentKind, id),
    })
    return { content, contentAccess, contentSharing, contentRecall, contentPlayback, contentUsage, contentChanges }
  },
})

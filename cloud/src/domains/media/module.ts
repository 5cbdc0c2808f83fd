// Media files: uploads (single or resumable), imports, processing, signed downloads; the
// content-addressed store they share with screenshots.
import type { Principal } from '../../platform/http/Principal.js'
import { domainModule } from '../../platform/provisions.js'
import { MediaService } from './MediaService.js'
import { MediaStore } from './MediaStore.js'
import { MediaUrlRefreshWorker } from './MediaUrlRefreshWorker.js'
import { MediaUrlSigner } from './MediaUrlSigner.js'
import { StoredBytesRepository } from './StoredBytesRepository.js'

export { default as mediaRoutes } from './mediaRoutes.js'

export const mediaModule = domainModule({
  name: 'media',
  needs: [
    'db',
    'clock',
    'ids',
    'config',
    'log',
    'outbound',
    'stopSteps',
    'running',
    'housekeeping',
    'nodes',
    'content',
    'contentAccess',
    'contentSharing',
    'heldChanges',
  ],
  provides: ['media', 'mediaUrls', 'mediaStore'],
  create: ({ db, clock, ids, config, log, outbound, stopSteps, running, housekeeping, nodes, content, contentAccess, contentSharing, heldChanges }) => {
    // One content-addressed store for media and screenshots: a file goes only when no owner of any kind holds it.
    const storedBytes = new StoredBytesRepository(db.kysely)
    const mediaStore = new MediaStore(config.dataDir, config.mediaDir, (sha256) => storedBytes.inUse(sha256))
    const media = new MediaService(db, clock, ids, nodes, content, contentAccess, contentSharing, outbound, config, log, mediaStore)
    // Files left `processing` by a previous run are probed once every module is wired;
    // probes in flight finish before the broker closes.
    running.add('media processing', { start: () => media.kick() })
    stopSteps.add('media processing', () => media.idle())
    housekeeping.add({ name: 'multipart uploads', run: () => media.purgeExpiredUploads() })
    heldChanges.add({
      kinds: ['media'],
      applyAfterDecision: async (_ws, _kind, id, proposal, requester) => {
        await media.update(requester, id, proposal as { name?: string; folderId?: string | null; nodeId?: string | null })
      },
      discardNew: (ws, _kind, id) => media.remove(systemPrincipal(ws), id).then(() => undefined),
      changed: (ws, _kind, id) => content.changed(ws, 'media', id),
    })
    return { media, mediaUrls: new MediaUrlSigner(db, clock, undefined, config.publicUrl), mediaStore }
  },
})

/**
 * The republishing of desired states whose signed media URLs are getting old, on one
 * instance at a time. A module of its own: it needs the device link, which needs the media's URLs.
 */
export const mediaUrlRefreshModule = domainModule({
  name: 'media url refresh',
  needs: ['clock', 'config', 'log', 'leases', 'running', 'screenRecords', 'mediaUrls', 'desiredPublisher'],
  provides: ['mediaUrlRefresh'],
  create: ({ clock, config, log, leases, running, screenRecords, mediaUrls, desiredPublisher }) => {
    const mediaUrlRefresh = new MediaUrlRefreshWorker(
      screenRecords,
      clock,
      mediaUrls.ttlSeconds,
      (ws, ids) => desiredPublisher.markDirty(ws, ids),
      config.mediaUrlRefreshIntervalMs,
      log,
    ).oncePerCloud(leases, 'media-url-refresh')
    running.add('media url refresh', mediaUrlRefresh)
    return { mediaUrlRefresh }
  },
})

/** Acts for the service itself inside a workspace (an approved change applied on the requester's behalf). */
function systemPrincipal(workspaceId: string): Principal {
  return { actor: { kind: 'key', id: null, name: 'approvals', nodeId: null }, workspaceId, grant: 'all', nodeId: null }
}

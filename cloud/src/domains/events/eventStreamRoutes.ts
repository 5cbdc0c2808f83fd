// GET /v1/events/stream: the events the credential may see, live, as server-sent events
// (what the console shows without polling). Each message is
//   id: <event id>            (send it back as Last-Event-ID to resume)
//   event: <event name>       (screen.offline, emergency.started, …)
//   data: {"id","event","occurredAt","data"}
// An event is sent when the credential holds the permission its kind needs (screen events:
// screen.view; content: content.view; approvals: approval.view; emergencies:
// emergency.view); a credential pinned to a location gets only events naming a location in
// its subtree (`data.nodeId`: screens and approvals there). The stream opens with a
// `ready` message, carries a comment line every 15 s so proxies keep it open, and sends
// `reset` when Last-Event-ID is older than the outbox keeps (reload what you show); a
// Last-Event-ID that is not an event id is refused (422).
// Opening a stream needs at least one of those view permissions (403). A stream lives no
// longer than its credential: revoked, expired, signed out, its user removed or given a
// role without any of them, it gets `ended` (`{reason, message}`) and is closed, on every
// instance, and its place (StreamSlots.ts) is free at once. When the instance stops, every
// stream gets `retry: 1000` and `stopping` and ends before the drain waits on requests.
import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { holds, type Permission, type PermissionGrant } from '@svc/shared'
import { ApiError } from '../../platform/errors.js'
import { actorRef, type Principal, principalOf } from '../../platform/http/Principal.js'
import { bearerOrCookieToken, principalOfToken } from '../access/index.js'
import { errorResponses, PATTERN_MESSAGES } from '../../platform/contract.js'
import type { Provisions } from '../../platform/provisions.js'
import type { StreamEvent } from './EventStream.js'

const HEARTBEAT_MS = 15_000
/** How long a client of a stopping instance waits before it reconnects (to another instance, or this one restarted). */
export const STOPPING_RETRY_MS = 1000
/** Bytes a stream may have waiting for a slow client before it is ended with `overflow`. */
const MAX_BUFFERED_BYTES = 1024 * 1024

/** The permission each kind of event needs, by name prefix. */
const NEEDS: [string, Permission][] = [
  ['screen.', 'screen.view'],
  ['content.', 'content.view'],
  ['approval.', 'approval.view'],
  ['emergency.', 'emergency.view'],
]

const VIEW_PERMISSIONS = NEEDS.map(([, perm]) => perm)

/** Whether `grant` lets its holder see any event (a stream needs one of the view permissions above). */
export function mayStream(grant: PermissionGrant): boolean {
  return VIEW_PERMISSIONS.some((perm) => holds(grant, perm))
}

export function permissionFor(event: string): Permission | null {
  return NEEDS.find(([prefix]) => event.startsWith(prefix))?.[1] ?? null
}

const LAST_EVENT_ID = '^evt_[0-9a-z]{26}$'
PATTERN_MESSAGES.set(LAST_EVENT_ID, 'must be the id of an event this stream sent (evt_ and 26 lower-case letters or digits)')

const eventStreamRoutes =
  (d: Pick<Provisions, 'eventStream' | 'nodes' | 'timers' | 'credentialChanges' | 'apiKeys' | 'users' | 'oauth'>): FastifyPluginAsyncTypebox =>
  async (app) => {
    const { eventStream: hub } = d
    const timers = d.timers ?? { setTimer: (fn: () => void, ms: number) => setTimeout(fn, ms), clearTimer: (h: unknown) => clearTimeout(h as NodeJS.Timeout) }

    app.get(
      '/events/stream',
      {
        schema: {
          tags: ['events'],
          operationId: 'streamEvents',
          summary:
            'The events this credential may see, live, as server-sent events (text/event-stream); resume with Last-Event-ID. Needs one of screen.view, content.view, approval.view, emergency.view. At most 100 open streams per workspace and 10 per credential (429); ends with `ended` when the credential stops being valid',
          headers: Type.Object({
            'last-event-id': Type.Optional(
              Type.String({
                pattern: LAST_EVENT_ID,
                maxLength: 64,
                description: 'The id of the last event received: the stream starts with the events after it. Anything else than an event id is refused (422).',
              }),
            ),
          }),
          response: {
            200: {
              description:
                'Messages `id: <event id>`, `event: <name>`, `data: {"id","event","occurredAt","data"}` (the webhook catalogue\'s events), a `ready` message first, a comment every 15 s, `reset` when Last-Event-ID is too old, `overflow` before the server ends a stream its client reads too slowly, `stopping` (`{"retryMs"}`, after a `retry:` line) when the instance stops (reconnect with Last-Event-ID after that wait), `ended` (`{"reason","message"}`, reason `credential_invalid` or `forbidden`) before the server ends a stream whose credential was revoked, expired, signed out, removed or lost its view permissions.',
              content: { 'text/event-stream': { schema: Type.String() } },
            },
            ...errorResponses,
          },
        },
      },
      async (req, reply) => {
        let p = principalOf(req)
        if (!mayStream(p.grant))
          throw new ApiError('forbidden', `Missing permission: one of ${VIEW_PERMISSIONS.join(', ')} (a stream carries only the events they show).`)
        let reach = p.nodeId ? new Set(await d.nodes.subtree(p.workspaceId, p.nodeId)) : null
        const accepts = (e: StreamEvent): boolean => {
          const needs = permissionFor(e.event)
          if (!needs || !holds(p.grant, needs)) return false
          if (!reach) return true
          const nodeId = e.data.nodeId
          return typeof nodeId === 'string' && reach.has(nodeId)
        }
        // The schema refuses a malformed id (422); a well-formed one is resumed from.
        const last = req.headers['last-event-id'] ?? null
        const token = bearerOrCookieToken(req)

        const res = reply.raw
        let open = true
        let replaying = last !== null
        const held: StreamEvent[] = []
        const write = (chunk: string): void => {
          if (!open) return
          res.write(chunk)
          if (res.writableLength > MAX_BUFFERED_BYTES) {
            res.write('event: overflow\ndata: {}\n\n')
            end()
          }
        }
        const message = (e: StreamEvent): string =>
          `id: ${e.id}\nevent: ${e.event}\ndata: ${JSON.stringify({ id: e.id, event: e.event, occurredAt: e.occurredAt, data: e.data })}\n\n`
        const replayed = new Set<string>()
        const { remove, live } = await hub.add({
          workspaceId: p.workspaceId,
          credential: actorRef(p),
          accepts,
          send: (e) => {
            if (replaying) held.push(e)
            else if (!replayed.has(e.id)) write(message(e))
          },
          end: (reason) => (reason === 'stopping' ? stopping() : end()),
        })
        let heartbeat: unknown = null
        const end = (): void => {
          if (!open) return
          open = false
          unsubscribe()
          if (heartbeat !== null) timers.clearTimer(heartbeat)
          // The client sees the end once the place is free on every instance.
          void remove().finally(() => res.end())
        }
        /**
         * The service is stopping: the client is told to come back (`retry`, and `stopping` with
         * the wait) and the stream ends at once, so a stop never waits on watchers; its
         * connection closes with it (the server takes no new requests on it).
         */
        const stopping = (): void => {
          write(`retry: ${STOPPING_RETRY_MS}\nevent: stopping\ndata: ${JSON.stringify({ retryMs: STOPPING_RETRY_MS })}\n\n`)
          end()
        }
        /** Ends the stream with an `ended` message saying why (the client should not reconnect with this credential). */
        const finish = (reason: 'credential_invalid' | 'forbidden', message: string): void => {
          write(`event: ended\ndata: ${JSON.stringify({ reason, message })}\n\n`)
          end()
        }
        // The credential is asked about again whenever credentials change (on any instance:
        // the changes are broadcast) and at every heartbeat (an expiry, a change whose
        // broadcast was lost): revoked, expired, signed out or its user removed ends the
        // stream; a new role or grant applies from then on, and without any view permission
        // the stream ends too.
        let checking = false
        let checkAgain = false
        const recheck = async (): Promise<void> => {
          if (!open || token === undefined) return
          if (checking) {
            checkAgain = true
            return
          }
          checking = true
          try {
            do {
              checkAgain = false
              let fresh: Principal | null
              try {
                fresh = await principalOfToken(d, token)
              } catch (err) {
                req.log.warn({ err }, 'event stream: checking its credential failed; checking again at the next heartbeat')
                return
              }
              if (!open) return
              if (!fresh)
                return finish('credential_invalid', 'The credential of this stream is no longer valid (revoked, expired, signed out or its user removed).')
              if (!mayStream(fresh.grant)) return finish('forbidden', `The credential of this stream no longer holds any of ${VIEW_PERMISSIONS.join(', ')}.`)
              if (fresh.nodeId !== p.nodeId) reach = fresh.nodeId ? new Set(await d.nodes.subtree(fresh.workspaceId, fresh.nodeId)) : null
              p = fresh
            } while (checkAgain && open)
          } finally {
            checking = false
          }
        }
        const unsubscribe = d.credentialChanges.subscribe((c) => {
          if (c.kind !== 'workspace') void recheck()
        })
        const beat = (): void => {
          write(': keep-alive\n\n')
          void recheck()
          if (open) heartbeat = timers.setTimer(beat, HEARTBEAT_MS)
        }

        reply.hijack()
        // The headers set so far (request id, nosniff, rate limits), then the stream's own.
        res.writeHead(200, {
          ...(reply.getHeaders() as Record<string, string>),
          'content-type': 'text/event-stream; charset=utf-8',
          'cache-control': 'no-store',
          connection: 'keep-alive',
          'x-accel-buffering': 'no',
        })
        req.raw.on('close', end)
        // A change made while the stream was being set up (before it listened) counts too.
        void recheck()
        await live
        write('retry: 3000\n')
        write(`event: ready\ndata: ${JSON.stringify({ workspaceId: p.workspaceId })}\n\n`)
        heartbeat = timers.setTimer(beat, HEARTBEAT_MS)

        if (last) {
          const missed = await hub.replay(p.workspaceId, last).catch(() => null)
          if (missed === null) write('event: reset\ndata: {}\n\n')
          for (const e of missed ?? [])
            if (accepts(e)) {
              replayed.add(e.id)
              write(message(e))
            }
          replaying = false
          for (const e of held) if (!replayed.has(e.id)) write(message(e))
          held.length = 0
        }
      },
    )
  }
export default eventStreamRoutes

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
// `reset` when Last-Event-ID is older than the outbox keeps (reload what you show).
import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { holds, type Permission } from '@svc/shared'
import { principalOf } from '../../platform/http/Principal.js'
import { errorResponses } from '../../platform/contract.js'
import type { Provisions } from '../provisions.js'
import type { StreamEvent } from './EventStream.js'

const HEARTBEAT_MS = 15_000
/** Bytes a stream may have waiting for a slow client before it is ended with `overflow`. */
const MAX_BUFFERED_BYTES = 1024 * 1024

/** The permission each kind of event needs, by name prefix. */
const NEEDS: [string, Permission][] = [
  ['screen.', 'screen.view'],
  ['content.', 'content.view'],
  ['approval.', 'approval.view'],
  ['emergency.', 'emergency.view'],
]

export function permissionFor(event: string): Permission | null {
  return NEEDS.find(([prefix]) => event.startsWith(prefix))?.[1] ?? null
}

const ID = /^evt_[0-9a-z]{26}$/

const eventStreamRoutes =
  (d: Pick<Provisions, 'eventStream' | 'nodes' | 'timers'>): FastifyPluginAsyncTypebox =>
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
            'The events this credential may see, live, as server-sent events (text/event-stream); resume with Last-Event-ID. At most 100 open streams per workspace (429)',
          headers: Type.Object({
            'last-event-id': Type.Optional(
              Type.String({ maxLength: 64, description: 'The id of the last event received: the stream starts with the events after it.' }),
            ),
          }),
          response: {
            200: {
              description:
                'Messages `id: <event id>`, `event: <name>`, `data: {"id","event","occurredAt","data"}` (the webhook catalogue\'s events), a `ready` message first, a comment every 15 s, `reset` when Last-Event-ID is too old, `overflow` before the server ends a stream its client reads too slowly.',
              content: { 'text/event-stream': { schema: Type.String() } },
            },
            ...errorResponses,
          },
        },
      },
      async (req, reply) => {
        const p = principalOf(req)
        const reach = p.nodeId ? new Set(await d.nodes.subtree(p.workspaceId, p.nodeId)) : null
        const accepts = (e: StreamEvent): boolean => {
          const needs = permissionFor(e.event)
          if (!needs || !holds(p.grant, needs)) return false
          if (!reach) return true
          const nodeId = e.data.nodeId
          return typeof nodeId === 'string' && reach.has(nodeId)
        }
        const lastHeader = req.headers['last-event-id']
        const last = typeof lastHeader === 'string' && ID.test(lastHeader) ? lastHeader : null

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
        const { remove, live } = hub.add({
          workspaceId: p.workspaceId,
          accepts,
          send: (e) => {
            if (replaying) held.push(e)
            else if (!replayed.has(e.id)) write(message(e))
          },
          end: () => end(),
        })
        let heartbeat: unknown = null
        const end = (): void => {
          if (!open) return
          open = false
          remove()
          if (heartbeat !== null) timers.clearTimer(heartbeat)
          res.end()
        }
        const beat = (): void => {
          write(': keep-alive\n\n')
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

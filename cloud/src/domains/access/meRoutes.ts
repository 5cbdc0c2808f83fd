// GET /v1/me: the calling credential, its workspace and the permissions it holds.
import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyReply } from 'fastify'
import { expand } from '@svc/shared'
import { principalOf, type Principal } from '../../platform/http/Principal.js'
import { Data, Nullable, errorResponses } from '../../platform/contract.js'
import type { Provisions } from '../../platform/provisions.js'

export const Actor = Type.Object({
  kind: Type.Union([Type.Literal('key'), Type.Literal('user'), Type.Literal('staff')]),
  id: Nullable(Type.String()),
  name: Nullable(Type.String()),
  email: Type.Optional(Nullable(Type.String())),
  nodeId: Nullable(Type.String()),
})

const Me = Type.Object({
  actor: Actor,
  workspace: Type.Object({ id: Type.String(), name: Type.String() }),
  permissions: Type.Array(Type.String(), { description: 'Every permission the credential holds (`all` is expanded to the catalogue).' }),
  grant: Type.Union([Type.Literal('all'), Type.Array(Type.String())], { description: 'The grant as stored: `all` or the list.' }),
})

const JSON_TYPE = 'application/json; charset=utf-8'

const meRoutes =
  (d: Pick<Provisions, 'workspaces'>): FastifyPluginAsyncTypebox =>
  async (app) => {
    // The answer only depends on the principal and the workspace row, both immutable objects
    // kept by their caches (a revoke, permission change or workspace change replaces them):
    // the serialised answer is kept per principal and reused while the same row is cached.
    const answers = new WeakMap<Principal, { ws: object; json: string }>()

    /** Serialises the answer by the route's response schema (as Fastify would), keeps it and sends it. */
    async function answer(p: Principal, reply: FastifyReply): Promise<void> {
      const row = await d.workspaces.require(p.workspaceId)
      const json = reply.serialize({
        data: {
          actor: p.actor,
          workspace: { id: row.id, name: row.name },
          permissions: expand(p.grant),
          grant: p.grant === 'all' ? ('all' as const) : [...p.grant],
        },
      }) as string
      if (Object.isFrozen(p)) answers.set(p, { ws: row, json })
      // Resolves once the answer is written (a reply is thenable).
      await reply.type(JSON_TYPE).send(json)
    }

    app.get('/me', { schema: { tags: ['identity'], summary: 'The calling credential', response: { 200: Data(Me), ...errorResponses } } }, (req, reply) => {
      const p = principalOf(req)
      const ws = d.workspaces.cached(p.workspaceId)
      const kept = ws && answers.get(p)
      if (!kept || kept.ws !== ws) return answer(p, reply as FastifyReply)
      void (reply as FastifyReply).type(JSON_TYPE).send(kept.json)
    })
  }
export default meRoutes

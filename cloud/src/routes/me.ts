// GET /v1/me: the calling credential, its workspace and the permissions it holds.
import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { expand } from '@svc/shared'
import { principalOf } from '../http/types.js'
import { Data, Nullable, errorResponses } from '../http/schemas.js'

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

const meRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/me', { schema: { tags: ['identity'], summary: 'The calling credential', response: { 200: Data(Me), ...errorResponses } } }, async (req) => {
    const p = principalOf(req)
    const ws = await app.services.workspaces.require(p.workspaceId)
    return {
      data: {
        actor: p.actor,
        workspace: { id: ws.id, name: ws.name },
        permissions: expand(p.grant),
        grant: p.grant === 'all' ? ('all' as const) : [...p.grant],
      },
    }
  })
}
export default meRoutes

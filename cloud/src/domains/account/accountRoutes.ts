// GET /v1/account (the Account object, every field present) and GET /v1/account/limits.
import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { principalOf } from '../../platform/http/Principal.js'
import { Data, errorResponses } from '../../platform/contract.js'
import type { Provisions } from '../../platform/provisions.js'

export const LIMITS = {
  mediaUploadPerMinutePerKey: 300,
  serialTemplate: { nameMaxChars: 120, maxCommands: 200, valueMaxChars: 512 },
  webhook: { descriptionMaxChars: 200, receiverTimeoutSeconds: 10, attempts: 9, deliveryLogDays: 30 },
  requestIdMaxChars: 120,
}

const accountRoutes =
  (d: Pick<Provisions, 'config' | 'users' | 'workspaces'>): FastifyPluginAsyncTypebox =>
  async (app) => {
    const { workspaces, users } = d

    app.get(
      '/account',
      {
        config: { permission: 'account.view' },
        schema: {
          tags: ['account'],
          summary: 'The workspace account',
          response: { 200: Data(Type.Object({}, { additionalProperties: true })), ...errorResponses },
        },
      },
      async (req) => {
        const p = principalOf(req)
        let user = { email: null as string | null, emailVerifiedAt: null as string | null }
        if (p.actor.kind === 'user' && p.actor.id) {
          const u = await users.get(p.workspaceId, p.actor.id)
          if (u) user = { email: u.email, emailVerifiedAt: u.email_verified_at }
        }
        return { data: await workspaces.account(p, user) }
      },
    )

    app.get(
      '/account/limits',
      {
        config: { permission: 'account.view' },
        schema: {
          tags: ['account'],
          summary: "The workspace's limits",
          response: { 200: Data(Type.Object({}, { additionalProperties: true })), ...errorResponses },
        },
      },
      async (req) => {
        const ws = await workspaces.require(principalOf(req).workspaceId)
        return {
          data: {
            rateLimit: { limit: workspaces.rateLimitOf(ws), windowSeconds: 60, scope: 'workspace', appliesTo: 'api-key' },
            ...LIMITS,
            // Upload and import ceilings are settings: report what this server enforces.
            mediaUploadMaxBytes: d.config.mediaUploadMaxBytes,
            mediaImportMaxBytes: d.config.mediaImportMaxBytes,
            licensedScreens: ws.licensed_screens,
          },
        }
      },
    )
  }
export default accountRoutes

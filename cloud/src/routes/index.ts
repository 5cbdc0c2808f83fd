// The /v1 interface: one plugin per domain, each with its paths written relative to the
// `/v1` prefix that app.ts registers this scope under. A domain plugin owns its routes and
// the background work that serves them (interval workers, broker deliveries) with their
// onReady / onClose hooks. The order here is the order of the OpenAPI document's paths.
// Routes outside /v1 (the OAuth discovery documents) are registered by app.ts beside this scope.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { Deprecation } from '../http/deprecations.js'
import meRoutes from './me.js'
import apiKeyRoutes from './apiKeys.js'
import nodeRoutes from './nodes.js'
import accountRoutes from './account.js'
import statusRoutes from './status.js'
import screenRoutes from './screens.js'
import deviceRoutes from './devices.js'
import castRoutes from './casts.js'
import emergencyRoutes from './emergencies.js'
import serialTemplateRoutes from './serialTemplates.js'
import serialJobRoutes from './serialJobs.js'
import serialPresetRoutes from './serialPresets.js'
import contentRoutes from './content.js'
import mediaRoutes from './media.js'
import webhookRoutes from './webhooks.js'
import alertRoutes from './alerts.js'
import userRoutes from './users.js'
import oauthRoutes from './oauth.js'
import playLogRoutes from './playLog.js'
import mcpRoutes from './mcp.js'
import screenshotRoutes from './screenshots.js'
import approvalRoutes from './approvals.js'

export default function v1Routes(deprecations: Deprecation[]): FastifyPluginAsyncTypebox {
  return async (v1) => {
    await v1.register(meRoutes)
    await v1.register(apiKeyRoutes)
    await v1.register(nodeRoutes)
    await v1.register(accountRoutes)
    await v1.register(statusRoutes(deprecations))
    await v1.register(screenRoutes)
    await v1.register(deviceRoutes)
    await v1.register(castRoutes)
    await v1.register(emergencyRoutes)
    await v1.register(serialTemplateRoutes)
    await v1.register(serialJobRoutes)
    await v1.register(serialPresetRoutes)
    await v1.register(contentRoutes)
    await v1.register(mediaRoutes)
    await v1.register(webhookRoutes)
    await v1.register(alertRoutes)
    await v1.register(userRoutes)
    await v1.register(oauthRoutes)
    await v1.register(playLogRoutes)
    await v1.register(mcpRoutes)
    await v1.register(screenshotRoutes)
    await v1.register(approvalRoutes)
  }
}

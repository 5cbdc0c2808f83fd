// The /v1 interface: one plugin per domain, each with its paths written relative to the
// `/v1` prefix that app.ts registers this scope under. A domain plugin owns its routes and
// the background work that serves them (interval workers, broker deliveries) with their
// onReady / onClose hooks. The order here is the order of the OpenAPI document's paths.
// Routes outside /v1 (the OAuth discovery documents) are registered by app.ts beside this scope.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { Deprecation } from '../platform/http/deprecations.js'
import meRoutes from './access/meRoutes.js'
import apiKeyRoutes from './access/apiKeyRoutes.js'
import nodeRoutes from './nodes/nodeRoutes.js'
import accountRoutes from './account/accountRoutes.js'
import statusRoutes from './status/statusRoutes.js'
import screenRoutes from './screens/screenRoutes.js'
import deviceRoutes from './screens/deviceRoutes.js'
import castRoutes from './takeovers/castRoutes.js'
import emergencyRoutes from './takeovers/emergencyRoutes.js'
import serialTemplateRoutes from './serial/serialTemplateRoutes.js'
import serialJobRoutes from './serial/serialJobRoutes.js'
import serialPresetRoutes from './serial/serialPresetRoutes.js'
import contentRoutes from './content/contentRoutes.js'
import mediaRoutes from './media/mediaRoutes.js'
import webhookRoutes from './webhooks/webhookRoutes.js'
import alertRoutes from './alerts/alertRoutes.js'
import userRoutes from './access/userRoutes.js'
import oauthRoutes from './access/oauthRoutes.js'
import playLogRoutes from './playlog/playLogRoutes.js'
import mcpRoutes from './mcp/mcpRoutes.js'
import screenshotRoutes from './screenshots/screenshotRoutes.js'
import approvalRoutes from './approvals/approvalRoutes.js'

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

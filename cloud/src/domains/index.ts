// The cloud's domains, in one list. app.ts wires them (platform/modules.ts: each module's
// needs checked and built in dependency order) and then registers the /v1 interface below,
// each route plugin holding the provisions it uses by closure.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { Deprecation } from '../platform/http/deprecations.js'
import type { AnyModule } from '../platform/modules.js'
import { accessModule, apiKeyRoutes, meRoutes, oauthRoutes, userRoutes } from './access/index.js'
import { accountModule, accountRoutes } from './account/index.js'
import { alertRoutes, alertsModule } from './alerts/index.js'
import { approvalRoutes, approvalsModule } from './approvals/index.js'
import { assignmentsModule, contentModule, contentRoutes } from './content/index.js'
import { devicelinkModule } from './devicelink/index.js'
import { eventsModule } from './events/index.js'
import { mailModule } from './mail/index.js'
import { mcpRoutes } from './mcp/index.js'
import { mediaModule, mediaRoutes } from './media/index.js'
import { nodeRoutes, nodesModule } from './nodes/index.js'
import { playLogModule, playLogRoutes } from './playlog/index.js'
import type { Provisions } from './provisions.js'
import { deviceRoutes, screenRoutes, screensModule } from './screens/index.js'
import { screenshotRoutes, screenshotsModule } from './screenshots/index.js'
import { serialJobRoutes, serialModule, serialPresetRoutes, serialTemplateRoutes } from './serial/index.js'
import { statusModule, statusRoutes } from './status/index.js'
import { castRoutes, emergencyRoutes, takeoversModule } from './takeovers/index.js'
import { webhookRoutes, webhooksModule } from './webhooks/index.js'

export type { PlatformProvisions, Provisions } from './provisions.js'

/** Every domain module. Built in dependency order; where that leaves a choice, in this order. */
export const MODULES: readonly AnyModule[] = [
  eventsModule,
  mailModule,
  nodesModule,
  accessModule,
  accountModule,
  screensModule,
  approvalsModule,
  contentModule,
  mediaModule,
  devicelinkModule,
  assignmentsModule,
  takeoversModule,
  serialModule,
  playLogModule,
  alertsModule,
  webhooksModule,
  screenshotsModule,
  statusModule,
]

/**
 * The /v1 interface: one plugin per resource, with paths relative to the `/v1` prefix app.ts
 * registers this scope under. The order here is the order of the OpenAPI document's paths.
 */
export function v1Routes(p: Provisions, deprecations: Deprecation[]): FastifyPluginAsyncTypebox {
  return async (v1) => {
    await v1.register(meRoutes(p))
    await v1.register(apiKeyRoutes(p))
    await v1.register(nodeRoutes(p))
    await v1.register(accountRoutes(p))
    await v1.register(statusRoutes(p, deprecations))
    await v1.register(screenRoutes(p))
    await v1.register(deviceRoutes(p))
    await v1.register(castRoutes(p))
    await v1.register(emergencyRoutes(p))
    await v1.register(serialTemplateRoutes(p))
    await v1.register(serialJobRoutes(p))
    await v1.register(serialPresetRoutes)
    await v1.register(contentRoutes(p))
    await v1.register(mediaRoutes(p))
    await v1.register(webhookRoutes(p))
    await v1.register(alertRoutes(p))
    await v1.register(userRoutes(p))
    await v1.register(oauthRoutes(p))
    await v1.register(playLogRoutes(p))
    await v1.register(mcpRoutes(p))
    await v1.register(screenshotRoutes(p))
    await v1.register(approvalRoutes(p))
  }
}

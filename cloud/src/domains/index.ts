// The cloud's domains, in one list. app.ts wires them (platform/modules.ts: each module's
// needs checked and built in dependency order) and then registers the /v1 interface below,
// each route plugin holding the provisions it uses by closure.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { Deprecation } from '../platform/http/deprecations.js'
import { named } from '../platform/http/plugins.js'
import type { AnyModule } from '../platform/modules.js'
import { accessModule, apiKeyRoutes, meRoutes, oauthRoutes, sessionRoutes, userRoutes } from './access/module.js'
import { accountModule, accountRoutes } from './account/module.js'
import { agentLogRoutes, agentLogsModule } from './agentlogs/module.js'
import { agentUpdateRoutes, agentUpdatesModule } from './agentupdates/module.js'
import { alertRoutes, alertsModule } from './alerts/module.js'
import { capModule, capRoutes } from './cap/module.js'
import { approvalRoutes, approvalsModule } from './approvals/module.js'
import { auditModule, auditRoutes } from './audit/module.js'
import { contentModule, contentRoutes } from './content/module.js'
import { devicelinkModule } from './devicelink/module.js'
import { driftModule } from './drift/module.js'
import { eventStreamRoutes, eventsModule } from './events/module.js'
import { hoursModule, hoursRecordsModule, hoursRoutes } from './hours/module.js'
import { mailModule } from './mail/module.js'
import { mcpRoutes } from './mcp/module.js'
import { mediaModule, mediaRoutes, mediaUrlRefreshModule } from './media/module.js'
import { nodeRoutes, nodesModule } from './nodes/module.js'
import { playLogModule, playLogRoutes } from './playlog/module.js'
import type { Provisions } from '../platform/provisions.js'
import { reportRoutes, reportsModule } from './reports/module.js'
import { assignmentsModule, deviceRoutes, screenRoutes, screensModule } from './screens/module.js'
import { screenshotRoutes, screenshotsModule } from './screenshots/module.js'
import { serialJobRoutes, serialModule, serialPresetRoutes, serialTemplateRoutes } from './serial/module.js'
import { scimRoutes, ssoModule, ssoRoutes } from './sso/module.js'
import { statusModule, statusRoutes } from './status/module.js'
import { groupRoutes, tagRoutes, targetingModule } from './targeting/module.js'
import { castRoutes, emergencyRoutes, takeoverRecordsModule, takeoversModule } from './takeovers/module.js'
import { timelineModule, timelineRoutes } from './timeline/module.js'
import { webhookRoutes, webhooksModule } from './webhooks/module.js'

export type { PlatformProvisions, Provisions } from '../platform/provisions.js'
/** The HTTP edge's authentication and the OAuth metadata documents, which app.ts installs outside /v1. */
export { installAuth, oauthMetadataRoutes } from './access/module.js'
/** The HTTP edge's recording of every write in the audit log, which app.ts installs after authentication. */
export { installAudit } from './audit/module.js'
export { consoleRoutes } from './console/index.js'
/** SCIM 2.0 provisioning at /scim/v2 (its own errors and token), which app.ts registers beside /v1. */
export { scimRoutes }

/** Every domain module. Built in dependency order; where that leaves a choice, in this order. */
export const MODULES: readonly AnyModule[] = [
  auditModule,
  eventsModule,
  mailModule,
  nodesModule,
  accessModule,
  accountModule,
  screensModule,
  targetingModule,
  approvalsModule,
  contentModule,
  mediaModule,
  takeoverRecordsModule,
  hoursRecordsModule,
  devicelinkModule,
  mediaUrlRefreshModule,
  assignmentsModule,
  hoursModule,
  takeoversModule,
  capModule,
  timelineModule,
  serialModule,
  driftModule,
  playLogModule,
  reportsModule,
  alertsModule,
  webhooksModule,
  screenshotsModule,
  agentLogsModule,
  agentUpdatesModule,
  statusModule,
  ssoModule,
]

/**
 * The /v1 interface: one plugin per resource, with paths relative to the `/v1` prefix app.ts
 * registers this scope under. The order here is the order of the OpenAPI document's paths.
 */
export function v1Routes(p: Provisions, deprecations: Deprecation[]): FastifyPluginAsyncTypebox {
  return async (v1) => {
    await v1.register(named('meRoutes', meRoutes(p)))
    await v1.register(named('apiKeyRoutes', apiKeyRoutes(p)))
    await v1.register(named('nodeRoutes', nodeRoutes(p)))
    await v1.register(named('accountRoutes', accountRoutes(p)))
    await v1.register(named('statusRoutes', statusRoutes(p, deprecations)))
    await v1.register(named('screenRoutes', screenRoutes(p)))
    await v1.register(named('tagRoutes', tagRoutes(p)))
    await v1.register(named('groupRoutes', groupRoutes(p)))
    await v1.register(named('deviceRoutes', deviceRoutes(p)))
    await v1.register(named('timelineRoutes', timelineRoutes(p)))
    await v1.register(named('hoursRoutes', hoursRoutes(p)))
    await v1.register(named('castRoutes', castRoutes(p)))
    await v1.register(named('emergencyRoutes', emergencyRoutes(p)))
    await v1.register(named('capRoutes', capRoutes(p)))
    await v1.register(named('serialTemplateRoutes', serialTemplateRoutes(p)))
    await v1.register(named('serialJobRoutes', serialJobRoutes(p)))
    await v1.register(named('serialPresetRoutes', serialPresetRoutes))
    await v1.register(named('contentRoutes', contentRoutes(p)))
    await v1.register(named('mediaRoutes', mediaRoutes(p)))
    await v1.register(named('webhookRoutes', webhookRoutes(p)))
    await v1.register(named('alertRoutes', alertRoutes(p)))
    await v1.register(named('userRoutes', userRoutes(p)))
    await v1.register(named('sessionRoutes', sessionRoutes(p)))
    await v1.register(named('ssoRoutes', ssoRoutes(p)))
    await v1.register(named('eventStreamRoutes', eventStreamRoutes(p)))
    await v1.register(named('oauthRoutes', oauthRoutes(p)))
    await v1.register(named('playLogRoutes', playLogRoutes(p)))
    await v1.register(named('reportRoutes', reportRoutes(p)))
    await v1.register(named('mcpRoutes', mcpRoutes(p)))
    await v1.register(named('screenshotRoutes', screenshotRoutes(p)))
    await v1.register(named('agentLogRoutes', agentLogRoutes(p)))
    await v1.register(named('agentUpdateRoutes', agentUpdateRoutes(p)))
    await v1.register(named('approvalRoutes', approvalRoutes(p)))
    await v1.register(named('auditRoutes', auditRoutes(p)))
  }
}

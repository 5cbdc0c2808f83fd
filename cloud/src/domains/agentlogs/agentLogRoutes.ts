// Remote logs of a screen's agent:
//   POST /v1/screens/:id/logs          ask the agent for its recent lines (202; body optional: {lines?, since?})
//   GET  /v1/agent-logs/:id            the request: state, and its lines once done
//   GET  /v1/screens/:id/agent-logs    a screen's requests, newest first, without their lines (paged)
//   PUT  /v1/devices/agent-logs/:id    the agent's upload (device credential, JSON {lines, truncated})
// Asking needs `screen.edit`: each answer is up to 1 MiB stored for days, so it is bounded
// (one open request per screen, AGENT_LOG_REQUESTS_PER_HOUR, the storage budgets) and kept
// from read-only credentials; reading needs `screen.view` (docs/decisions.md, "Remote logs"
// and "Remote logs: bounds").
import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { AGENT_LOG_LEVELS, AGENT_LOG_LIMITS, AGENT_LOG_SOURCES } from '@svc/shared/mqtt/index'
import { principalOf } from '../../platform/http/Principal.js'
import { Data, ErrorBody, IdParams, Paged, StringEnum, Timestamp, errorResponses } from '../../platform/contract.js'
import { PageQuery, parsePage } from '../../platform/paging.js'
import { AGENT_LOG_DEFAULT_LINES, AGENT_LOG_REQUESTS_PER_HOUR, AGENT_LOG_RETENTION_DAYS, AgentLog, AgentLogSummary } from './AgentLogService.js'
import type { Provisions } from '../../platform/provisions.js'

const RequestBody = Type.Object(
  {
    lines: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: AGENT_LOG_LIMITS.maxLines,
        description: `At most this many lines, the newest (default ${AGENT_LOG_DEFAULT_LINES}).`,
      }),
    ),
    since: Type.Optional(Type.String({ ...Timestamp, description: "Only lines logged at or after this time (by the player's clock)." })),
  },
  { additionalProperties: false },
)

const UploadLine = Type.Object(
  {
    at: Timestamp,
    level: StringEnum(AGENT_LOG_LEVELS),
    source: StringEnum(AGENT_LOG_SOURCES),
    message: Type.String({
      maxLength: AGENT_LOG_LIMITS.messageLength,
      description: 'Any text: markup, terminal escapes, NUL and line separators are kept as they are and served back as JSON strings.',
    }),
  },
  { additionalProperties: false },
)

const UploadBody = Type.Object(
  {
    lines: Type.Array(UploadLine, { maxItems: AGENT_LOG_LIMITS.maxLines, description: 'Oldest first.' }),
    truncated: Type.Optional(Type.Boolean({ description: 'True when the agent left matching lines out (its bounds, or its memory).' })),
  },
  { additionalProperties: false },
)

/** 409 on asking: the open request's id comes with it. */
const ConflictBody = Type.Object(
  { ...ErrorBody.properties, agentLogId: Type.Optional(Type.String({ description: 'The open request of the screen.' })) },
  { additionalProperties: true, description: '`conflict`: the screen already has an open (pending) request, named by `agentLogId`.' },
)

/** 429 on asking, with when to ask again. */
const RateLimitedBody = Type.Object(
  {
    ...ErrorBody.properties,
    limit: Type.Optional(Type.Integer({ description: 'Requests allowed per window.' })),
    windowSeconds: Type.Optional(Type.Integer({ description: '3600 for the per-screen limit, 60 for the workspace’s.' })),
    retryAfterSeconds: Type.Optional(Type.Integer({ description: 'As Retry-After.' })),
  },
  {
    additionalProperties: true,
    description: `\`rate_limited\`: the screen was asked ${AGENT_LOG_REQUESTS_PER_HOUR} times in this clock hour (counted across the cloud's instances), or the workspace is over its rate limit.`,
    headers: { 'Retry-After': Type.Integer({ description: 'Seconds to wait before asking again (for the per-screen limit: until the next clock hour).' }) },
  },
)

const agentLogRoutes =
  (d: Pick<Provisions, 'agentLogs'>): FastifyPluginAsyncTypebox =>
  async (app) => {
    const { agentLogs } = d

    app.post(
      '/screens/:id/logs',
      {
        config: { permission: 'screen.edit' },
        // The body is optional: none at all means the defaults. A body that is there (JSON
        // `null` included) is validated like any other.
        preValidation: async (req) => {
          if (req.body === undefined) req.body = {}
        },
        schema: {
          tags: ['agent-logs'],
          operationId: 'requestScreenLogs',
          summary: `Ask the screen's agent for its recent log lines and its kiosk browser's console; poll GET /v1/agent-logs/<id> until done, failed or expired (kept ${AGENT_LOG_RETENTION_DAYS} days, or less past the storage budget). 409 conflict while the screen has an open request; 429 rate_limited past ${AGENT_LOG_REQUESTS_PER_HOUR} requests per screen per clock hour`,
          params: IdParams,
          body: RequestBody,
          response: { 202: Data(AgentLog), 409: ConflictBody, ...errorResponses, 429: RateLimitedBody },
        },
      },
      async (req, reply) => reply.code(202).send({ data: await agentLogs.request(principalOf(req), req.params.id, req.body) }),
    )

    app.get(
      '/agent-logs/:id',
      {
        config: { permission: 'screen.view' },
        schema: {
          tags: ['agent-logs'],
          operationId: 'getAgentLog',
          summary: "A request for a screen's log lines, with the lines once done",
          params: IdParams,
          response: { 200: Data(AgentLog), ...errorResponses },
        },
      },
      async (req) => ({ data: await agentLogs.get(principalOf(req), req.params.id) }),
    )

    app.get(
      '/screens/:id/agent-logs',
      {
        config: { permission: 'screen.view' },
        schema: {
          tags: ['agent-logs'],
          operationId: 'listScreenAgentLogs',
          summary: "A screen's log requests, newest first, without their lines",
          params: IdParams,
          querystring: PageQuery,
          response: { 200: Paged(AgentLogSummary), ...errorResponses },
        },
      },
      async (req) => agentLogs.listForScreen(principalOf(req), req.params.id, parsePage(req.query, { defaultLimit: null, max: 500 })),
    )

    app.put(
      '/devices/agent-logs/:id',
      {
        // Lines are text whatever they hold: NUL too (kept escaped in the JSON column).
        config: { auth: 'none', nulAllowed: true },
        bodyLimit: AGENT_LOG_LIMITS.maxBytes,
        // The credential is checked before the body is read, as the screenshot upload does:
        // nobody else makes the cloud parse a megabyte of JSON. The upload checks it again.
        onRequest: async (req) => {
          await agentLogs.uploader((req.params as { id: string }).id, req.headers.authorization)
        },
        schema: {
          tags: ['devices'],
          operationId: 'uploadAgentLog',
          security: [{ deviceCredential: [] }],
          summary: `The agent uploads the lines a log request asked for (JSON, at most ${AGENT_LOG_LIMITS.maxLines} lines of at most ${AGENT_LOG_LIMITS.messageLength} characters, ${AGENT_LOG_LIMITS.maxBytes} bytes), authenticated with its device credential: Authorization: Basic base64(screenId:deviceSecret)`,
          params: IdParams,
          body: UploadBody,
          response: { 200: Data(AgentLogSummary), 401: ErrorBody, 409: ErrorBody, 413: ErrorBody, 422: ErrorBody, 500: ErrorBody, 503: ErrorBody },
        },
      },
      async (req) => ({ data: await agentLogs.upload(req.params.id, req.headers.authorization, req.body) }),
    )
  }
export default agentLogRoutes

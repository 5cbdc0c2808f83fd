// /v1/mcp: the Model Context Protocol over Streamable HTTP (JSON-RPC 2.0), through the
// SDK's web-standard transport. POSTs are answered with JSON, not event streams.
//
// - POST: one JSON-RPC message. `initialize` without `Mcp-Session-Id` opens a session (the
//   answer carries its id); every other message names its session. An unknown, expired or
//   another caller's session answers 404 (JSON-RPC -32001), and the client starts again.
//   With SVC_REDIS_URL a session works on every instance of the cloud (domains/mcp/sessions.ts).
// - GET with `Mcp-Session-Id` opens the session's event stream (one per session; it ends
//   with the session). DELETE with `Mcp-Session-Id` closes the session.
// - A bearer credential on every request (API key, OAuth access token or session token);
//   without one, 401 with `WWW-Authenticate: Bearer resource_metadata=…` (RFC 9728).
// - 30 requests per minute per caller (the key, whichever of its tokens is used), on top of
//   the workspace's limit, which counts the request once (its tool call included).
// - Transport-level failures answer JSON-RPC errors (`{jsonrpc, id: null, error: {code,
//   message}}`); failures before the transport (credential, rate, size, type) the
//   {error, message} envelope.
import { randomUUID } from 'node:crypto'
import { Type } from '@sinclair/typebox'
import type { FastifyInstance, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify'
import type { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js'
import type { Server } from '@modelcontextprotocol/sdk/server/index.js'
import { principalOf, type Principal } from '../../platform/http/Principal.js'
import { ApiError } from '../../platform/errors.js'
import { ErrorBody } from '../../platform/contract.js'
import { mcpSdk } from './sdk.js'
import { createMcpServer, McpToolRunner, type McpCaller } from './server.js'
import { McpSessionStore, MCP_SESSION_LIMITS, RedisMcpSessionDirectory, type McpSessionDirectory, type McpSessionRecord } from './sessions.js'
import type { Provisions } from '../../platform/provisions.js'

export const MCP_RATE = { limit: 30, windowSeconds: 60 }

/** A body that was not JSON: the route answers a JSON-RPC parse error for it. */
class Unparsable {
  constructor(readonly reason: string) {}
}

interface Session {
  id: string
  server: Server
  transport: WebStandardStreamableHTTPServerTransport
  /** Settles when the session closes (a request in flight then answers 404). */
  closed: Promise<void>
  close(): Promise<void>
}

export interface McpState {
  sessions: McpSessionStore<Session>
  /** The cloud's session records (Redis), or null on a single instance. */
  directory: McpSessionDirectory | null
  runner: McpToolRunner
}
// Keyed by the HTTP server, which the app and every plugin scope of it share.
const states = new WeakMap<object, McpState>()
/** The endpoint's sessions and tools, for tests and diagnostics. */
export const mcpStateOf = (app: FastifyInstance): McpState | undefined => states.get(app.server)

const utf8 = new TextDecoder('utf-8', { fatal: true })

function rpcError(status: number, code: number, message: string, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code, message } }), {
    status,
    headers: { 'content-type': 'application/json', ...headers },
  })
}
const sessionNotFound = () => rpcError(404, -32001, 'Session not found: it ended, expired or belongs to another credential; send initialize again.')

/** Who the session belongs to: a key and every token of it are one caller. */
const callerRef = (p: Principal) => `${p.workspaceId}/${p.actor.kind}:${p.actor.id ?? ''}`

function baseUrl(publicUrl: string | null, req: FastifyRequest): string {
  if (publicUrl) return publicUrl.replace(/\/+$/, '')
  return `${req.protocol}://${req.host}`
}

/** The headers the transport reads, as a web Request (the body is handed over parsed). */
function webRequest(req: FastifyRequest): Request {
  const headers = new Headers()
  for (const name of ['accept', 'content-type', 'mcp-session-id', 'mcp-protocol-version', 'last-event-id']) {
    const v = req.headers[name]
    if (typeof v === 'string') headers.set(name, v)
  }
  return new Request(`http://localhost${req.url}`, { method: req.method, headers })
}

const JsonRpcError = Type.Object(
  {
    jsonrpc: Type.Literal('2.0'),
    id: Type.Null(),
    error: Type.Object({ code: Type.Integer(), message: Type.String(), data: Type.Optional(Type.Unknown()) }),
  },
  { description: 'A JSON-RPC 2.0 error.' },
)
const JsonRpcMessage = Type.Object(
  {
    jsonrpc: Type.Literal('2.0'),
    id: Type.Optional(Type.Union([Type.String(), Type.Integer()])),
    method: Type.Optional(Type.String({ description: '`initialize`, `notifications/initialized`, `tools/list`, `tools/call`, `ping`, …' })),
    params: Type.Optional(Type.Object({}, { additionalProperties: true })),
    result: Type.Optional(Type.Object({}, { additionalProperties: true })),
    error: Type.Optional(Type.Object({}, { additionalProperties: true })),
  },
  { additionalProperties: true, description: 'A JSON-RPC 2.0 request, notification or response of the Model Context Protocol.' },
)
const SESSION_HEADER = {
  type: 'object',
  properties: {
    'mcp-session-id': { type: 'string', maxLength: 200, description: 'The session, from the `initialize` answer; absent on `initialize`.' },
    'mcp-protocol-version': { type: 'string', maxLength: 40, description: 'The protocol revision agreed at `initialize`.' },
  },
} as const
/** The bounds every JSON body meets (platform/http/jsonBounds.ts), checked before the transport sees the message. */
const BOUNDS_ERROR = {
  ...ErrorBody,
  description: '`validation_error` (the envelope): the body nests deeper than 32 levels, an object field is over 256 KB of JSON, or text holds U+0000.',
}
const transportErrors = {
  400: { ...JsonRpcError, description: 'A message that is not JSON or not JSON-RPC, a missing `Mcp-Session-Id`, an unsupported protocol version.' },
  404: { ...JsonRpcError, description: 'The session is unknown: it ended, expired or belongs to another credential. Send `initialize` again.' },
  401: ErrorBody,
  429: ErrorBody,
  500: ErrorBody,
  503: ErrorBody,
}

const mcpRoutes =
  (d: Pick<Provisions, 'clock' | 'config' | 'rateLimiter' | 'redis'>): FastifyPluginAsync =>
  async (app) => {
    const { rateLimiter, clock, config } = d
    const runner = new McpToolRunner(app)
    const sessions = new McpSessionStore<Session>(clock, MCP_SESSION_LIMITS)
    const directory = d.redis ? new RedisMcpSessionDirectory(d.redis, MCP_SESSION_LIMITS) : null
    states.set(app.server, { sessions, directory, runner })
    // Before the server stops accepting: an open event stream would hold its close up.
    app.addHook('preClose', async () => {
      await sessions.closeAll()
    })

    // This plugin's scope only: a body that is not JSON is a JSON-RPC parse error, not the
    // envelope's bad_request.
    const parseJson = app.getDefaultJsonParser('error', 'error')
    app.removeContentTypeParser('application/json')
    app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (req, body, done) => {
      let text: string
      try {
        text = utf8.decode(body as Buffer)
      } catch {
        return done(null, new Unparsable('the body is not UTF-8'))
      }
      if (text.trim() === '') return done(null, new Unparsable('the body is empty'))
      parseJson(req, text, (err, value) => {
        if (!err) return done(null, value)
        done(
          null,
          new Unparsable(/prototype/i.test(err.message) ? 'the body holds a forbidden key (__proto__ or constructor.prototype)' : 'the body is not valid JSON'),
        )
      })
    })

    app.addHook('onSend', async (req, reply, payload) => {
      if (reply.statusCode === 401) {
        const challenge = `Bearer resource_metadata="${baseUrl(config.publicUrl, req)}/.well-known/oauth-protected-resource"`
        reply.header('www-authenticate', req.headers.authorization ? `${challenge}, error="invalid_token"` : challenge)
      }
      return payload
    })

    /** 30 requests per minute per caller, counted after authentication. */
    async function mcpRate(req: FastifyRequest): Promise<void> {
      const d = await rateLimiter.hit(`mcp:${callerRef(principalOf(req))}`, MCP_RATE.limit, MCP_RATE.windowSeconds)
      if (!d.allowed) {
        throw new ApiError(
          'rate_limited',
          `Over the rate limit of ${d.limit} MCP requests per ${d.windowSeconds} seconds for this credential; retry after ${d.resetSeconds} s.`,
          {
            extra: { limit: d.limit, windowSeconds: d.windowSeconds, retryAfterSeconds: d.resetSeconds },
            headers: { 'retry-after': String(d.resetSeconds) },
          },
        )
      }
    }

    function caller(req: FastifyRequest): McpCaller {
      return { principal: principalOf(req), authorization: req.headers.authorization ?? '', ip: req.ip, requestId: String(req.id) }
    }

    /** A new session's server and transport; `knownId` rebuilds a session another instance opened. */
    async function openSession(owner: string, knownId?: string): Promise<Session> {
      const sdk = await mcpSdk()
      const server = createMcpServer(sdk, runner)
      let markClosed!: () => void
      const closed = new Promise<void>((resolve) => {
        markClosed = resolve
      })
      const session: Session = {
        id: '',
        server,
        closed,
        transport: new sdk.Transport({
          sessionIdGenerator: () => knownId ?? randomUUID(),
          enableJsonResponse: true,
          onsessioninitialized: (id) => {
            session.id = id
            sessions.add(id, owner, session)
          },
        }),
        close: async () => {
          await server.close().catch(() => undefined)
        },
      }
      server.onclose = () => {
        markClosed()
        if (session.id) sessions.forget(session.id)
      }
      await server.connect(session.transport)
      return session
    }

    /** Runs one request through the session's transport; a session that closes meanwhile answers 404 (but DELETE, which closes it). */
    async function handle(session: Session, req: FastifyRequest, body: unknown): Promise<Response> {
      const request = webRequest(req)
      const options = { parsedBody: body, authInfo: { token: '', clientId: callerRef(principalOf(req)), scopes: [], extra: { caller: caller(req) } } }
      if (session.id) sessions.begin(session.id)
      try {
        const answer = session.transport.handleRequest(request, options)
        return await (req.method === 'DELETE' ? answer : Promise.race([answer, session.closed.then(sessionNotFound)]))
      } finally {
        if (session.id) sessions.end(session.id)
      }
    }

    /** Rebuilds a session recorded by another instance: its server, initialized as the session began. */
    async function resume(id: string, record: McpSessionRecord): Promise<Session | null> {
      const session = await openSession(record.caller, id)
      const init = new Request('http://localhost/v1/mcp', {
        method: 'POST',
        headers: { accept: 'application/json, text/event-stream', 'content-type': 'application/json' },
      })
      await session.transport.handleRequest(init, { parsedBody: { jsonrpc: '2.0', id: 0, method: 'initialize', params: record.init } }).catch(() => undefined)
      if (session.id === id) return session
      await session.close()
      return null
    }
    const resuming = new Map<string, Promise<Session | null>>()

    /**
     * The caller's session `id`, or null. With a directory, the record decides: gone means
     * ended everywhere (a copy held here closes), present means it can be continued here.
     * When the directory cannot answer, the sessions this instance holds still work.
     */
    async function findSession(id: string, req: FastifyRequest): Promise<Session | null> {
      const owner = callerRef(principalOf(req))
      const local = sessions.get(id, owner)
      if (!directory) return local
      const record = await directory.use(id)
      if (record === undefined) return local
      if (record === null) {
        if (local) sessions.close(id)
        return null
      }
      if (record.caller !== owner) return null
      if (local) return local
      let pending = resuming.get(id)
      if (!pending) {
        pending = resume(id, record).finally(() => resuming.delete(id))
        resuming.set(id, pending)
      }
      return pending
    }

    const sessionId = (req: FastifyRequest): string | null => {
      const v = req.headers['mcp-session-id']
      return typeof v === 'string' ? v : null
    }

    // The transport validates messages and headers itself, answering JSON-RPC errors: the
    // schemas below document the endpoint, they do not validate it.
    const common = { config: {}, onRequest: mcpRate, validatorCompiler: () => () => true }

    app.post(
      '/mcp',
      {
        ...common,
        // The transport: each tool call is recorded in the audit log as its own operation (via `mcp`).
        config: { audit: false },
        schema: {
          tags: ['mcp'],
          operationId: 'postMcpMessage',
          summary: 'Send a Model Context Protocol message (Streamable HTTP, JSON-RPC 2.0)',
          description:
            'Send `Accept: application/json, text/event-stream`. `initialize` without `Mcp-Session-Id` opens a session; its answer carries the `Mcp-Session-Id` header to send from then on. ' +
            'Tools are the API operations this credential may use; each call goes through the same permission, location pin, tenancy, validation, idempotency and rate rules as the operation itself. ' +
            'Answers JSON (a JSON-RPC response), or 202 for a notification. 30 requests per minute per credential.',
          headers: SESSION_HEADER,
          // The transport also takes a batch (an array of messages), as protocol revisions before 2025-06-18 send.
          body: { anyOf: [JsonRpcMessage, { type: 'array', items: JsonRpcMessage, description: 'A batch of messages.' }] },
          response: {
            200: { ...JsonRpcMessage, description: 'The JSON-RPC response; `initialize` answers carry `Mcp-Session-Id`.' },
            202: { type: 'null', description: 'A notification or response was accepted.' },
            406: { ...JsonRpcError, description: 'Accept does not list both application/json and text/event-stream.' },
            422: BOUNDS_ERROR,
            ...transportErrors,
          },
        },
      },
      async (req: FastifyRequest, reply: FastifyReply) => {
        const body = req.body
        if (body instanceof Unparsable) return reply.send(rpcError(400, -32700, `Parse error: ${body.reason}.`))
        const id = sessionId(req)
        if (id === null) {
          if (!(await mcpSdk()).types.isInitializeRequest(body)) {
            return reply.send(rpcError(400, -32000, 'Bad Request: send Mcp-Session-Id, or start a session with an initialize request.'))
          }
          const owner = callerRef(principalOf(req))
          const session = await openSession(owner)
          const res = await handle(session, req, body)
          // A refused initialize (wrong Accept, bad params) leaves no session behind.
          if (!session.id) await session.close()
          else await directory?.add(session.id, { caller: owner, init: body.params })
          return reply.send(res)
        }
        const session = await findSession(id, req)
        if (!session) return reply.send(sessionNotFound())
        return reply.send(await handle(session, req, body ?? null))
      },
    )

    app.delete(
      '/mcp',
      {
        ...common,
        schema: {
          tags: ['mcp'],
          operationId: 'closeMcpSession',
          summary: 'End a Model Context Protocol session',
          headers: { ...SESSION_HEADER, required: ['mcp-session-id'] },
          response: { 200: { type: 'null', description: 'The session is closed.' }, 422: BOUNDS_ERROR, ...transportErrors },
        },
      },
      async (req: FastifyRequest, reply: FastifyReply) => {
        const id = sessionId(req)
        if (id === null) return reply.send(rpcError(400, -32000, 'Bad Request: send the Mcp-Session-Id to close.'))
        const session = await findSession(id, req)
        if (!session) return reply.send(sessionNotFound())
        const res = await handle(session, req, null)
        sessions.close(id)
        await directory?.remove(id, callerRef(principalOf(req)))
        return reply.send(res)
      },
    )

    app.get(
      '/mcp',
      {
        ...common,
        schema: {
          tags: ['mcp'],
          operationId: 'openMcpStream',
          summary: "Open a Model Context Protocol session's event stream (server-sent events)",
          description:
            'Send `Accept: text/event-stream` and the `Mcp-Session-Id`. One stream per session (a second answers 409); it ends when the session does. ' +
            'The tools send nothing on it today: every answer comes on its POST.',
          headers: { ...SESSION_HEADER, required: ['mcp-session-id'] },
          response: {
            200: { description: 'The event stream.', content: { 'text/event-stream': { schema: { type: 'string' } } } },
            406: { ...JsonRpcError, description: 'Accept does not list text/event-stream.' },
            409: { ...JsonRpcError, description: 'The session already has its stream open.' },
            ...transportErrors,
          },
        },
      },
      async (req: FastifyRequest, reply: FastifyReply) => {
        const id = sessionId(req)
        if (id === null) return reply.send(rpcError(400, -32000, 'Bad Request: send the Mcp-Session-Id of the session whose stream to open.'))
        const session = await findSession(id, req)
        if (!session) return reply.send(sessionNotFound())
        return reply.send(openedStream(await handle(session, req, null)))
      },
    )
  }

const encoder = new TextEncoder()

/**
 * An event stream starts with a comment, so its headers reach the client now rather than
 * with the first event (Node holds them until the body's first bytes). Cancelling the
 * stream still reaches the transport through the pipe.
 */
function openedStream(res: Response): Response {
  if (!res.body || !res.headers.get('content-type')?.startsWith('text/event-stream')) return res
  const opened = res.body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      start(controller) {
        controller.enqueue(encoder.encode(': stream open\n\n'))
      },
    }),
  )
  return new Response(opened, { status: res.status, headers: res.headers })
}
export default mcpRoutes

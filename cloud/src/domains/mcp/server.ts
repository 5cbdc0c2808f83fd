// One MCP server (the SDK's low-level `Server`) per session, answering `tools/list` and
// `tools/call` for the caller of each request. Tools come from the OpenAPI document
// (tools.ts); a call runs the tool's route as an inner request with the caller's own
// credential (platform/http/innerRequests.ts), so the route's permission, pin, tenancy, validation,
// idempotency and per-route rate rules decide it exactly as over HTTP.
import type { FastifyInstance } from 'fastify'
import type { Server } from '@modelcontextprotocol/sdk/server/index.js'
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js'
import { holds, type Permission } from '@svc/shared'
import type { Principal } from '../../platform/http/Principal.js'
import { REQUEST_ID_HEADER } from '../../platform/http/requestId.js'
import { buildTools, ToolArgumentError, toolRequest, type McpTool, type OpenApiDocument } from './tools.js'
import { INNER_REQUEST_HEADER, openInnerRequest } from '../../platform/http/innerRequests.js'
import { mcpSdk, type McpSdk } from './sdk.js'

/** What a request to the MCP endpoint hands its handlers (through the SDK's authInfo.extra). */
export interface McpCaller {
  principal: Principal
  /** The Authorization header the caller sent, reused for the inner requests. */
  authorization: string
  ip: string
  requestId: string
}

export const SERVER_INFO = { name: 'signage-control', title: 'Signage control API', version: '1' }
const INSTRUCTIONS =
  'Tools of the signage control API, acting with the permissions of the credential this client connected with. ' +
  'Each tool is one HTTP operation: path and query parameters are arguments by name, a request body goes in `body`. ' +
  'Results are the JSON the API answers; refusals are tool errors holding {error, message}.'

type ToolResult = CallToolResult & { structuredContent?: Record<string, unknown> }

const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

function answer(body: unknown, text: string, isError: boolean): ToolResult {
  return { content: [{ type: 'text', text }], ...(isPlainObject(body) ? { structuredContent: body } : {}), ...(isError ? { isError: true } : {}) }
}

const refusal = (error: string, message: string): ToolResult => {
  const body = { error, message }
  return answer(body, JSON.stringify(body), true)
}

export class McpToolRunner {
  private tools: Promise<Map<string, McpTool>> | null = null

  constructor(private readonly app: FastifyInstance) {}

  /** Every tool, built once from the document the API serves. */
  all(): Promise<Map<string, McpTool>> {
    this.tools ??= (async () => {
      const res = await this.app.inject({ method: 'GET', url: '/v1/openapi.json' })
      if (res.statusCode !== 200) throw new Error(`MCP tools: GET /v1/openapi.json answered ${res.statusCode}`)
      return new Map(buildTools(res.json() as OpenApiDocument).map((t) => [t.name, t]))
    })()
    this.tools.catch(() => {
      this.tools = null
    })
    return this.tools
  }

  /** Whether `principal` may use `tool`: the route's permission, as the route checks it. */
  allowed(principal: Principal, tool: McpTool): boolean {
    return tool.permission === 'none' || holds(principal.grant, tool.permission as Permission)
  }

  async list(caller: McpCaller): Promise<McpTool[]> {
    return [...(await this.all()).values()].filter((t) => this.allowed(caller.principal, t))
  }

  async call(caller: McpCaller, name: string, args: Record<string, unknown> | undefined): Promise<ToolResult> {
    const tool = (await this.all()).get(name)
    if (!tool) {
      const { McpError, ErrorCode } = (await mcpSdk()).types
      throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${name}`)
    }
    if (!this.allowed(caller.principal, tool)) return refusal('forbidden', `Missing permission: ${tool.permission}`)
    let request: ReturnType<typeof toolRequest>
    try {
      request = toolRequest(tool, args)
    } catch (e) {
      if (e instanceof ToolArgumentError) return refusal('validation_error', e.message)
      throw e
    }
    // The tool's operation is recorded in the audit log as made through MCP.
    const inner = openInnerRequest({ origin: 'mcp' })
    try {
      const res = await this.app.inject({
        method: request.method as 'GET',
        url: request.url,
        remoteAddress: caller.ip,
        headers: {
          authorization: caller.authorization,
          [INNER_REQUEST_HEADER]: inner.ticket,
          [REQUEST_ID_HEADER]: caller.requestId,
          ...(request.idempotencyKey !== undefined ? { 'idempotency-key': request.idempotencyKey } : {}),
          ...(request.body !== undefined ? { 'content-type': 'application/json' } : {}),
        },
        ...(request.body !== undefined ? { payload: JSON.stringify(request.body) } : {}),
      })
      let body: unknown = null
      try {
        body = res.body ? JSON.parse(res.body) : null
      } catch {
        body = null
      }
      const failed = res.statusCode >= 400
      if (failed && !isPlainObject(body)) return refusal('internal_error', `The operation answered ${res.statusCode} without a JSON body.`)
      return answer(body, res.body, failed)
    } finally {
      inner.close()
    }
  }
}

function callerOf(sdk: McpSdk, extra: { authInfo?: { extra?: Record<string, unknown> } }): McpCaller {
  const { McpError, ErrorCode } = sdk.types
  const caller = extra.authInfo?.extra?.caller as McpCaller | undefined
  if (!caller) throw new McpError(ErrorCode.InternalError, 'request reached the MCP server without a caller')
  return caller
}

export function toolDefinition(t: McpTool): Tool {
  return {
    name: t.name,
    title: t.title,
    description: t.description,
    inputSchema: t.inputSchema,
    annotations: {
      title: t.title,
      // A preview (of a timeline, of a rule) is a POST that stores nothing.
      readOnlyHint: t.method === 'GET' || /^preview/.test(t.name),
      // Creates and commands change what screens show; clears end a takeover.
      destructiveHint: t.method === 'DELETE' || /^clear/.test(t.name),
      idempotentHint: t.method === 'GET' || t.idempotent || /^preview/.test(t.name),
      openWorldHint: false,
    },
  }
}

export function createMcpServer(sdk: McpSdk, runner: McpToolRunner): Server {
  const { ListToolsRequestSchema, CallToolRequestSchema } = sdk.types
  const server = new sdk.Server(SERVER_INFO, { capabilities: { tools: { listChanged: false } }, instructions: INSTRUCTIONS })
  server.setRequestHandler(ListToolsRequestSchema, async (_req, extra) => ({ tools: (await runner.list(callerOf(sdk, extra))).map(toolDefinition) }))
  server.setRequestHandler(CallToolRequestSchema, async (req, extra) => runner.call(callerOf(sdk, extra), req.params.name, req.params.arguments))
  return server
}

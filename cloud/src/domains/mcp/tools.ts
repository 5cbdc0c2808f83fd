// MCP tools, generated from the API's own OpenAPI document (GET /v1/openapi.json, itself
// generated from the route schemas): one tool per operation named in MCP_OPERATIONS. The
// tool's name is the operationId, its description the operation's summary, its input
// schema the operation's path and query parameters (by name), `body` (the JSON request
// body's schema) and `idempotencyKey` (when the operation takes an Idempotency-Key).
// Nothing about an operation is written twice, so a tool cannot drift from its route;
// an operationId below that the document lacks fails the build of the tool list.
//
// A call becomes an ordinary HTTP request to the route (see McpToolRunner), so the route's
// own permission, pin, tenancy, validation, idempotency and rate rules decide the answer.

/** The operations offered as tools, by operationId. */
export const MCP_OPERATIONS = [
  'getMe',
  'listNodes',
  'getNode',
  'listScreens',
  'getScreen',
  'getScreenTimeline',
  'previewTimeline',
  'assignScreen',
  'getScreenPanel',
  'listTags',
  'bulkTagScreens',
  'listGroups',
  'getGroup',
  'createGroup',
  'updateGroup',
  'listGroupMembers',
  'previewGroups',
  'createCast',
  'listCasts',
  'getCast',
  'clearCast',
  'createEmergency',
  'listEmergencies',
  'getEmergency',
  'listEmergencyScreens',
  'clearEmergency',
  'sendScreenSerialCommand',
  'getSerialJob',
  'listScreenSerialJobs',
  'listSerialPresets',
  'listSerialTemplates',
  'listMedia',
  'getMedia',
  'listPlaylists',
  'getPlaylist',
  'createPlaylist',
  'listSchedules',
  'getSchedule',
  'listAlertEvents',
  'getAlertEvent',
  'listApprovals',
  'getApproval',
  'approveApproval',
  'rejectApproval',
  'requestScreenshot',
  'getScreenshot',
  'requestScreenLogs',
  'getAgentLog',
  'listScreenAgentLogs',
  'summarizePlayLog',
] as const

type Schema = Record<string, unknown>

interface DocParameter {
  name: string
  in: string
  required?: boolean
  description?: string
  schema?: Schema
}

interface DocOperation {
  operationId?: string
  summary?: string
  description?: string
  'x-svc-permission'?: string
  parameters?: DocParameter[]
  requestBody?: { required?: boolean; description?: string; content?: Record<string, { schema?: Schema }> }
}

export interface OpenApiDocument {
  paths: Record<string, Record<string, DocOperation>>
  components?: { schemas?: Record<string, Schema> }
}

export interface McpTool {
  name: string
  title: string
  description: string
  /** The permission the route needs; `none` = any authenticated caller. */
  permission: string
  method: string
  /** OpenAPI path, `/v1/screens/{id}`. */
  path: string
  pathParams: string[]
  queryParams: string[]
  body: 'none' | 'optional' | 'required'
  idempotent: boolean
  inputSchema: { type: 'object'; properties: Record<string, Schema>; required?: string[]; additionalProperties: false }
}

export const IDEMPOTENCY_ARGUMENT = 'idempotencyKey'

/** Inlines `#/components/schemas/…` references, so every input schema stands alone. */
function inline(schema: unknown, doc: OpenApiDocument, depth = 0): unknown {
  if (Array.isArray(schema)) return schema.map((s) => inline(s, doc, depth))
  if (!schema || typeof schema !== 'object') return schema
  const s = schema as Schema
  if (typeof s.$ref === 'string') {
    const m = /^#\/components\/schemas\/(.+)$/.exec(s.$ref)
    const target = m ? doc.components?.schemas?.[m[1]!] : undefined
    if (!target || depth > 20) throw new Error(`MCP tools: cannot resolve ${s.$ref}`)
    return inline(target, doc, depth + 1)
  }
  return Object.fromEntries(Object.entries(s).map(([k, v]) => [k, inline(v, doc, depth)]))
}

export function buildTools(doc: OpenApiDocument, names: readonly string[] = MCP_OPERATIONS): McpTool[] {
  const byId = new Map<string, { method: string; path: string; op: DocOperation }>()
  for (const [path, methods] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(methods)) if (op?.operationId) byId.set(op.operationId, { method: method.toUpperCase(), path, op })
  }
  return names.map((name) => {
    const found = byId.get(name)
    if (!found) throw new Error(`MCP tools: the OpenAPI document has no operation ${name}`)
    const { method, path, op } = found
    const properties: Record<string, Schema> = {}
    const required: string[] = []
    const pathParams: string[] = []
    const queryParams: string[] = []
    let idempotent = false
    for (const p of op.parameters ?? []) {
      if (p.in === 'header') {
        if (p.name.toLowerCase() === 'idempotency-key') {
          idempotent = true
          properties[IDEMPOTENCY_ARGUMENT] = {
            ...(inline(p.schema ?? { type: 'string' }, doc) as Schema),
            description: p.description ?? 'Makes a retried call safe: a repeat with the same key returns the first answer.',
          }
        }
        continue
      }
      if (p.in !== 'path' && p.in !== 'query') continue
      const schema = inline(p.schema ?? { type: 'string' }, doc) as Schema
      properties[p.name] = p.description && !schema.description ? { ...schema, description: p.description } : schema
      if (p.in === 'path') pathParams.push(p.name)
      else queryParams.push(p.name)
      if (p.in === 'path' || p.required) required.push(p.name)
    }
    const json = op.requestBody?.content?.['application/json']?.schema
    let body: McpTool['body'] = 'none'
    if (op.requestBody) {
      if (!json) throw new Error(`MCP tools: ${name} does not take a JSON body`)
      body = op.requestBody.required ? 'required' : 'optional'
      properties.body = { ...(inline(json, doc) as Schema), description: op.requestBody.description ?? 'The JSON request body of the operation.' }
      if (body === 'required') required.push('body')
    }
    const permission = op['x-svc-permission'] ?? 'none'
    const title = op.summary ?? name
    const description = [
      title,
      op.description,
      `HTTP: ${method} ${path}.`,
      permission === 'none' ? 'Needs no permission.' : `Needs the permission ${permission}.`,
      "Answers the route's JSON; a refusal is a tool error holding {error, message}.",
    ]
      .filter(Boolean)
      .join(' ')
    return {
      name,
      title,
      description,
      permission,
      method,
      path,
      pathParams,
      queryParams,
      body,
      idempotent,
      inputSchema: { type: 'object', properties, ...(required.length ? { required } : {}), additionalProperties: false },
    }
  })
}

export class ToolArgumentError extends Error {}

export interface ToolRequest {
  method: string
  url: string
  body?: unknown
  idempotencyKey?: string
}

const scalar = (v: unknown): string | null => (typeof v === 'string' ? v : typeof v === 'number' || typeof v === 'boolean' ? String(v) : null)

/**
 * The HTTP request a call of `tool` with `args` makes. Only the shape is checked here
 * (known argument names, scalar parameters); the route validates the values.
 */
export function toolRequest(tool: McpTool, args: Record<string, unknown> | undefined): ToolRequest {
  const a = args ?? {}
  for (const k of Object.keys(a)) {
    if (!Object.hasOwn(tool.inputSchema.properties, k)) throw new ToolArgumentError(`${k} is not an argument of ${tool.name}.`)
  }
  let url = tool.path
  for (const p of tool.pathParams) {
    const v = scalar(a[p])
    if (v === null || v === '') throw new ToolArgumentError(`${p} is required: a non-empty string.`)
    url = url.replace(`{${p}}`, encodeURIComponent(v))
  }
  const query = new URLSearchParams()
  for (const q of tool.queryParams) {
    if (a[q] === undefined || a[q] === null) continue
    // A repeatable parameter (listScreens' `tag`) takes a list: each value is sent once.
    const values = Array.isArray(a[q]) ? (a[q] as unknown[]).map(scalar) : [scalar(a[q])]
    if (values.some((v) => v === null)) throw new ToolArgumentError(`${q} must be a string, a number or a boolean (or a list of them).`)
    for (const v of values) query.append(q, v!)
  }
  const qs = query.toString()
  const out: ToolRequest = { method: tool.method, url: qs ? `${url}?${qs}` : url }
  if (tool.body !== 'none' && a.body !== undefined) out.body = a.body
  else if (tool.body === 'required') throw new ToolArgumentError('body is required.')
  const key = a[IDEMPOTENCY_ARGUMENT]
  if (key !== undefined) {
    if (typeof key !== 'string') throw new ToolArgumentError(`${IDEMPOTENCY_ARGUMENT} must be a string.`)
    out.idempotencyKey = key
  }
  return out
}

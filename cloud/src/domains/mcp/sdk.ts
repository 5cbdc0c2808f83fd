// The MCP SDK (and zod, which its message schemas are built with) loads with the first
// request to /mcp, not with the cloud: it was the largest npm load of a start, for an
// endpoint many deployments never use.
import type { Server } from '@modelcontextprotocol/sdk/server/index.js'
import type { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js'
import type * as Types from '@modelcontextprotocol/sdk/types.js'

export interface McpSdk {
  Server: typeof Server
  Transport: typeof WebStandardStreamableHTTPServerTransport
  types: typeof Types
}

let loaded: Promise<McpSdk> | null = null

/** The SDK's parts the endpoint uses, loaded by the first call. */
export function mcpSdk(): Promise<McpSdk> {
  loaded ??= Promise.all([
    import('@modelcontextprotocol/sdk/server/index.js'),
    import('@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js'),
    import('@modelcontextprotocol/sdk/types.js'),
  ]).then(([server, transport, types]) => ({ Server: server.Server, Transport: transport.WebStandardStreamableHTTPServerTransport, types }))
  return loaded
}

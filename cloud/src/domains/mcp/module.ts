// The MCP endpoint: the API's operations as tools for AI clients, over the same credentials.
export { default as mcpRoutes, mcpStateOf } from './mcpRoutes.js'

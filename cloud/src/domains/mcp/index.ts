// What other domains use of mcp: its public surface. The module that wires it is in module.ts.
export { countedByMcp } from './internalCalls.js'

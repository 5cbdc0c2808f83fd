// What other domains use of mcp: nothing; its module (the /v1/mcp endpoint) is in module.ts.
export {}

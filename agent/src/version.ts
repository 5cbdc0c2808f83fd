// The agent's own version, as it reports it (`reported.agentVersion`, shown on every screen
// view): baked into the packed program when it is bundled (`agent pack`), read from
// agent/package.json when the agent runs from the repository.
import { readFileSync } from 'node:fs'

declare const __SVC_AGENT_VERSION__: string | undefined

function fromPackageJson(): string {
  const file = new URL('../package.json', import.meta.url)
  return (JSON.parse(readFileSync(file, 'utf8')) as { version: string }).version
}

/** True in the packed program (`agent pack`'s bundle), false when run from the repository. */
export const PACKED = typeof __SVC_AGENT_VERSION__ === 'string'

export const AGENT_VERSION: string = typeof __SVC_AGENT_VERSION__ === 'string' ? __SVC_AGENT_VERSION__ : fromPackageJson()

/** The command's name in its usage and messages: `svc-agent` packed, `agent` (pnpm agent) from the repository. */
export const PROGRAM = PACKED ? 'svc-agent' : 'agent'

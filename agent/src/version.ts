// The agent's own version, as it reports it (`reported.agentVersion`, shown on every screen
// view): baked into the packed program when it is bundled (`agent pack`), read from
// agent/package.json when the agent runs from the repository.
import { readFileSync } from 'node:fs'

declare const __SVC_AGENT_VERSION__: string | undefined

function fromPackageJson(): string {
  const file = new URL('../package.json', import.meta.url)
  return (JSON.parse(readFileSync(file, 'utf8')) as { version: string }).version
}

export const AGENT_VERSION: string = typeof __SVC_AGENT_VERSION__ === 'string' ? __SVC_AGENT_VERSION__ : fromPackageJson()

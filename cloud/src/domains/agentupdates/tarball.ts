// What an uploaded agent tarball is: its version (svc-agent/package.json) and architecture
// (the serial binding's prebuilt folder, svc-agent/lib/prebuilds/linux-<arch>/), read with
// node-tar without unpacking it. A file that is not a gzipped tar, or not a packed agent
// (no svc-agent/bin/svc-agent, lib/svc-agent.mjs or package.json), is refused.
import { list } from 'tar'
import { AGENT_ARCHES, AGENT_VERSION_PATTERN, type AgentArch } from '@svc/shared/mqtt/index'

export interface PackedAgent {
  version: string
  arch: AgentArch
}

const PACKAGE_JSON = 'svc-agent/package.json'
const NEEDED = ['svc-agent/bin/svc-agent', 'svc-agent/lib/svc-agent.mjs', PACKAGE_JSON]

/** Reads the tarball at `file`; throws an Error whose message says what it lacks. */
export async function inspectTarball(file: string): Promise<PackedAgent> {
  const seen = new Set<string>()
  const arches = new Set<string>()
  let pkg = ''
  try {
    await list({
      file,
      strict: true,
      onReadEntry: (entry) => {
        const p = entry.path.replace(/^\.\//, '')
        seen.add(p.replace(/\/$/, ''))
        const m = /^svc-agent\/lib\/prebuilds\/linux-([a-z0-9]+)\//.exec(p)
        if (m) arches.add(m[1]!)
        if (p === PACKAGE_JSON && entry.size <= 64 * 1024) entry.on('data', (d: Buffer) => (pkg += d.toString('utf8')))
      },
    })
  } catch (e) {
    throw new Error(`not a gzipped tar file (${(e as Error).message})`)
  }
  const missing = NEEDED.filter((f) => !seen.has(f))
  if (missing.length) throw new Error(`not a packed agent (\`agent pack\`): ${missing.join(', ')} missing`)
  let version: unknown
  try {
    version = (JSON.parse(pkg) as { version?: unknown }).version
  } catch {
    throw new Error(`${PACKAGE_JSON} is not JSON`)
  }
  if (typeof version !== 'string' || version.length > 64 || !new RegExp(AGENT_VERSION_PATTERN).test(version))
    throw new Error(`${PACKAGE_JSON} has no usable version (letters, digits, . + _ -)`)
  const known = [...arches].filter((a): a is AgentArch => (AGENT_ARCHES as readonly string[]).includes(a))
  if (known.length !== 1)
    throw new Error(
      `the tarball must hold the serial binding of exactly one architecture (${AGENT_ARCHES.join(' or ')}) under svc-agent/lib/prebuilds/; found ${[...arches].join(', ') || 'none'}`,
    )
  return { version, arch: known[0]! }
}

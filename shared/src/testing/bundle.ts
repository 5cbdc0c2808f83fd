// Programs the tests start as child processes (the agent's CLI, the simulator's CLI…) as
// one bundled file instead of `node --import tsx <entry>.ts`: loading one file costs a
// child a fraction of the CPU of compiling several hundred sources on the fly, which on a
// busy machine is the difference between a child that answers at once and one that misses
// its test's bound. esbuild bundles the repository's sources (the workspace's `@svc/*`
// packages included); npm packages stay imports, loaded from the entry's package's
// node_modules as its sources load them (one a sibling package uses that this one does not
// list, such as the shared package's typebox for the agent, is bundled instead). Each module keeps its own `import.meta.url`, so a path beside a
// source file (agent/package.json for the version, the player's files) still resolves.
//
// The bundle is cached on disk by content: <package>/node_modules/.cache/svc-test-bundles/
// holds, per entry, the bundle named by the hash of its inputs and a manifest listing each
// input file with its SHA-256. A test process reads the manifest and hashes those files
// (milliseconds); it builds again only when one of them changed, so a run builds each
// program once whatever the number of its test processes. Two processes building at once
// each write their own file and rename it into place: never half a bundle.
import { createHash } from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

/** The repository root. */
export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..')

interface Manifest {
  node: string
  bundle: string
  inputs: Record<string, string>
}

const sha256 = (file: string): string => createHash('sha256').update(fs.readFileSync(file)).digest('hex')

/** The cached bundle named by `manifestFile` when every input still has the recorded hash. */
function cached(manifestFile: string, dir: string): string | null {
  let m: Manifest
  try {
    m = JSON.parse(fs.readFileSync(manifestFile, 'utf8')) as Manifest
  } catch {
    return null
  }
  if (m.node !== process.version) return null
  const bundle = path.join(dir, m.bundle)
  if (!fs.existsSync(bundle)) return null
  for (const [file, hash] of Object.entries(m.inputs)) {
    try {
      if (sha256(path.join(REPO_ROOT, file)) !== hash) return null
    } catch {
      return null // gone
    }
  }
  return bundle
}

/** `@scope/name` or `name` of a bare import. */
const packageName = (spec: string): string =>
  spec
    .split('/')
    .slice(0, spec.startsWith('@') ? 2 : 1)
    .join('/')

async function build(entry: string, dir: string, manifestFile: string): Promise<string> {
  // Where the bundle's imports resolve from: its package's node_modules, then the root's.
  const pkg = path.join(REPO_ROOT, entry.split('/')[0]!)
  const resolvable = (name: string): boolean => [pkg, REPO_ROOT].some((d) => fs.existsSync(path.join(d, 'node_modules', name, 'package.json')))
  const { build } = await import('esbuild')
  fs.mkdirSync(dir, { recursive: true })
  const tmp = path.join(dir, `build-${process.pid}-${Date.now()}.mjs`)
  const result = await build({
    absWorkingDir: REPO_ROOT,
    entryPoints: [path.join(REPO_ROOT, entry)],
    outfile: tmp,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: `node${process.versions.node.split('.')[0]}`,
    metafile: true,
    logLevel: 'error',
    plugins: [
      {
        name: 'npm-packages-outside, import.meta.url kept',
        setup(b) {
          b.onResolve({ filter: /^[^./]/ }, (a) => {
            if (a.path.startsWith('@svc/')) return undefined
            if (a.path.startsWith('node:') || !resolvable(packageName(a.path))) return a.path.startsWith('node:') ? { external: true } : undefined
            return { external: true }
          })
          b.onLoad({ filter: /\.ts$/ }, async (a) => {
            const source = await fs.promises.readFile(a.path, 'utf8')
            return { contents: source.replaceAll('import.meta.url', JSON.stringify(pathToFileURL(a.path).href)), loader: 'ts' }
          })
        },
      },
    ],
  })
  const inputs: Record<string, string> = {}
  // The sources, and what decides how they are bundled and resolved: this file and the package.json files.
  const also = [path.relative(REPO_ROOT, fileURLToPath(import.meta.url)), `${path.relative(REPO_ROOT, pkg)}/package.json`, 'shared/package.json']
  for (const input of [...Object.keys(result.metafile.inputs), ...also].sort()) inputs[input] = sha256(path.join(REPO_ROOT, input))
  const id = createHash('sha256')
    .update(JSON.stringify([process.version, inputs]))
    .digest('hex')
    .slice(0, 16)
  const name = `${path.basename(entry).replace(/\.ts$/, '')}-${id}.mjs`
  fs.renameSync(tmp, path.join(dir, name))
  // Bundles of this entry from other sources, a day old: no test process still starts them.
  const base = `${path.basename(entry).replace(/\.ts$/, '')}-`
  for (const f of fs.readdirSync(dir))
    if (f.startsWith(base) && f !== name && Date.now() - fs.statSync(path.join(dir, f)).mtimeMs > 86_400_000) fs.rmSync(path.join(dir, f), { force: true })
  const manifestTmp = `${manifestFile}.${process.pid}.tmp`
  fs.writeFileSync(manifestTmp, JSON.stringify({ node: process.version, bundle: name, inputs } satisfies Manifest))
  fs.renameSync(manifestTmp, manifestFile)
  return path.join(dir, name)
}

const built = new Map<string, Promise<string>>()

/**
 * The bundle of `entry` (a TypeScript file, relative to the repository root, e.g.
 * `agent/src/cli.ts`): its path, to run as `node <path> …args`. Built when the cache holds
 * none for the sources as they are; once per test process at most.
 */
export function bundledEntry(entry: string): Promise<string> {
  let p = built.get(entry)
  if (!p) {
    p = (async () => {
      const pkg = entry.split('/')[0]!
      const modules = fs.existsSync(path.join(REPO_ROOT, pkg, 'node_modules'))
        ? path.join(REPO_ROOT, pkg, 'node_modules')
        : path.join(REPO_ROOT, 'node_modules')
      const dir = path.join(modules, '.cache', 'svc-test-bundles')
      const manifestFile = path.join(dir, `${entry.replace(/[/\\]/g, '__')}.json`)
      return cached(manifestFile, dir) ?? (await build(entry, dir, manifestFile))
    })()
    built.set(entry, p)
  }
  return p
}

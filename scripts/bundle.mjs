// A program of the repository (the agent's CLI, the simulator's CLI, the demo…) as one
// bundled file instead of `node --import tsx <entry>.ts`: loading one file costs a fraction
// of the CPU of compiling several hundred sources on the fly. `pnpm agent`, `pnpm sim` and
// `pnpm demo` run their programs this way (scripts/run.mjs), and so do the tests that start
// them as child processes (shared/src/testing/bundle.ts). esbuild bundles the repository's
// sources (the workspace's `@svc/*` packages included); npm packages stay imports, each
// loaded from the node_modules of the source that imports it, as the sources load them: the
// bundle sits in a folder of its own beside a node_modules of links to those packages (a
// program of several workspace packages, such as the demo, imports from each one's
// node_modules). Each module keeps its own `import.meta.url` (replaced in its code, never in
// its strings, by the source file's URL), so a path beside a source file (agent/package.json
// for the version, the player's files) still resolves.
//
// The bundle is cached on disk by content: <package>/node_modules/.cache/svc-test-bundles/
// (the root's for a folder without a package.json, such as demo/) holds, per entry, the
// bundle's folder named by the hash of its inputs and a manifest listing each input file with
// its SHA-256. A process reads the manifest and hashes those files (milliseconds); it builds
// again only when one of them changed, so a test run builds each program once whatever the
// number of its test processes. Two processes building at once each write their own folder
// and rename it into place: never half a bundle.
import { createHash } from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

/** The repository root. */
export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')

const sha256 = (file) => createHash('sha256').update(fs.readFileSync(file)).digest('hex')

/** The cached bundle named by `manifestFile` when every input still has the recorded hash. */
function cached(manifestFile, dir) {
  let m
  try {
    m = JSON.parse(fs.readFileSync(manifestFile, 'utf8'))
  } catch {
    return null
  }
  if (m.node !== process.version) return null
  const bundle = path.join(dir, m.bundle)
  if (!fs.existsSync(bundle) || !fs.existsSync(path.join(path.dirname(bundle), 'complete'))) return null
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
const packageName = (spec) =>
  spec
    .split('/')
    .slice(0, spec.startsWith('@') ? 2 : 1)
    .join('/')

/** The folder of package `name` as a source in `from` imports it (node_modules of `from` or a folder above), or null. */
function packageDir(name, from) {
  for (let d = from; ; d = path.dirname(d)) {
    const candidate = path.join(d, 'node_modules', name)
    if (fs.existsSync(path.join(candidate, 'package.json'))) return candidate
    if (path.dirname(d) === d) return null
  }
}

async function build(entry, dir, manifestFile) {
  const pkg = path.join(REPO_ROOT, entry.split('/')[0])
  // Each npm package the sources import: where it is, as its importer resolves it.
  const packages = new Map()
  const { build, transform } = await import('esbuild')
  const target = `node${process.versions.node.split('.')[0]}`
  fs.mkdirSync(dir, { recursive: true })
  const tmp = path.join(dir, `build-${process.pid}-${Date.now()}`)
  const base = path.basename(entry).replace(/\.ts$/, '')
  const result = await build({
    absWorkingDir: REPO_ROOT,
    entryPoints: [path.join(REPO_ROOT, entry)],
    outfile: path.join(tmp, `${base}.mjs`),
    bundle: true,
    platform: 'node',
    format: 'esm',
    target,
    metafile: true,
    logLevel: 'error',
    plugins: [
      {
        name: 'npm-packages-outside, import.meta.url kept',
        setup(b) {
          b.onResolve({ filter: /^[^./]/ }, (a) => {
            if (a.path.startsWith('@svc/')) return undefined
            if (a.path.startsWith('node:')) return { external: true }
            const name = packageName(a.path)
            const found = packageDir(name, a.resolveDir)
            if (!found) return undefined // esbuild says it cannot be resolved
            const real = fs.realpathSync(found)
            const seen = packages.get(name)
            if (seen && seen !== real)
              return { errors: [{ text: `${name} is imported as two different packages (${seen} and ${real}): one bundle cannot link both` }] }
            packages.set(name, real)
            return { external: true }
          })
          b.onLoad({ filter: /\.ts$/ }, async (a) => {
            const source = await fs.promises.readFile(a.path, 'utf8')
            if (!source.includes('import.meta.url')) return { contents: source, loader: 'ts' }
            // Replaced where the code reads it, not where a string spells it (agent pack's
            // banner for the packed program holds the words as text).
            const url = JSON.stringify(pathToFileURL(a.path).href)
            const out = await transform(source, { loader: 'ts', format: 'esm', target, sourcefile: a.path, define: { 'import.meta.url': url } })
            return { contents: out.code, loader: 'js' }
          })
        },
      },
    ],
  })
  // The bundle's node_modules: a link to each package, so a bare import finds what its source found.
  for (const [name, real] of packages) {
    const link = path.join(tmp, 'node_modules', name)
    fs.mkdirSync(path.dirname(link), { recursive: true })
    fs.symlinkSync(real, link, 'dir')
  }
  fs.writeFileSync(path.join(tmp, 'complete'), '')
  const inputs = {}
  // The sources, and what decides how they are bundled and resolved: this file and the package.json files.
  const also = [path.relative(REPO_ROOT, fileURLToPath(import.meta.url)), `${path.relative(REPO_ROOT, pkg)}/package.json`, 'shared/package.json'].filter((f) =>
    fs.existsSync(path.join(REPO_ROOT, f)),
  )
  for (const input of [...Object.keys(result.metafile.inputs), ...also].sort()) inputs[input] = sha256(path.join(REPO_ROOT, input))
  const id = createHash('sha256')
    .update(JSON.stringify([process.version, inputs, [...packages].sort()]))
    .digest('hex')
    .slice(0, 16)
  const folder = `${base}-${id}`
  try {
    fs.renameSync(tmp, path.join(dir, folder))
  } catch (err) {
    // Another process put the same bundle there first: use it.
    if (!fs.existsSync(path.join(dir, folder, 'complete'))) throw err
    fs.rmSync(tmp, { recursive: true, force: true })
  }
  // Bundles of this entry from other sources, a day old: no process still starts them.
  for (const f of fs.readdirSync(dir))
    if (f.startsWith(`${base}-`) && f !== folder && Date.now() - fs.statSync(path.join(dir, f)).mtimeMs > 86_400_000)
      fs.rmSync(path.join(dir, f), { recursive: true, force: true })
  const bundle = `${folder}/${base}.mjs`
  const manifestTmp = `${manifestFile}.${process.pid}.tmp`
  fs.writeFileSync(manifestTmp, JSON.stringify({ node: process.version, bundle, inputs }))
  fs.renameSync(manifestTmp, manifestFile)
  return path.join(dir, bundle)
}

const built = new Map()

/**
 * The bundle of `entry` (a TypeScript file, relative to the repository root, e.g.
 * `agent/src/cli.ts`): its path, to run as `node <path> …args`. Built when the cache holds
 * none for the sources as they are; once per process at most.
 */
export function bundledEntry(entry) {
  let p = built.get(entry)
  if (!p) {
    p = (async () => {
      const pkg = entry.split('/')[0]
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

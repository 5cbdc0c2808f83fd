// The packed agent's program: esbuild bundles agent/src/cli.ts with everything it imports
// (the shared package, mqtt, ws, serialport…) into one file, lib/svc-agent.mjs, that Node
// runs as it is. Two things cannot live inside it and are shipped beside it:
//   - the serial port's native binding: the prebuilt `.node` files of the target
//     architecture go to lib/prebuilds/linux-<arch>/, where the bundled loader
//     (node-gyp-build, as in the npm package) picks the one for this C library;
//   - puppeteer-core (screenshots only, about 4 MB): bundled on its own into
//     lib/puppeteer-core.mjs and loaded the first time a screenshot is taken, so a start
//     does not parse it.
// The licences of every bundled npm package are gathered into THIRD-PARTY-LICENSES.txt.
// `agent pack` itself (this folder) is left out of the program: it runs from the repository.
import { createHash } from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import type { BuildOptions, Plugin } from 'esbuild'

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..')
const ENTRY = path.join(REPO_ROOT, 'agent/src/cli.ts')
const LAUNCHER_ENTRY = path.join(REPO_ROOT, 'agent/src/launcher/main.ts')

/** Architectures the packed agent is built for: Node's name → Debian's. */
export const ARCHES = { x64: 'amd64', arm64: 'arm64' } as const
export type PackArch = keyof typeof ARCHES

// At the top of each bundled file: `require` for the CommonJS packages inside it (and the
// native binding), and the folder the file is in (where the binding's prebuilds are).
const BANNER = [
  "import { createRequire as __svcCreateRequire } from 'node:module'",
  "import { dirname as __svcDirname } from 'node:path'",
  "import { fileURLToPath as __svcFileURLToPath } from 'node:url'",
  'const require = __svcCreateRequire(import.meta.url)',
  'const __svcLibDir = __svcDirname(__svcFileURLToPath(import.meta.url))',
].join('; ')

const common: BuildOptions & { metafile: true } = {
  absWorkingDir: REPO_ROOT,
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  metafile: true,
  logLevel: 'error',
  banner: { js: BANNER },
  // ws's optional speed-ups: required inside try/catch, absent = its JavaScript paths.
  external: ['bufferutil', 'utf-8-validate'],
}

const packedAgent: Plugin = {
  name: 'packed-agent',
  setup(b) {
    // Screenshots load puppeteer-core from the file beside the program.
    b.onResolve({ filter: /^puppeteer-core$/ }, () => ({ path: './puppeteer-core.mjs', external: true }))
    // `agent pack` runs from the repository only.
    b.onResolve({ filter: /^\.\/pack\/command\.js$/ }, () => ({ path: 'pack-command', namespace: 'packed-agent' }))
    b.onLoad({ filter: /.*/, namespace: 'packed-agent' }, () => ({
      loader: 'js',
      contents: `export async function packCommand() {
  process.stderr.write('svc-agent: pack runs from the repository (pnpm --silent agent pack), not from a packed agent\\n')
  return 2
}`,
    }))
    // The serial binding: found in lib/prebuilds/ beside the bundle instead of beside the npm package.
    b.onLoad({ filter: /[\\/]@serialport[\\/]bindings-cpp[\\/]dist[\\/]serialport-bindings\.js$/ }, (a) => ({
      loader: 'js',
      resolveDir: path.dirname(a.path),
      contents: `"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.binding = require("node-gyp-build")(__svcLibDir);`,
    }))
  },
}

/** The folder of the npm package a bundled file came from (null for the repository's own sources). */
function packageDir(input: string): string | null {
  const abs = path.resolve(REPO_ROOT, input)
  const i = abs.lastIndexOf(`${path.sep}node_modules${path.sep}`)
  if (i < 0) return null
  const rest = abs.slice(i + '/node_modules/'.length).split(path.sep)
  const depth = rest[0]!.startsWith('@') ? 2 : 1
  return path.join(abs.slice(0, i), 'node_modules', ...rest.slice(0, depth))
}

function licences(inputLists: string[][]): string {
  const dirs = new Set<string>()
  for (const inputs of inputLists) for (const input of inputs) dirs.add(packageDir(input) ?? '')
  dirs.delete('')
  const parts: string[] = []
  const seen = new Set<string>()
  for (const dir of dirs) {
    const pkg = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')) as { name: string; version: string; license?: string }
    const id = `${pkg.name}@${pkg.version}`
    if (seen.has(id)) continue
    seen.add(id)
    const file = fs.readdirSync(dir).find((f) => /^(licen[cs]e|copying)(\.(md|txt))?$/i.test(f))
    const text = file
      ? fs.readFileSync(path.join(dir, file), 'utf8').trim()
      : `(no licence file in the package; package.json says: ${pkg.license ?? 'nothing'})`
    parts.push(`${id} (${pkg.license ?? 'see below'})\n\n${text}\n`)
  }
  parts.sort()
  return `The packed svc agent bundles these npm packages; their licences follow.\n\n${parts.join(`\n${'-'.repeat(72)}\n\n`)}`
}

// The three bundles do not depend on the architecture (only the binding copied beside them
// does) nor on the version (a mark in the program, replaced by the version when copied), so
// they are built once and kept in agent/node_modules/.cache/svc-pack/: a folder named by the
// SHA-256 of every input esbuild read (the sources, the npm packages' files), this file,
// agent/package.json, esbuild's and Node's versions, and a manifest of those inputs with
// their hashes. A pack reads the manifest and hashes the inputs; it builds again only when
// one changed. Two processes building at once each write their own folder and rename it
// into place (or find the other's there): never half a program. Packing x64 and arm64, or
// several versions, bundles once.
const CACHE = path.join(REPO_ROOT, 'agent/node_modules/.cache/svc-pack')
const MANIFEST = path.join(CACHE, 'manifest.json')
/** Stands for the version in the cached program; replaced by the version packed. */
const VERSION_MARK = '0.0.0-svc-pack-version-mark'

interface Built {
  /** The folder holding svc-agent.mjs (with VERSION_MARK), launcher.cjs, puppeteer-core.mjs. */
  dir: string
  /** The inputs of the program and of puppeteer-core.mjs (for the binding and the licences). */
  agentInputs: string[]
  puppeteerInputs: string[]
}

interface Manifest {
  key: string
  folder: string
  agentInputs: string[]
  puppeteerInputs: string[]
  inputs: Record<string, string>
}

const sha256 = (file: string): string => createHash('sha256').update(fs.readFileSync(file)).digest('hex')

function toolKey(esbuildVersion: string): string {
  return JSON.stringify([process.version, esbuildVersion])
}

function cachedBuild(esbuildVersion: string): Built | null {
  let m: Manifest
  try {
    m = JSON.parse(fs.readFileSync(MANIFEST, 'utf8')) as Manifest
  } catch {
    return null
  }
  if (m.key !== toolKey(esbuildVersion)) return null
  const dir = path.join(CACHE, m.folder)
  if (!fs.existsSync(path.join(dir, 'complete'))) return null
  for (const [file, hash] of Object.entries(m.inputs)) {
    try {
      if (sha256(path.resolve(REPO_ROOT, file)) !== hash) return null
    } catch {
      return null // gone
    }
  }
  return { dir, agentInputs: m.agentInputs, puppeteerInputs: m.puppeteerInputs }
}

async function buildPrograms(): Promise<Built> {
  const { build, version: esbuildVersion } = await import('esbuild')
  const hit = cachedBuild(esbuildVersion)
  if (hit) return hit
  fs.mkdirSync(CACHE, { recursive: true })
  const tmp = fs.mkdtempSync(path.join(CACHE, `build-${process.pid}-`))
  // The version the program reports is the one it is packed as (agent/src/version.ts).
  const define = { __SVC_AGENT_VERSION__: JSON.stringify(VERSION_MARK) }
  const agent = await build({ ...common, define, entryPoints: [ENTRY], outfile: path.join(tmp, 'svc-agent.mjs'), plugins: [packedAgent] })
  // The supervisor `bin/svc-agent start` runs (agent/src/launcher/): CommonJS, Node's built-ins only.
  const launcher = await build({
    absWorkingDir: REPO_ROOT,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    logLevel: 'error',
    metafile: true,
    entryPoints: [LAUNCHER_ENTRY],
    outfile: path.join(tmp, 'launcher.cjs'),
  })
  const puppeteer = await build({
    ...common,
    stdin: { contents: "export { default } from 'puppeteer-core'\nexport * from 'puppeteer-core'\n", resolveDir: path.join(REPO_ROOT, 'agent'), loader: 'js' },
    outfile: path.join(tmp, 'puppeteer-core.mjs'),
  })
  if (!fs.readFileSync(path.join(tmp, 'svc-agent.mjs'), 'utf8').includes(VERSION_MARK)) throw new Error('the program does not hold its version mark')
  const agentInputs = Object.keys(agent.metafile.inputs)
  const puppeteerInputs = Object.keys(puppeteer.metafile.inputs)
  const inputs: Record<string, string> = {}
  const also = [path.relative(REPO_ROOT, fileURLToPath(import.meta.url)), 'agent/package.json']
  // Files only: not esbuild's <stdin> nor this plugin's stand-in for `agent pack`.
  for (const input of [...agentInputs, ...Object.keys(launcher.metafile.inputs), ...puppeteerInputs, ...also].sort())
    if (!inputs[input] && fs.existsSync(path.resolve(REPO_ROOT, input))) inputs[input] = sha256(path.resolve(REPO_ROOT, input))
  const key = toolKey(esbuildVersion)
  const folder = createHash('sha256')
    .update(JSON.stringify([key, inputs]))
    .digest('hex')
    .slice(0, 16)
  fs.writeFileSync(path.join(tmp, 'complete'), '')
  const dir = path.join(CACHE, folder)
  try {
    fs.renameSync(tmp, dir)
  } catch (err) {
    // Another process put the same programs there first: use them.
    if (!fs.existsSync(path.join(dir, 'complete'))) throw err
    fs.rmSync(tmp, { recursive: true, force: true })
  }
  // Programs built from other sources, a day old: no pack still copies them.
  for (const f of fs.readdirSync(CACHE))
    if (f !== folder && f !== 'manifest.json' && Date.now() - fs.statSync(path.join(CACHE, f)).mtimeMs > 86_400_000)
      fs.rmSync(path.join(CACHE, f), { recursive: true, force: true })
  const manifestTmp = `${MANIFEST}.${process.pid}.tmp`
  fs.writeFileSync(manifestTmp, JSON.stringify({ key, folder, agentInputs, puppeteerInputs, inputs } satisfies Manifest))
  fs.renameSync(manifestTmp, MANIFEST)
  return { dir, agentInputs, puppeteerInputs }
}

/**
 * Builds the program into `libDir` (svc-agent.mjs, puppeteer-core.mjs, prebuilds/) and
 * writes THIRD-PARTY-LICENSES.txt into `licenceDir`.
 */
export async function bundleAgent(libDir: string, arch: PackArch, licenceDir: string, version = agentPackageVersion()): Promise<void> {
  const built = await buildPrograms()
  fs.mkdirSync(libDir, { recursive: true })
  fs.writeFileSync(path.join(libDir, 'svc-agent.mjs'), fs.readFileSync(path.join(built.dir, 'svc-agent.mjs'), 'utf8').replaceAll(VERSION_MARK, version))
  for (const f of ['launcher.cjs', 'puppeteer-core.mjs']) fs.copyFileSync(path.join(built.dir, f), path.join(libDir, f))

  // The binding's prebuilt files for this architecture (glibc and musl), from the npm package.
  const bindings = built.agentInputs.map(packageDir).find((d) => d?.endsWith(path.join('@serialport', 'bindings-cpp')))
  if (!bindings) throw new Error('the serial binding (@serialport/bindings-cpp) is not in the bundle')
  const from = path.join(bindings, 'prebuilds', `linux-${arch}`)
  const files = fs.existsSync(from) ? fs.readdirSync(from).filter((f) => f.endsWith('.node')) : []
  if (files.length === 0) throw new Error(`no prebuilt serial binding for linux-${arch} in ${from}`)
  const to = path.join(libDir, 'prebuilds', `linux-${arch}`)
  fs.mkdirSync(to, { recursive: true })
  for (const f of files) fs.copyFileSync(path.join(from, f), path.join(to, f))

  fs.writeFileSync(path.join(licenceDir, 'THIRD-PARTY-LICENSES.txt'), licences([built.agentInputs, built.puppeteerInputs]))
}

/** agent/package.json's version. */
export function agentPackageVersion(): string {
  return (JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'agent/package.json'), 'utf8')) as { version: string }).version
}

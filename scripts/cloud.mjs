#!/usr/bin/env node
// The cloud's entry for `pnpm start` and `pnpm cloud <command>`: runs the cloud's CLI from
// a bundle, cloud/dist/cli.js and the chunks it imports (the server's, loaded by `start`
// only), built from the TypeScript sources (cloud/src and the shared package; the npm
// packages stay outside it, loaded from node_modules as usual) and built again whenever one
// of those sources changed since. Loading a few files instead of several hundred through
// the TypeScript loader is most of a restart's time saved (docs/decisions.md, "Start-up
// from one bundle"). The bundle runs in this process, so its pid is the cloud's own and
// signals reach it directly.
//   node scripts/cloud.mjs <command> [options]     (what `pnpm cloud` runs)
// SVC_SOURCE=1 runs the TypeScript sources through tsx instead, without a bundle.
// `start` also builds the operator console into cloud/dist/console when its sources changed
// (cloud/console/build.mjs), unless SVC_CONSOLE_DIR names a console built elsewhere.
// SVC_BUNDLE_DIR puts the bundle in another folder of the repository (relative to its root;
// inside it, so that the npm packages resolve from node_modules as they do for cloud/dist).
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { basename, dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..')
const DIST = process.env.SVC_BUNDLE_DIR ? resolve(ROOT, process.env.SVC_BUNDLE_DIR) : join(ROOT, 'cloud', 'dist')
const BUNDLE = join(DIST, 'cli.js')
const INPUTS = join(DIST, 'inputs.json')
const ENTRY = join(ROOT, 'cloud', 'src', 'cli.ts')
/** Files outside the import graph that change how the sources resolve. */
const ALSO = ['cloud/package.json', 'shared/package.json', 'scripts/cloud.mjs']

/** Each input's size and modification time, as recorded at the last build. */
function stamp(file) {
  const s = statSync(join(ROOT, file))
  return `${s.size}:${s.mtimeMs}`
}

/** Whether the bundle was built from the sources as they are now. */
function current() {
  let recorded
  try {
    recorded = JSON.parse(readFileSync(INPUTS, 'utf8'))
    statSync(BUNDLE)
  } catch {
    return false
  }
  if (recorded.node !== process.version || !Array.isArray(recorded.outputs)) return false
  for (const file of recorded.outputs) {
    try {
      statSync(join(DIST, file))
    } catch {
      return false // gone
    }
  }
  for (const [file, was] of Object.entries(recorded.inputs)) {
    try {
      if (stamp(file) !== was) return false
    } catch {
      return false // gone
    }
  }
  return true
}

async function buildBundle() {
  const { build } = await import('esbuild')
  mkdirSync(DIST, { recursive: true })
  // Written into a folder of this process, then each file renamed into place, the entry and
  // inputs.json last: two processes starting at once each build and the last rename wins,
  // never half a file. Chunks are named by their content, so identical builds name them alike.
  const tmp = join(DIST, `build.${process.pid}.tmp`)
  rmSync(tmp, { recursive: true, force: true })
  const result = await build({
    entryPoints: [ENTRY],
    outdir: tmp,
    // The commands other than `start` load the server's modules (and its npm packages:
    // Fastify, the broker, image and SAML libraries…) only when they run it: a
    // `pnpm cloud bootstrap` or a usage error loads about a third of the modules.
    splitting: true,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: `node${process.versions.node.split('.')[0]}`,
    sourcemap: 'linked',
    sourcesContent: false,
    metafile: true,
    logLevel: 'error',
    plugins: [
      {
        name: 'npm-packages-outside',
        setup(b) {
          // Bare imports stay imports (node_modules), except the workspace's own packages,
          // whose exports are TypeScript sources.
          b.onResolve({ filter: /^[^./]/ }, (a) => (a.path.startsWith('@svc/') ? undefined : { external: true }))
        },
      },
    ],
  })
  const inputs = {}
  for (const file of [...Object.keys(result.metafile.inputs).map((f) => relative(ROOT, join(process.cwd(), f))), ...ALSO]) inputs[file] = stamp(file)
  const entry = basename(BUNDLE)
  const outputs = readdirSync(tmp)
  const last = [`${entry}.map`, entry]
  for (const file of [...outputs.filter((f) => !last.includes(f)), ...last]) renameSync(join(tmp, file), join(DIST, file))
  rmSync(tmp, { recursive: true, force: true })
  let previous = []
  try {
    previous = JSON.parse(readFileSync(INPUTS, 'utf8')).outputs ?? []
  } catch {}
  const inputsTmp = `${INPUTS}.${process.pid}.tmp`
  writeFileSync(inputsTmp, JSON.stringify({ node: process.version, inputs, outputs }))
  renameSync(inputsTmp, INPUTS)
  // The chunks of the build before, which the new entry no longer imports.
  for (const file of previous) if (!outputs.includes(file)) rmSync(join(DIST, file), { force: true })
}

// The operator console (cloud/console) is built beside the bundle when a source changed;
// only `start` serves it.
if (process.argv[2] === 'start' && !process.env.SVC_CONSOLE_DIR) {
  const { buildConsole, consoleCurrent } = await import('../cloud/console/build.mjs')
  if (!consoleCurrent()) await buildConsole()
}

if (process.env.SVC_SOURCE === '1') {
  const { register } = await import('tsx/esm/api')
  register()
  await import(pathToFileURL(ENTRY).href)
} else {
  if (!current()) await buildBundle()
  // Stack traces name the TypeScript sources.
  process.setSourceMapsEnabled(true)
  await import(pathToFileURL(BUNDLE).href)
}

// Builds the operator console (cloud/console/src, Preact and TypeScript) into one folder the
// cloud serves at /console/: index.html, app.js (one minified ES module, the typed API
// client included) and app.css. Nothing is fetched at run time. `pnpm start` builds it
// beside the cloud's own bundle when a source changed (scripts/cloud.mjs); tests build it
// into a folder of their own (cloud/test/console/console.ts).
//   import { buildConsole, consoleCurrent } from './cloud/console/build.mjs'
import { copyFileSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { dirname, join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'

const HERE = dirname(fileURLToPath(import.meta.url))
const ROOT = join(HERE, '..', '..')
/** Where `pnpm start` puts the console (the cloud's default SVC_CONSOLE_DIR). */
export const CONSOLE_DIST = join(ROOT, 'cloud', 'dist', 'console')
const STAMP = 'inputs.json'

function stamp(file) {
  const s = statSync(join(ROOT, file))
  return `${s.size}:${s.mtimeMs}`
}

/** Whether `outDir` holds a console built from the sources as they are now. */
export function consoleCurrent(outDir = CONSOLE_DIST) {
  try {
    const recorded = JSON.parse(readFileSync(join(outDir, STAMP), 'utf8'))
    for (const [file, was] of Object.entries(recorded.inputs)) if (stamp(file) !== was) return false
    return true
  } catch {
    return false
  }
}

/** Builds the console into `outDir` (written beside it, then renamed into place). */
export async function buildConsole(outDir = CONSOLE_DIST) {
  const { build } = await import('esbuild')
  const tmp = `${outDir}.${process.pid}.tmp`
  rmSync(tmp, { recursive: true, force: true })
  mkdirSync(tmp, { recursive: true })
  const result = await build({
    entryPoints: { app: join(HERE, 'src', 'main.tsx') },
    outdir: tmp,
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: ['chrome110', 'firefox115', 'safari16'],
    minify: true,
    sourcemap: 'linked',
    sourcesContent: false,
    metafile: true,
    jsx: 'automatic',
    jsxImportSource: 'preact',
    legalComments: 'none',
    logLevel: 'error',
    tsconfig: join(HERE, 'tsconfig.json'),
  })
  copyFileSync(join(HERE, 'index.html'), join(tmp, 'index.html'))
  const inputs = {}
  for (const f of [...Object.keys(result.metafile.inputs), 'cloud/console/index.html', 'cloud/console/build.mjs']) {
    const file = relative(ROOT, join(process.cwd(), f))
    if (!file.startsWith('node_modules') || file.includes('preact')) inputs[file] = stamp(file)
  }
  writeFileSync(join(tmp, STAMP), JSON.stringify({ inputs }))
  mkdirSync(dirname(outDir), { recursive: true })
  rmSync(outDir, { recursive: true, force: true })
  renameSync(tmp, outDir)
  return outDir
}

#!/usr/bin/env node
// `pnpm agent`, `pnpm sim` and `pnpm demo`: runs a TypeScript program of the repository
// (the entry, relative to the root, is the first argument) from its bundle
// (scripts/bundle.mjs: one file, built again only when a source changed), in this process,
// so its pid is the program's own and signals reach it directly. The program sees the
// arguments after the entry as its own.
//   node scripts/run.mjs agent/src/cli.ts start --cloud …
// SVC_SOURCE=1 runs the TypeScript sources through tsx instead, without a bundle.
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { REPO_ROOT, bundledEntry } from './bundle.mjs'

const entry = process.argv[2]
if (!entry) {
  process.stderr.write('usage: node scripts/run.mjs <entry.ts> [arguments]\n')
  process.exit(2)
}
process.argv.splice(2, 1)
if (process.env.SVC_SOURCE === '1') {
  const { register } = await import('tsx/esm/api')
  register()
  await import(pathToFileURL(path.join(REPO_ROOT, entry)).href)
} else {
  await import(pathToFileURL(await bundledEntry(entry)).href)
}

// The cloud's import rules, read from the source files (Biome checks the folder rules and
// cycles while it lints; this reads what a glob cannot say):
//   - cloud/src/platform imports no domain;
//   - every domain folder is entered through its index.ts, which every module it defines is listed in (domains/index.ts);
//   - a domain's file reaches another domain only through that domain's index.ts — except the
//     imports listed in deepImports.json, today's, which may only go away: a new one fails, and
//     so does a listed one that is gone (take it off the list);
//   - a repository imports no route, service or module; a route file imports no repository;
//     a service reads no other domain's repository unless it is listed.
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { MODULES } from '../../src/domains/index.js'

const SRC = fileURLToPath(new URL('../../src/', import.meta.url))
const LISTED = fileURLToPath(new URL('./deepImports.json', import.meta.url))

function sources(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name)
    if (e.isDirectory()) return e.name === 'client' ? [] : sources(p)
    return e.name.endsWith('.ts') ? [p] : []
  })
}

interface Import {
  from: string
  to: string
}

/** Every relative import (static, `export … from`, dynamic) of every source file, as paths under cloud/src. */
function imports(): Import[] {
  const out: Import[] = []
  for (const file of sources(SRC)) {
    const text = fs.readFileSync(file, 'utf8')
    for (const m of text.matchAll(/(?:from\s+|import\s*\(\s*)'(\.{1,2}\/[^']+)'/g)) {
      const target = path.resolve(path.dirname(file), m[1]!).replace(/\.js$/, '.ts')
      out.push({ from: path.relative(SRC, file), to: path.relative(SRC, target) })
    }
  }
  return out
}

const all = imports()
const domainOf = (p: string) => (p.startsWith('domains/') && p.split('/').length > 2 ? p.split('/')[1]! : null)

t.test('platform imports no domain', async (t) => {
  const bad = all.filter((i) => i.from.startsWith('platform/') && i.to.startsWith('domains/'))
  t.same(bad, [], 'imports from cloud/src/platform into cloud/src/domains')
})

t.test('every domain has an index.ts, and every module it defines is wired', async (t) => {
  const domains = fs.readdirSync(path.join(SRC, 'domains'), { withFileTypes: true }).filter((e) => e.isDirectory())
  const defined: string[] = []
  for (const d of domains) {
    const index = path.join(SRC, 'domains', d.name, 'index.ts')
    t.ok(fs.existsSync(index), `domains/${d.name}/index.ts`)
    if (!fs.existsSync(index)) continue
    for (const m of fs.readFileSync(index, 'utf8').matchAll(/export const (\w+Module) = domainModule/g)) defined.push(m[1]!)
  }
  t.equal(MODULES.length, defined.length, `the ${defined.length} modules defined are all in MODULES (domains/index.ts)`)
})

t.test('a domain reaches another only through its index.ts (the listed imports excepted, a list that only shrinks)', async (t) => {
  const deep = all
    .filter((i) => {
      const a = domainOf(i.from)
      const b = domainOf(i.to)
      return a && b && a !== b && !i.to.endsWith(`domains/${b}/index.ts`)
    })
    .map((i) => `${i.from} -> ${i.to}`)
  const listed: string[] = JSON.parse(fs.readFileSync(LISTED, 'utf8'))
  const added = deep.filter((d) => !listed.includes(d))
  const gone = listed.filter((d) => !deep.includes(d))
  t.same(added, [], "new imports past another domain's index.ts: import what it exports instead")
  t.same(gone, [], 'listed imports that are gone: take them off cloud/test/architecture/deepImports.json')
})

t.test('repositories, routes and services keep to their layer', async (t) => {
  const repoBad = all.filter((i) => i.from.endsWith('Repository.ts') && /(Routes|Service|index)\.ts$/.test(i.to))
  t.same(repoBad, [], 'a repository imports no route, service or module')
  const routeBad = all.filter((i) => i.from.endsWith('Routes.ts') && i.to.endsWith('Repository.ts'))
  t.same(routeBad, [], 'a route file imports no repository')
})

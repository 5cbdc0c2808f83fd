// The cloud's import rules, read from the source files (Biome checks the folder rules and
// cycles while it lints; this reads what a glob cannot say):
//   - cloud/src/platform imports no domain;
//   - every domain folder has an index.ts (what other domains may use of it) and, when it
//     wires anything, a module.ts whose modules are all listed in domains/index.ts;
//   - a domain's file reaches another domain only through that domain's index.ts, and a
//     module.ts is imported only by domains/index.ts (the one place that wires them);
//   - an index.ts hands out no repository: other domains get a service or a records object;
//   - a repository imports no route, service or module; a route file imports no repository;
//   - each table's type is declared once: in its domain's tables.ts, or in platform/db/schema.ts
//     for the platform's own;
//   - each provision's type is declared by the domain whose module provides it, in that
//     domain's provisions.ts (no hub file types every domain's provisions).
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { MODULES } from '../../src/domains/index.js'

const SRC = fileURLToPath(new URL('../../src/', import.meta.url))

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
  /** `import type` / `export type` (the whole statement names types only). */
  typeOnly: boolean
}

/** Every relative import (static, `export … from`, dynamic) of every source file, as paths under cloud/src. */
function imports(): Import[] {
  const out: Import[] = []
  for (const file of sources(SRC)) {
    const text = fs.readFileSync(file, 'utf8')
    for (const m of text.matchAll(/(?:from\s+|import\s*\(\s*)'(\.{1,2}\/[^']+)'/g)) {
      const target = path.resolve(path.dirname(file), m[1]!).replace(/\.js$/, '.ts')
      // The statement holding a `from`: back to the last line that starts with import or export.
      const before = text.slice(0, m.index)
      const statement = before.slice(Math.max(before.lastIndexOf('\nimport'), before.lastIndexOf('\nexport')) + 1)
      const typeOnly = m[0].startsWith('from') && /^(?:import|export) type\b/.test(statement)
      out.push({ from: path.relative(SRC, file), to: path.relative(SRC, target), typeOnly })
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
    t.ok(fs.existsSync(path.join(SRC, 'domains', d.name, 'index.ts')), `domains/${d.name}/index.ts`)
    const module = path.join(SRC, 'domains', d.name, 'module.ts')
    if (!fs.existsSync(module)) continue
    for (const m of fs.readFileSync(module, 'utf8').matchAll(/export const (\w+Module) = domainModule/g)) defined.push(m[1]!)
  }
  t.ok(defined.length >= 18, `${defined.length} modules defined`)
  t.equal(MODULES.length, defined.length, `the ${defined.length} modules defined are all in MODULES (domains/index.ts)`)
})

t.test('a domain reaches another only through its index.ts; module.ts only from domains/index.ts', async (t) => {
  const deep = all
    .filter((i) => {
      const a = domainOf(i.from)
      const b = domainOf(i.to)
      return a && b && a !== b && !i.to.endsWith(`domains/${b}/index.ts`)
    })
    .map((i) => `${i.from} -> ${i.to}`)
  t.same(deep, [], "imports past another domain's index.ts: import what it exports instead")
  const wiring = all
    .filter((i) => i.to.endsWith('/module.ts') && i.from !== 'domains/index.ts' && domainOf(i.to) !== domainOf(i.from))
    .map((i) => `${i.from} -> ${i.to}`)
  t.same(wiring, [], 'a module.ts is wired by domains/index.ts alone')
})

t.test('an index.ts hands out no repository', async (t) => {
  const bad = all.filter((i) => /^domains\/[^/]+\/index\.ts$/.test(i.from) && i.to.endsWith('Repository.ts') && !i.typeOnly).map((i) => `${i.from} -> ${i.to}`)
  t.same(bad, [], 'a value export of a repository from an index.ts (row types may go out with `export type`)')
})

t.test('repositories, routes and services keep to their layer', async (t) => {
  const repoBad = all.filter((i) => i.from.endsWith('Repository.ts') && /(Routes|Service|index)\.ts$/.test(i.to))
  t.same(repoBad, [], 'a repository imports no route, service or module')
  const routeBad = all.filter((i) => i.from.endsWith('Routes.ts') && i.to.endsWith('Repository.ts'))
  t.same(routeBad, [], 'a route file imports no repository')
})

t.test("each table's type lives in one place: a domain's tables.ts, or the platform's schema.ts for its own", async (t) => {
  const declared = new Map<string, string[]>()
  const note = (file: string, text: string) => {
    const db = /interface DB \{\n([\s\S]*?)\n\s*\}/.exec(text)
    for (const m of db?.[1]?.matchAll(/^\s+([a-z_]+): \w+/gm) ?? []) declared.set(m[1]!, [...(declared.get(m[1]!) ?? []), file])
  }
  note('platform/db/schema.ts', fs.readFileSync(path.join(SRC, 'platform/db/schema.ts'), 'utf8'))
  const domains = fs.readdirSync(path.join(SRC, 'domains'), { withFileTypes: true }).filter((e) => e.isDirectory())
  for (const d of domains) {
    const file = path.join(SRC, 'domains', d.name, 'tables.ts')
    if (fs.existsSync(file)) note(`domains/${d.name}/tables.ts`, fs.readFileSync(file, 'utf8'))
  }
  const migrations = path.join(SRC, 'platform/db/migrations')
  const created = new Set(['schema_migrations'])
  for (const f of fs.readdirSync(migrations)) {
    const text = fs.readFileSync(path.join(migrations, f), 'utf8')
    for (const m of text.matchAll(/CREATE TABLE (?:IF NOT EXISTS )?([a-z_0-9]+)/g)) created.add(m[1]!)
    // A table built under another name to replace one (a SQLite rebuild) takes the old name.
    for (const m of text.matchAll(/ALTER TABLE ([a-z_0-9]+) RENAME TO ([a-z_0-9]+)/g)) created.delete(m[1]!)
  }
  t.same([...created].filter((n) => !declared.has(n)).sort(), [], 'every table the migrations create has a type')
  t.same(
    [...declared].filter(([, files]) => files.length > 1),
    [],
    'declared once',
  )
  t.same([...declared.keys()].filter((n) => !created.has(n)).sort(), [], 'no type of a table that does not exist')
  const platform = [...declared]
    .filter(([, files]) => files[0] === 'platform/db/schema.ts')
    .map(([n]) => n)
    .sort()
  t.same(platform, ['idempotency_keys', 'schema_migrations', 'work_leases'], "the platform's schema.ts holds only the platform's tables")
})

t.test("each provision's type is declared in the provisions.ts of the domain whose module provides it", async (t) => {
  const declared = new Map<string, string[]>()
  const domains = fs.readdirSync(path.join(SRC, 'domains'), { withFileTypes: true }).filter((e) => e.isDirectory())
  for (const d of domains) {
    const file = path.join(SRC, 'domains', d.name, 'provisions.ts')
    if (!fs.existsSync(file)) continue
    const body = /interface DomainProvisions \{\n([\s\S]*?)\n\s*\}/.exec(fs.readFileSync(file, 'utf8'))?.[1] ?? ''
    for (const m of body.matchAll(/^\s+([a-zA-Z]+): /gm)) declared.set(m[1]!, [...(declared.get(m[1]!) ?? []), d.name])
  }
  const provided: [string, string][] = []
  for (const d of domains) {
    const file = path.join(SRC, 'domains', d.name, 'module.ts')
    if (!fs.existsSync(file)) continue
    for (const m of fs.readFileSync(file, 'utf8').matchAll(/provides: \[([^\]]*)\]/g))
      for (const n of m[1]!.matchAll(/'(\w+)'/g)) provided.push([n[1]!, d.name])
  }
  t.equal(provided.length, MODULES.flatMap((m) => m.provides).length, 'every provision of the wired modules was read')
  t.same(
    provided.filter(([name, domain]) => declared.get(name)?.[0] !== domain),
    [],
    "declared by the providing domain's provisions.ts",
  )
  t.same(
    [...declared].filter(([, by]) => by.length > 1),
    [],
    'declared once',
  )
  const provides = new Set(provided.map(([n]) => n))
  t.same(
    [...declared.keys()].filter((n) => !provides.has(n)),
    [],
    'no type of a provision no module provides',
  )
  t.same(
    fs.readdirSync(path.join(SRC, 'domains')).filter((f) => f.endsWith('.ts')),
    ['index.ts'],
    'no file beside the domain folders but the list of modules',
  )
})

// What a PostgreSQL test's fresh, migrated schema costs in CPU: running every migration on an
// empty schema (what the tests did before) against replaying the migrated template in one
// statement text (cloud/test/db/openEngine.ts, what they do now). Per sample and path: the CPU
// of this process and of the PostgreSQL server processes serving it (read from /proc, so the
// server must run on this machine). The template is made as the tests make it (the first
// fresh schema of a run makes it and keeps it on disk).
// Run: SVC_TEST_DATABASE_URL=postgres://… npx tsx bench/test-schema.ts [samples=6]
import fs from 'node:fs'
import { PostgresDatabase } from '../cloud/src/platform/db/PostgresDatabase.js'
import { migrate } from '../cloud/src/platform/db/migrate.js'
import { migratedTemplate } from '../cloud/test/db/openEngine.js'

const url = process.env.SVC_TEST_DATABASE_URL
if (!url) throw new Error('set SVC_TEST_DATABASE_URL')
const samples = Number(process.argv[2] ?? 6)

/** CPU milliseconds of process `pid` so far (utime + stime). */
function cpuMs(pid: number): number {
  const f = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')
  return (Number(f[11]) + Number(f[12])) * 10
}
const ownMs = (): number => {
  const c = process.cpuUsage()
  return (c.user + c.system) / 1000
}
async function backendPid(db: PostgresDatabase): Promise<number> {
  return (await db.get<{ p: number }>('SELECT pg_backend_pid() AS p'))!.p
}

const template = await migratedTemplate(url)
if (!template) throw new Error('no pg_dump on PATH: the tests migrate each schema, there is no template to time')
const rows: Record<'migrations' | 'template', Array<[number, number]>> = { migrations: [], template: [] }
for (let i = 0; i < samples; i++) {
  for (const path of ['migrations', 'template'] as const) {
    const schema = `bench_schema_${process.pid}_${i}_${path}`
    const admin = await PostgresDatabase.open(url, { busyTimeoutMs: 10_000, max: 1 })
    const adminPid = await backendPid(admin)
    const own0 = ownMs()
    const admin0 = cpuMs(adminPid)
    await admin.run(`CREATE SCHEMA ${schema}`)
    if (path === 'template') await admin.run(`BEGIN;\n${template.text.replaceAll(template.placeholder, schema)}\nCOMMIT;`)
    const db = await PostgresDatabase.open(url, { busyTimeoutMs: 10_000, schema, max: 1 })
    const pool = await backendPid(db)
    const pool0 = cpuMs(pool)
    await migrate(db)
    rows[path].push([ownMs() - own0, cpuMs(adminPid) - admin0 + cpuMs(pool) - pool0])
    await db.close()
    await admin.run(`DROP SCHEMA ${schema} CASCADE`)
    await admin.close()
  }
}
for (const [path, list] of Object.entries(rows))
  for (const [own, server] of list) console.log(`${path.padEnd(10)} this process ${Math.round(own)} ms, server ${server} ms`)
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
for (const [path, list] of Object.entries(rows))
  console.log(`${path}: median this process ${Math.round(median(list.map((r) => r[0])))} ms, server ${median(list.map((r) => r[1]))} ms`)

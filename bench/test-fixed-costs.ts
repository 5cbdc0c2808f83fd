// What the tests' per-test fixed costs are in CPU, each priced in this one process (medians
// after a first, warming run): a fresh migrated in-memory SQLite database (every migration
// afresh, against a copy of a migrated template through SQLite's backup API), a whole app
// (`build(t)`'s buildApp + ready + close on an in-memory database), a console password's
// scrypt at the tests' work factor (2^10) and at the product default (2^15); and the mean of many boots in a row.
// Run: npx -y pnpm@10.34.9 exec tsx bench/test-fixed-costs.ts [samples=15]
import { randomBytes } from 'node:crypto'
import { buildApp } from '../cloud/src/app.js'
import { testConfig } from '../cloud/src/config.js'
import { hashPassword } from '../cloud/src/domains/access/passwords.js'
import { ManualClock } from '../cloud/src/platform/clock.js'
import { SqliteDatabase } from '../cloud/src/platform/db/SqliteDatabase.js'
import { migrate } from '../cloud/src/platform/db/migrate.js'
import { freshSqlite } from '../cloud/test/db/sqliteTemplate.js'

const samples = Number(process.argv[2] ?? 15)
const cpu = (): number => {
  const c = process.cpuUsage()
  return (c.user + c.system) / 1000
}
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!

async function price(name: string, f: () => Promise<unknown>): Promise<void> {
  await f()
  const xs: number[] = []
  for (let i = 0; i < samples; i++) {
    const c0 = cpu()
    await f()
    xs.push(cpu() - c0)
  }
  console.log(`${name.padEnd(52)} median ${median(xs).toFixed(1)} ms CPU (min ${Math.min(...xs).toFixed(1)}, max ${Math.max(...xs).toFixed(1)}, n=${samples})`)
}

await price('SQLite :memory: migrated afresh', async () => {
  const db = await SqliteDatabase.open(':memory:', 50)
  await migrate(db)
  await db.close()
})
await price('SQLite :memory: copied from the migrated template', async () => {
  const db = await freshSqlite()
  await migrate(db)
  await db.close()
})
await price('app: buildApp + ready + close (migrated afresh)', async () => {
  const app = await buildApp(testConfig(), { clock: new ManualClock('2026-06-01T12:00:00.000Z') })
  await app.ready()
  await app.close()
})
await price('app: buildApp + ready + close (template copy)', async () => {
  const db = await freshSqlite()
  const app = await buildApp(testConfig(), { clock: new ManualClock('2026-06-01T12:00:00.000Z'), db })
  await app.ready()
  await app.close()
  await db.close()
})
// The boot's median moves with the garbage collector (one sample may pay for several); the mean
// of many boots in a row is the steadier figure for comparing two trees.
{
  const boots = samples * 4
  const c0 = cpu()
  for (let i = 0; i < boots; i++) {
    const db = await freshSqlite()
    const app = await buildApp(testConfig(), { clock: new ManualClock('2026-06-01T12:00:00.000Z'), db })
    await app.ready()
    await app.close()
    await db.close()
  }
  console.log(`${'app: the same, mean of many in a row'.padEnd(52)} mean ${((cpu() - c0) / boots).toFixed(1)} ms CPU (n=${boots})`)
}
await price('scrypt 2^10 (the tests)', () => hashPassword('correct horse battery', randomBytes, 10))
await price('scrypt 2^15 (the product default)', () => hashPassword('correct horse battery', randomBytes, 15))

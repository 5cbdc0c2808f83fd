// The broker's device directory looks the CONNECTs of one tick up with one query (a connect
// storm's credential reads), and those arriving while it runs with the next, on both engines; every connect still reads the database, so a
// deleted screen's secret stops working at once.
import { servicesOf } from '../../src/app.js'
import t from 'tap'
import { forEngines } from '../db/engines.js'
import { pairScreen } from '../screenHelpers.js'
import { screenDirectory } from '../../src/domains/screens/ScreenService.js'
import { ScreenRepository } from '../../src/domains/screens/ScreenRepository.js'

/** Whether a compiled query is a read of device secrets (the directory's query). */
const isCredentialRead = (q: unknown): boolean => /device_secret_hash/.test((q as { sql?: string }).sql ?? '')

forEngines(t, async (t, build) => {
  t.test('lookups of one tick are one query; each gets its own answer; a deleted screen is unknown at once', async (t) => {
    const h = await build(t)
    const { apiKey } = await h.workspace()
    const ids: string[] = []
    for (let i = 0; i < 4; i++) ids.push((await pairScreen(h, apiKey, `S${i}`)).screenId)
    const s = servicesOf(h.app)
    const repo = new ScreenRepository(s.db.kysely)
    const expected = await Promise.all(ids.map((id) => repo.credentialHash(id)))
    t.ok(
      expected.every((x) => typeof x === 'string' && x.length > 0),
      'paired screens have a secret hash',
    )

    const directory = screenDirectory(s.db)
    const queries = { n: 0 }
    const executor = (s.db.kysely as unknown as { getExecutor(): { executeQuery(...a: unknown[]): unknown } }).getExecutor()
    const run = executor.executeQuery.bind(executor)
    // Only the credential reads count: the app's workers may query beside them.
    executor.executeQuery = (...a: unknown[]) => (isCredentialRead(a[0]) && queries.n++, run(...a))
    t.teardown(() => void (executor.executeQuery = run))
    const got = await Promise.all([...ids, 'scr_unknown', ids[0]!].map((id) => directory.credentialHash(id)))
    executor.executeQuery = run
    t.equal(queries.n, 1, 'one query for six lookups')
    t.same(got, [...expected, null, expected[0]], 'each its own hash; unknown: null; the same id twice: both answered')

    t.equal((await h.req('DELETE', `/v1/screens/${ids[1]}`, apiKey)).statusCode, 200)
    t.equal(await directory.credentialHash(ids[1]!), null, 'deleted: unknown at the next connect')
    t.equal(await directory.credentialHash(ids[2]!), expected[2])
  })

  t.test('lookups arriving while a read runs are the next read, one at a time', async (t) => {
    const h = await build(t)
    const { apiKey } = await h.workspace()
    const ids: string[] = []
    for (let i = 0; i < 4; i++) ids.push((await pairScreen(h, apiKey, `S${i}`)).screenId)
    const s = servicesOf(h.app)
    // What pairing set going behind its answers (the new screens' desired states) is done
    // before the queries are counted.
    await s.desiredPublisher.idle()
    await s.drift.idle()
    const expected = await Promise.all(ids.map((id) => new ScreenRepository(s.db.kysely).credentialHash(id)))
    const directory = screenDirectory(s.db)
    // The first read is held until released; every credential read is counted.
    let release!: () => void
    const held = new Promise<void>((r) => (release = r))
    const queries = { n: 0 }
    const executor = (s.db.kysely as unknown as { getExecutor(): { executeQuery(...a: unknown[]): Promise<unknown> } }).getExecutor()
    const run = executor.executeQuery.bind(executor)
    executor.executeQuery = async (...a: unknown[]) => {
      if (isCredentialRead(a[0]) && ++queries.n === 1) await held
      return run(...a)
    }
    t.teardown(() => void (executor.executeQuery = run))
    const first = directory.credentialHash(ids[0]!)
    await new Promise((r) => setImmediate(r))
    await new Promise((r) => setImmediate(r))
    t.equal(queries.n, 1, 'the first read is under way')
    // Three more CONNECTs, each in a tick of its own, while it runs.
    const later: Promise<string | null>[] = []
    for (const id of ids.slice(1)) {
      later.push(directory.credentialHash(id))
      await new Promise((r) => setImmediate(r))
    }
    t.equal(queries.n, 1, 'they wait for it')
    release()
    t.same(await Promise.all([first, ...later]), expected, 'each gets its own hash')
    t.equal(queries.n, 2, 'and the three were one read')
  })
})

// The broker's device directory looks the CONNECTs of one tick up with one query (a connect
// storm's credential reads), on both engines; every connect still reads the database, so a
// deleted screen's secret stops working at once.
import t from 'tap'
import { forEngines } from '../db/engines.js'
import { pairScreen } from '../screenHelpers.js'
import { screenDirectory } from '../../src/services/ScreenService.js'
import { ScreenRepository } from '../../src/repositories/ScreenRepository.js'

forEngines(t, async (t, build) => {
  t.test('lookups of one tick are one query; each gets its own answer; a deleted screen is unknown at once', async (t) => {
    const h = await build(t)
    const { apiKey } = await h.workspace()
    const ids: string[] = []
    for (let i = 0; i < 4; i++) ids.push((await pairScreen(h, apiKey, `S${i}`)).screenId)
    const s = h.app.services
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
    executor.executeQuery = (...a: unknown[]) => (queries.n++, run(...a))
    t.teardown(() => void (executor.executeQuery = run))
    const got = await Promise.all([...ids, 'scr_unknown', ids[0]!].map((id) => directory.credentialHash(id)))
    executor.executeQuery = run
    t.equal(queries.n, 1, 'one query for six lookups')
    t.same(got, [...expected, null, expected[0]], 'each its own hash; unknown: null; the same id twice: both answered')

    t.equal((await h.req('DELETE', `/v1/screens/${ids[1]}`, apiKey)).statusCode, 200)
    t.equal(await directory.credentialHash(ids[1]!), null, 'deleted: unknown at the next connect')
    t.equal(await directory.credentialHash(ids[2]!), expected[2])
  })
})

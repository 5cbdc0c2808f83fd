// Presence shared between instances is a change of store, not of logic: two ScreenPresence
// instances over one database and one PresenceStore, each fed the connection events of its
// own broker. A device that moves from one instance to the other is never announced
// offline; it is once its last connection anywhere is gone for a grace; an instance that
// restarts has its connections forgotten, and the screen gets one grace to come back.
import { servicesOf } from '../../src/app.js'
import t from 'tap'
import { ScreenPresence } from '../../src/domains/devicelink/ScreenPresence.js'
import { InMemoryPresenceStore } from '../../src/domains/devicelink/PresenceStore.js'
import type { Connection, ConnectionListener } from '../../src/platform/broker/LiveConnections.js'
import { startCloud } from './link.js'

class FakeLink {
  private listeners: ConnectionListener[] = []
  live = new Map<number, string>()
  async subscribe(): Promise<void> {}
  onConnections(l: ConnectionListener): () => void {
    this.listeners.push(l)
    return () => undefined
  }
  isConnected(id: string): boolean {
    return [...this.live.values()].includes(id)
  }
  open(c: Connection): void {
    this.live.set(c.generation, c.clientId)
    for (const l of this.listeners) l.open(c)
  }
  close(c: Connection): void {
    this.live.delete(c.generation)
    for (const l of this.listeners) l.close(c)
  }
}

t.test('two instances sharing a store agree on presence', async (t) => {
  const c = await startCloud(t)
  const { db, events, outbox } = servicesOf(c.running.app)
  const d = await c.pair('Shared')
  const seen: string[] = []
  events.subscribe((e) => void (e.event.startsWith('screen.') && seen.push(e.event)))
  const store = new InMemoryPresenceStore()
  const log = { warn: () => undefined, error: () => undefined }
  const linkA = new FakeLink()
  const linkB = new FakeLink()
  const a = new ScreenPresence(db, c.clock, linkA, outbox, log, 2000, store)
  const b = new ScreenPresence(db, c.clock, linkB, outbox, log, 2000, store)
  await a.start({ timers: false })
  await b.start({ timers: false })
  const status = async () => (await c.call('GET', `/v1/screens/${d.screenId}`)).body.data.status as string
  const settle = async () => {
    await a.idle()
    await b.idle()
  }
  const graceLater = async () => {
    c.clock.advance(2001)
    await a.sweep()
    await b.sweep()
    await settle()
  }

  linkA.open({ clientId: d.screenId, generation: 1 })
  await settle()
  t.equal(await status(), 'online')
  // The device reconnects to instance B before instance A notices the old link is gone.
  linkB.open({ clientId: d.screenId, generation: 1 })
  await settle()
  linkA.close({ clientId: d.screenId, generation: 1 })
  await settle()
  await graceLater()
  t.equal(await status(), 'online', 'a move between instances is not an outage')
  t.same(seen, ['screen.online'])

  linkB.close({ clientId: d.screenId, generation: 1 })
  await settle()
  await graceLater()
  t.equal(await status(), 'offline')
  t.same(seen, ['screen.online', 'screen.offline'], 'announced once, by whichever instance swept first')

  // Back on A; then A dies and a new process starts: the cluster forgets A's connections
  // (a shared store does it by lease), and the screen has one grace to come back.
  linkA.open({ clientId: d.screenId, generation: 2 })
  await settle()
  const a2 = new ScreenPresence(db, c.clock, new FakeLink(), outbox, log, 2000, store)
  await store.forgetInstance(a.instance)
  await a2.start({ timers: false })
  t.notOk(await store.isLive(d.screenId), "the restarted instance's connections are gone")
  c.clock.advance(2001)
  await a2.sweep()
  await a2.idle()
  t.equal(await status(), 'offline')
  t.same(seen, ['screen.online', 'screen.offline', 'screen.online', 'screen.offline'], 'events alternate')
})

// The by-topic index of retained messages (platform/broker/RetainedIndex.ts) behind aedes' memory
// store: exact topics are looked up, wildcard filters follow MQTT matching, an empty
// payload deletes, and a real device subscribing gets exactly the retained state of its
// own topic.
import t from 'tap'
import type { Readable } from 'node:stream'
import { topicMatches, indexRetained } from '../src/platform/broker/RetainedIndex.js'

t.test('MQTT filter matching', async (t) => {
  const cases: [string, string, boolean][] = [
    ['a/b', 'a/b', true],
    ['a/b', 'a/c', false],
    ['a/+', 'a/b', true],
    ['a/+', 'a/b/c', false],
    ['a/#', 'a/b/c', true],
    ['a/#', 'a', true],
    ['#', 'a/b', true],
    ['#', '$SYS/x', false],
    ['+/x', '$SYS/x', false],
    ['a/+/c', 'a/b/c', true],
    ['a/b/c', 'a/b', false],
  ]
  for (const [f, topic, want] of cases) t.equal(topicMatches(f, topic), want, `${f} vs ${topic}`)
})

t.test('the index stores, deletes and answers exact and wildcard filters', async (t) => {
  const store = {} as Parameters<typeof indexRetained>[0]
  indexRetained(store)
  const read = async (s: Readable) => {
    const out: string[] = []
    for await (const p of s) out.push(String((p as { payload: Buffer }).payload))
    return out.sort()
  }
  await store.storeRetained({ topic: 'svc/v1/screens/a/desired', payload: Buffer.from('A') })
  await store.storeRetained({ topic: 'svc/v1/screens/b/desired', payload: Buffer.from('B') })
  await store.storeRetained({ topic: 'svc/v1/screens/a/status', payload: Buffer.from('S') })
  t.same(await read(store.createRetainedStreamCombi(['svc/v1/screens/a/desired'])), ['A'])
  t.same(
    await read(store.createRetainedStreamCombi(['svc/v1/screens/a/desired', 'svc/v1/screens/a/jobs'])),
    ['A'],
    'a topic with nothing retained adds nothing',
  )
  t.same(await read(store.createRetainedStream('svc/v1/screens/+/desired')), ['A', 'B'])
  t.same(await read(store.createRetainedStream('svc/v1/screens/a/#')), ['A', 'S'])
  await store.storeRetained({ topic: 'svc/v1/screens/a/desired', payload: Buffer.from('A2') })
  t.same(await read(store.createRetainedStreamCombi(['svc/v1/screens/a/desired'])), ['A2'], 'a newer retained message replaces the older')
  await store.storeRetained({ topic: 'svc/v1/screens/a/desired', payload: Buffer.alloc(0) })
  t.same(await read(store.createRetainedStreamCombi(['svc/v1/screens/a/desired'])), [], 'an empty payload deletes')
})

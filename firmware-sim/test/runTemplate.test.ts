import t from 'tap'
import { parseTemplateJson, runTemplate } from '../src/runTemplate.js'
import { PanelModel } from '../src/PanelModel.js'

t.test('parseTemplateJson accepts both API shapes and rejects others', async (t) => {
  const tpl = { name: 'X', items: [{ id: 'sti_1', name: 'a', value: 'A' }] }
  t.same(parseTemplateJson(JSON.stringify(tpl)).items[0], { id: 'sti_1', name: 'a', value: 'A', encoding: undefined, eol: undefined })
  t.equal(parseTemplateJson(JSON.stringify({ data: tpl })).name, 'X')
  t.throws(() => parseTemplateJson('[]'), /"items" array/)
  t.throws(() => parseTemplateJson('{"items":[1]}'), /item 1 is not an object/)
})

t.test('PJLink: greeting, then commands', async (t) => {
  const r = await runTemplate({
    protocol: 'pjlink',
    template: parseTemplateJson(
      JSON.stringify({
        name: 'Proj',
        items: [
          { id: 'on', name: 'On', value: '%1POWR 1', eol: 'cr' },
          { id: 'q', name: 'Q', value: '%1POWR ?', eol: 'cr' },
        ],
      }),
    ),
  })
  t.equal(r.greeting, 'PJLINK 0')
  t.same(
    r.results.map((x) => x.outcome),
    ['ok', 'ok'],
  )
  t.match(r.results[1]!.reply, { power: 'on' })
})

t.test('raw: echo ends on silence; invalid items fail without sending', async (t) => {
  const r = await runTemplate({
    protocol: 'raw',
    rawSilenceMs: 20,
    template: {
      name: 'raw',
      items: [
        { id: 'a', name: 'hello', value: 'HELLO', eol: 'crlf' },
        { id: 'b', name: 'bad hex', value: 'AA 1', encoding: 'hex' },
      ],
    },
  })
  t.match(r.results[0], { outcome: 'ok', replyHex: '48 45 4C 4C 4F 0D 0A' })
  t.match(r.results[1], { outcome: 'failed', sentHex: null, reason: /odd number of digits/ })
  t.equal(r.ok, false)
})

t.test('bad checksum reply is reported as invalid, not ok', async (t) => {
  const r = await runTemplate({
    protocol: 'nec',
    faults: { badChecksum: true },
    template: { name: 'n', items: [{ id: 'on', name: 'on', value: '01 30 41 30 41 30 43 02 43 32 30 33 44 36 30 30 30 31 03 73 0D', encoding: 'hex' }] },
  })
  t.match(r.results[0], { outcome: 'invalid', reason: /^checksum: NEC: BCC/ })
})

t.test('PanelModel emits one change per field and validates', async (t) => {
  const m = new PanelModel()
  const seen: string[] = []
  m.on('change', (c) => seen.push(`${c.field}:${String(c.from)}->${String(c.to)}`))
  m.setPower('on')
  m.setPower('on')
  m.setVolume(5)
  t.same(seen, ['power:off->on', 'volume:20->5'])
  t.throws(() => m.setVolume(101), RangeError)
  t.throws(() => new PanelModel({ volume: -1 }), TypeError)
})

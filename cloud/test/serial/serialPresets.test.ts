// Panel presets through HTTP: GET /v1/serial-presets (per protocol, per set id, bad input
// named), POST /v1/serial-templates with `preset`, and docs/serial.md's command tables
// checked against the same codecs, so documented bytes and sent bytes cannot drift.
import t from 'tap'
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { panelProtocols } from '@svc/shared/panels/index'
import { encodeCommand, hexPreview } from '@svc/shared/serial/index'
import { build, makeKey } from '../helpers.js'
import { presetTable } from '../fixtures/presetTables.js'

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..')
type Cmd = { key: string; name: string; value: string; encoding: 'ascii' | 'hex'; eol: 'none' | 'cr'; hexPreview: string }
type Preset = { protocol: string; label: string; commands: Cmd[] }

t.test('GET /v1/serial-presets: five protocols, the keys the installer needs, bytes from the codecs', async (t) => {
  const h = await build(t)
  const { apiKey } = await h.workspace()
  const res = await h.req('GET', '/v1/serial-presets', apiKey)
  t.equal(res.statusCode, 200, res.body)
  const data = res.json().data as Preset[]
  t.same(
    data.map((p) => p.protocol),
    ['samsung-mdc', 'lg', 'nec', 'pjlink', 'cec'],
  )
  for (const p of data) {
    const keys = p.commands.map((c) => c.key)
    for (const k of [
      'power.on',
      'power.off',
      'power.status',
      'input.hdmi1',
      'input.hdmi2',
      'input.hdmi3',
      'input.hdmi4',
      ...(p.protocol === 'cec' ? ['input.player'] : ['input.displayport', 'input.dvi', 'input.pc']),
      'volume.mute',
      'volume.unmute',
    ])
      t.ok(keys.includes(k), `${p.protocol} has ${k}`)
    const codec = panelProtocols[p.protocol as keyof typeof panelProtocols]
    const byKey = new Map(p.commands.map((c) => [c.key, c]))
    t.equal(byKey.get('power.on')!.hexPreview, hexPreview(codec.powerOn(1)), `${p.protocol} power.on is the codec's frame`)
    t.equal(byKey.get('input.hdmi2')!.hexPreview, hexPreview(codec.setInput(1, 'hdmi2')))
    t.equal(byKey.get('volume.mute')!.hexPreview, hexPreview(codec.setMute(1, true)))
    for (const c of p.commands) t.equal(hexPreview(encodeCommand(c)), c.hexPreview, `${p.protocol} ${c.key}: value/encoding/eol give exactly hexPreview`)
  }
  const mdc = data[0]!.commands.find((c) => c.key === 'power.on')!
  t.same(mdc, { key: 'power.on', name: 'Power on', value: 'AA 11 01 01 01 14', encoding: 'hex', eol: 'none', hexPreview: 'AA 11 01 01 01 14' })
  t.match(
    data[1]!.commands.find((c) => c.key === 'power.on'),
    { value: 'ka 01 01', encoding: 'ascii', eol: 'cr' },
  )
})

t.test('GET /v1/serial-presets: setId and protocol pick; bad values are 422 naming them; screen.view needed', async (t) => {
  const h = await build(t)
  const { apiKey } = await h.workspace()
  const one = await h.req('GET', '/v1/serial-presets?protocol=samsung-mdc&setId=3', apiKey)
  t.equal(one.statusCode, 200)
  const only = one.json().data as Preset[]
  t.equal(only.length, 1)
  t.equal(only[0]!.commands[0]!.hexPreview, 'AA 11 03 01 01 16', 'id 3 and its checksum')

  const wide = (await h.req('GET', '/v1/serial-presets?setId=150', apiKey)).json().data as Preset[]
  t.same(
    wide.map((p) => p.protocol),
    ['samsung-mdc', 'lg', 'pjlink'],
    'NEC cannot address 150: left out',
  )
  const nec = await h.req('GET', '/v1/serial-presets?protocol=nec&setId=150', apiKey)
  t.equal(nec.statusCode, 422)
  t.match(nec.json(), { error: 'validation_error', message: /setId: NEC monitor id must be 0 \(all\) or 1–100, got 150/ })

  for (const [q, msg] of [
    ['setId=256', /setId must be an integer 0–255/],
    ['setId=-1', /setId must be an integer 0–255/],
    ['setId=abc', /setId must be an integer 0–255/],
    ['protocol=sony', /protocol must be one of samsung-mdc, lg, nec, pjlink, cec, got "sony"/],
  ] as const) {
    const r = await h.req('GET', `/v1/serial-presets?${q}`, apiKey)
    t.equal(r.statusCode, 422, q)
    t.match(r.json(), { error: 'validation_error', message: msg }, q)
  }
  const other = (await makeKey(h, apiKey, ['node.view'])).secret
  t.equal((await h.req('GET', '/v1/serial-presets', other)).statusCode, 403)
  t.equal((await h.req('GET', '/v1/serial-presets', null)).statusCode, 401)
})

t.test('POST /v1/serial-templates with a preset: all commands, or the keys asked, before the items given', async (t) => {
  const h = await build(t)
  const { apiKey } = await h.workspace()
  const all = await h.req('POST', '/v1/serial-templates', apiKey, { name: 'LG wall', preset: { protocol: 'lg', setId: 2 } })
  t.equal(all.statusCode, 201, all.body)
  const preset = ((await h.req('GET', '/v1/serial-presets?protocol=lg&setId=2', apiKey)).json().data as Preset[])[0]!
  const items = all.json().data.items as (Cmd & { id: string })[]
  t.same(
    items.map((i) => [i.name, i.value, i.encoding, i.eol, i.hexPreview]),
    preset.commands.map((c) => [c.name, c.value, c.encoding, c.eol, c.hexPreview]),
  )
  for (const i of items) t.match(i.id, /^sti_/)

  const some = await h.req('POST', '/v1/serial-templates', apiKey, {
    name: 'Lobby',
    preset: { protocol: 'samsung-mdc', keys: ['input.hdmi1', 'power.on'] },
    items: [{ name: 'Status', value: 'AA 00 01 00 01', encoding: 'hex' }],
  })
  t.equal(some.statusCode, 201, some.body)
  t.same(
    (some.json().data.items as Cmd[]).map((i) => [i.name, i.hexPreview]),
    [
      ['Input HDMI 1', 'AA 14 01 01 21 37'],
      ['Power on', 'AA 11 01 01 01 14'],
      ['Status', 'AA 00 01 00 01'],
    ],
  )

  for (const [preset, msg] of [
    [{ protocol: 'sony' }, /^body.preset.protocol must be one of samsung-mdc, lg, nec, pjlink, cec.$/],
    [{ protocol: 'nec', setId: 101 }, /preset.setId: NEC monitor id must be/],
    [{ protocol: 'lg', setId: 'x' }, /^body.preset.setId must be integer.$/],
    [{ protocol: 'lg', setId: 256 }, /^body.preset.setId must be <= 255.$/],
    [{ protocol: 'lg', keys: ['power.on', 'volume.up'] }, /preset.keys: "volume.up" is not a lg command \(known: power.on, power.off/],
    [{ protocol: 'lg', keys: [] }, /^body.preset.keys must NOT have fewer than 1 items.$/],
    [{ protocol: 'lg', keys: ['power.on'], extra: 1 }, /^body.preset.extra is not a field of this operation.$/],
    ['lg', /^body.preset must be object.$/],
  ] as const) {
    const r = await h.req('POST', '/v1/serial-templates', apiKey, { name: 'Bad', preset })
    t.equal(r.statusCode, 422, JSON.stringify(preset))
    t.match(r.json(), { error: 'validation_error', message: msg })
  }
  t.equal((await h.req('GET', '/v1/serial-templates', apiKey)).json().data.length, 2, 'nothing half-written by the refused ones')
})

t.test('docs/serial.md holds the command table of each protocol exactly as the codecs compute it', async (t) => {
  const doc = fs.readFileSync(path.join(ROOT, 'docs/serial.md'), 'utf8')
  for (const protocol of ['samsung-mdc', 'lg', 'nec', 'pjlink', 'cec'] as const) {
    const table = presetTable(protocol)
    t.ok(doc.includes(table), `${protocol}: the table in docs/serial.md matches the codec (expected:\n${table})`)
  }
  // the check can fail: a changed byte is noticed
  t.notOk(doc.includes(presetTable('samsung-mdc').replace('AA 11 01 01 01 14', 'AA 11 01 01 01 15')))
})

// Request bodies, the same way on every operation that takes JSON (swept from the served
// document, so operations added later are covered): an unknown field is refused with the
// operation's validation error naming it, and nothing is written; a body that is not UTF-8
// or not JSON answers 400 `bad_request` saying which. The document says
// `additionalProperties: false` for every JSON request body.
import { servicesOf } from '../../src/app.js'
import t from 'tap'
import { build } from '../helpers.js'
import { pairScreen } from '../screenHelpers.js'

type Op = { requestBody?: { content?: Record<string, { schema?: Schema & { additionalProperties?: unknown } }> }; responses: Record<string, unknown> }
type Doc = { paths: Record<string, Record<string, Op>> }

const fill = (p: string) => p.replace(/\{[^}]+\}/g, 'x_1')

type Schema = {
  type?: string
  properties?: Record<string, Schema>
  required?: string[]
  anyOf?: Schema[]
  enum?: unknown[]
  const?: unknown
  minimum?: number
  minLength?: number
  items?: Schema
  minItems?: number
}
/** A value of the schema's shape with only its required parts (validation passes the required check). */
function sample(s: Schema | undefined): unknown {
  if (!s) return null
  if (s.const !== undefined) return s.const
  if (s.enum) return s.enum[0]
  if (s.anyOf) return sample(s.anyOf[0])
  switch (s.type) {
    case 'object':
      return Object.fromEntries((s.required ?? []).map((k) => [k, sample(s.properties?.[k])]))
    case 'array':
      return Array.from({ length: s.minItems ?? 0 }, () => sample(s.items))
    case 'string':
      return 'x'.repeat(Math.max(1, s.minLength ?? 1))
    case 'integer':
    case 'number':
      return s.minimum ?? 1
    case 'boolean':
      return true
    default:
      return null
  }
}

const OAUTH_TOKEN = '/v1/oauth/token'

// The tests share one app, each in a workspace of its own; the one that counts every registration has an app of its own.
t.test("JSON bodies' rules over HTTP, on one app", async (t) => {
  const shared = await build(t)
  t.test('every JSON body refuses an unknown field by name, and the document says so', async (t) => {
    const h = shared
    const { apiKey } = await h.workspace()
    const doc = (await h.req('GET', '/v1/openapi.json', null)).json() as Doc
    let swept = 0
    for (const [p, item] of Object.entries(doc.paths)) {
      for (const [m, op] of Object.entries(item)) {
        const json = op.requestBody?.content?.['application/json']
        if (!json) continue
        // The OAuth token endpoint follows RFC 6749, which requires ignoring unrecognised
        // parameters (section 3.2); oauth.test.ts covers it.
        if (p === OAUTH_TOKEN) continue
        // The MCP endpoint takes JSON-RPC messages, checked by the protocol transport and
        // refused as JSON-RPC errors; mcp/mcpEdge.test.ts covers it.
        if (p === '/v1/mcp') continue
        // The agent's log upload checks its device credential before it reads the body (as
        // the screenshot upload does); agentlogs/agentLogs.test.ts covers its unknown fields.
        if (p === '/v1/devices/agent-logs/{id}') continue
        swept++
        const name = `${m} ${p}`
        // A body of several shapes (one per protocol, say) closes each of them.
        const shapes = ((json.schema as { anyOf?: unknown[] } | undefined)?.anyOf ?? [json.schema]) as { additionalProperties?: unknown }[]
        t.ok(
          shapes.every((s) => s?.additionalProperties === false),
          `${name}: the document closes the body`,
        )
        t.ok(op.responses['400'], `${name}: 400 is documented`)
        const body = { ...(sample(json.schema) as object), zzUnknownField: 1 }
        const res = await h.req(m.toUpperCase(), fill(p), apiKey, body)
        t.ok([400, 422].includes(res.statusCode), `${name}: refused (${res.statusCode})`)
        t.match(res.json(), { error: res.statusCode === 400 ? 'bad_request' : 'validation_error' }, name)
        t.match(res.json().message, /zzUnknownField/, `${name}: the message names the field`)
      }
    }
    t.ok(swept >= 40, `${swept} operations take a JSON body`)
  })

  t.test('PATCH /v1/screens/<id> with a field it does not take: 422 naming it, the screen unchanged', async (t) => {
    const h = shared
    const { apiKey } = await h.workspace()
    const { screenId } = await pairScreen(h, apiKey, 'Lobby')
    const before = (await h.req('GET', `/v1/screens/${screenId}`, apiKey)).json().data
    const res = await h.req('PATCH', `/v1/screens/${screenId}`, apiKey, { serialNumber: 'SN-1' })
    t.equal(res.statusCode, 422)
    t.same(res.json(), { error: 'validation_error', message: 'body.serialNumber is not a field of this operation.' })
    const mixed = await h.req('PATCH', `/v1/screens/${screenId}`, apiKey, { name: 'Renamed', colour: 'red' })
    t.equal(mixed.statusCode, 422, 'a known field next to an unknown one does not half-apply')
    t.match(mixed.json().message, /colour/)
    t.same((await h.req('GET', `/v1/screens/${screenId}`, apiKey)).json().data, before, 'nothing changed')
    const ok = await h.req('PATCH', `/v1/screens/${screenId}`, apiKey, { name: 'Renamed' })
    t.equal(ok.statusCode, 200)
    t.equal(ok.json().data.name, 'Renamed')
  })

  t.test('unknown fields inside nested objects are refused too; free-form fields stay open', async (t) => {
    const h = shared
    const { apiKey } = await h.workspace()
    const nested = await h.req('POST', '/v1/serial-templates', apiKey, { name: 'T', items: [{ name: 'on', value: 'ON', colour: 1 }] })
    t.equal(nested.statusCode, 422)
    t.match(nested.json().message, /items\.0\.colour is not a field/)
    const rule = await h.req('POST', '/v1/schedules', apiKey, {
      name: 'S',
      rules: [{ id: 'r', content: { kind: 'media', id: 'med_x' }, priority: 1, colour: 1 }],
    })
    t.equal(rule.statusCode, 422)
    t.match(rule.json().message, /colour/)
    // a design is free-form JSON on purpose: its keys are the caller's
    const creative = await h.req('POST', '/v1/creatives', apiKey, { name: 'D', design: { anyKey: { nested: true } } })
    t.equal(creative.statusCode, 201, creative.body)
  })

  t.test('a body that is not UTF-8, or not JSON, answers 400 saying which', async (t) => {
    const h = shared
    const { apiKey } = await h.workspace()
    const send = (payload: Buffer | string, type = 'application/json') =>
      h.app.inject({ method: 'POST', url: '/v1/nodes', headers: { authorization: `Bearer ${apiKey}`, 'content-type': type }, payload })
    const latin1 = await send(Buffer.from('{"name":"Caf\xe9"}', 'latin1'))
    t.equal(latin1.statusCode, 400)
    t.same(latin1.json(), { error: 'bad_request', message: 'The body is not UTF-8 text; send JSON encoded as UTF-8.' })
    const lone = await send(Buffer.from([0x7b, 0x22, 0x6e, 0x61, 0x6d, 0x65, 0x22, 0x3a, 0x22, 0xed, 0xa0, 0x80, 0x22, 0x7d]))
    t.equal(lone.statusCode, 400, 'an encoded surrogate is not UTF-8 either')
    const broken = await send('{"name":')
    t.same(broken.json(), { error: 'bad_request', message: 'The body is not valid JSON.' })
    t.equal(broken.statusCode, 400)
    const charset = await send(Buffer.from('{"name":"Café"}', 'utf8'), 'application/json; charset=utf-8')
    t.equal(charset.statusCode, 201, 'UTF-8 with a charset parameter is fine')
    t.equal(charset.json().data.name, 'Café')
    const list = (await h.req('GET', '/v1/nodes', apiKey)).json().data as { name: string }[]
    t.same(
      list.map((n) => n.name),
      ['Café'],
      'refused bodies wrote nothing',
    )
  })

  t.test('a key named __proto__, or constructor.prototype, is refused with 400 naming it, at any depth', async (t) => {
    const h = shared
    const { apiKey } = await h.workspace()
    const send = (payload: string, url = '/v1/nodes', method = 'POST') =>
      h.app.inject({ method: method as 'POST', url, headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' }, payload })
    for (const [payload, key] of [
      ['{"__proto__":{"polluted":true},"name":"x"}', 'body.__proto__'],
      ['{"name":"x","\\u005f_proto__":{"polluted":true}}', 'body.__proto__'],
      ['{"constructor":{"prototype":{"polluted":true}},"name":"x"}', 'body.constructor.prototype'],
      ['{"name":"x","meta":[{"a":{"__proto__":{}}}]}', 'body.meta[0].a.__proto__'],
    ] as const) {
      const res = await send(payload)
      t.equal(res.statusCode, 400, payload)
      t.equal(res.json().error, 'bad_request', payload)
      t.match(res.json().message, `${key} is not accepted`, `the message names ${key}`)
    }
    // The same on a free-form field, where any other key is fine.
    const creative = await send('{"name":"Promo","design":{"layers":[],"x":{"__proto__":{"polluted":true}}}}', '/v1/creatives')
    t.equal(creative.statusCode, 400)
    t.match(creative.json().message, 'body.design.x.__proto__ is not accepted')
    t.equal(({} as Record<string, unknown>).polluted, undefined, 'no prototype was touched')
    t.same((await h.req('GET', '/v1/nodes', apiKey)).json().data, [], 'nothing written')
    // Not JSON at all is still "not valid JSON".
    t.same((await send('{"__proto__":')).json(), { error: 'bad_request', message: 'The body is not valid JSON.' })
  })
})

t.test('a JSON null body is refused where an object is asked; no body at all is still an empty one where the operation allows it', async (t) => {
  const h = await build(t)
  const { apiKey } = await h.workspace()
  const register = (payload?: string) =>
    h.app.inject({
      method: 'POST',
      url: '/v1/devices/register',
      ...(payload !== undefined ? { headers: { 'content-type': 'application/json' }, payload } : {}),
    })
  for (const payload of ['null', '[]', '"x"', '1']) {
    const res = await register(payload)
    t.equal(res.statusCode, 422, `register with ${payload}`)
    t.same(res.json(), { error: 'validation_error', message: 'body must be object.' })
  }
  t.equal((await servicesOf(h.app).db.get<{ n: number }>('SELECT COUNT(*) AS n FROM device_registrations'))!.n, 0, 'no registration made')
  t.equal((await register()).statusCode, 201, 'no body: a registration')
  t.equal((await register('{}')).statusCode, 201, 'an empty object: a registration')
  const node = await h.app.inject({
    method: 'POST',
    url: '/v1/nodes',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
    payload: 'null',
  })
  t.equal(node.statusCode, 422, 'the same on any other operation')
})

t.test('the upload form refuses a field it does not take, and stores nothing', async (t) => {
  const { buildMedia, form, PNG_1x1 } = await import('../content/fixtures.js')
  const h = await buildMedia(t)
  const { apiKey } = await h.workspace()
  const upload = (fields: Parameters<typeof form>[0]) => {
    const f = form(fields)
    return h.app.inject({ method: 'POST', url: '/v1/media/upload', headers: { authorization: `Bearer ${apiKey}`, ...f.headers }, payload: f.payload })
  }
  const bad = await upload({ name: 'a', colour: 'red', file: { filename: 'a.png', data: PNG_1x1 } })
  t.equal(bad.statusCode, 422)
  t.same(bad.json(), { error: 'validation_error', message: 'body.colour is not a field of this operation.' })
  t.same((await h.req('GET', '/v1/media', apiKey)).json().data, [])
  const ok = await upload({ name: 'a', file: { filename: 'a.png', data: PNG_1x1 } })
  t.equal(ok.statusCode, 201)
})

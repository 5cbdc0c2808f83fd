// Answers given before a route runs keep the {error, message} envelope with snake_case
// codes: a malformed path, a URL over Node's header limit (written by the HTTP server
// itself, before Fastify), malformed HTTP, and a multipart form with two file parts.
import { servicesOf } from '../../src/app.js'
import net from 'node:net'
import t from 'tap'
import { build } from '../helpers.js'

/** Sends raw bytes to the listening app and returns the raw answer. */
function raw(port: number, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = net.connect(port, '127.0.0.1')
    let out = ''
    s.on('data', (d) => (out += d.toString()))
    s.on('error', reject)
    s.on('close', () => resolve(out))
    s.write(text)
  })
}

function parse(answer: string): { status: number; headers: Record<string, string>; body: Record<string, unknown> } {
  const [head, ...rest] = answer.split('\r\n\r\n')
  const lines = head!.split('\r\n')
  const status = Number(lines[0]!.split(' ')[1])
  const headers = Object.fromEntries(lines.slice(1).map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]))
  const text = rest.join('\r\n')
  // A chunked answer carries its length line first.
  const json = text.slice(text.indexOf('{'), text.lastIndexOf('}') + 1)
  return { status, headers, body: JSON.parse(json) }
}

t.test('a malformed %-escape in the path answers 400 bad_request in the envelope with a request id header', async (t) => {
  const h = await build(t)
  const res = await h.app.inject({ method: 'GET', url: '/v1/screens/%ZZ' })
  t.equal(res.statusCode, 400)
  t.same(Object.keys(res.json()).sort(), ['error', 'message'])
  t.equal(res.json().error, 'bad_request')
  t.match(res.headers['x-svc-request-id'], /^req_/)
})

t.test('a 16 KB URL answers 431 too_large in the envelope with a request id; malformed HTTP 400 bad_request', async (t) => {
  const h = await build(t)
  await h.app.listen({ port: 0, host: '127.0.0.1' })
  const port = (h.app.server.address() as net.AddressInfo).port
  const long = parse(await raw(port, `GET /v1/screens?q=${'x'.repeat(16 * 1024)} HTTP/1.1\r\nHost: x\r\n\r\n`))
  t.equal(long.status, 431)
  t.equal(long.body.error, 'too_large')
  t.type(long.body.message, 'string')
  t.match(long.body.requestId, /^req_/)
  t.equal(long.headers['x-svc-request-id'], long.body.requestId)
  t.match(long.headers['content-type'], /application\/json/)
  t.equal(long.headers['x-content-type-options'], 'nosniff', 'nosniff on what Node writes itself too')

  const junk = parse(await raw(port, 'BLAH\x01 / HTTP/1.1\r\n\r\n'))
  t.equal(junk.status, 400)
  t.equal(junk.body.error, 'bad_request')
  t.match(junk.body.requestId, /^req_/)

  // The same malformed path over a real socket.
  const bad = parse(await raw(port, 'GET /v1/%ZZ HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'))
  t.equal(bad.status, 400)
  t.equal(bad.body.error, 'bad_request')
})

t.test('two file parts in one upload: 422 validation_error, not 413 "reach files limit"; a cut-off form 400', async (t) => {
  const h = await build(t)
  const { apiKey } = await h.workspace()
  const b = 'xXbOuNdArYXx'
  const part = (name: string) => `--${b}\r\nContent-Disposition: form-data; name="${name}"; filename="a.png"\r\nContent-Type: image/png\r\n\r\nAAAA\r\n`
  for (const names of [
    ['file', 'file'],
    ['file', 'other'],
  ]) {
    const payload = `${names.map(part).join('')}--${b}--\r\n`
    const res = await h.app.inject({
      method: 'POST',
      url: '/v1/media/upload',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': `multipart/form-data; boundary=${b}` },
      payload,
    })
    t.equal(res.statusCode, 422, names.join('+'))
    t.equal(res.json().error, 'validation_error')
    t.match(res.json().message, /one file/i)
  }
  t.equal((await servicesOf(h.app).db.get<{ n: number }>('SELECT COUNT(*) AS n FROM media'))!.n, 0)
  // Too many small fields: 422 too.
  const fields = `${Array.from({ length: 12 }, (_, i) => `--${b}\r\nContent-Disposition: form-data; name="f${i}"\r\n\r\nv\r\n`).join('')}--${b}--\r\n`
  const many = await h.app.inject({
    method: 'POST',
    url: '/v1/media/upload',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': `multipart/form-data; boundary=${b}` },
    payload: fields,
  })
  t.ok([413, 422].includes(many.statusCode), `${many.statusCode}`)
  t.match(many.json().error, /^[a-z_]+$/)
  // A form cut off before its closing boundary: 400, not a server fault.
  for (const cut of [part('file'), `--${b}\r\nContent-Disposition: form-data; name="file"; filename="a.png"\r\n`]) {
    const res = await h.app.inject({
      method: 'POST',
      url: '/v1/media/upload',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': `multipart/form-data; boundary=${b}` },
      payload: cut,
    })
    t.equal(res.statusCode, 400, 'a cut-off form')
    t.same(res.json(), { error: 'bad_request', message: 'The form ends before its closing boundary (a cut-off upload?); send the whole form.' })
  }
  t.equal((await servicesOf(h.app).db.get<{ n: number }>('SELECT COUNT(*) AS n FROM media'))!.n, 0)
})

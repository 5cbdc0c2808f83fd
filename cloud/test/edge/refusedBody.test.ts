// A body the server refuses before reading it through (over a size limit, or refused before
// it is read at all) ends the connection: the answer says `Connection: close` and the server
// closes the socket, rather than keeping alive a connection whose rest of body it would
// have to read (or would misread as the next request). Tested over real sockets, with
// chunked bodies (no Content-Length to refuse up front) and a second request behind them.
import net from 'node:net'
import t from 'tap'
import { build, type Harness } from '../helpers.js'
import { pairScreen } from '../screenHelpers.js'
import { SCREENSHOT_MAX_BYTES } from '../../src/domains/screenshots/ScreenshotService.js'
import { HANG_GUARD_MS } from '@svc/shared/testing'

interface Exchange {
  /** Everything the server wrote, as text (heads and small bodies). */
  text: string
  /** Whether the server closed the socket within the wait. */
  closed: boolean
}

/**
 * Sends `head` and a chunked body of `bodyBytes` bytes (in 64 KB chunks), then a second
 * request on the same socket; collects what comes back until the server closes the socket
 * or `waitMs` passes.
 */
function exchange(port: number, head: string, bodyBytes: number, waitMs = HANG_GUARD_MS, prefix = '', suffix = ''): Promise<Exchange> {
  return new Promise((resolve) => {
    const s = net.connect(port, '127.0.0.1')
    let text = ''
    let closed = false
    const done = () => {
      clearTimeout(timer)
      s.destroy()
      resolve({ text, closed })
    }
    const timer = setTimeout(done, waitMs)
    s.on('data', (d) => (text += d.toString('latin1')))
    s.on('error', () => undefined) // the server may close while we are still writing
    s.on('close', () => {
      closed = true
      done()
    })
    s.write(`${head}\r\nTransfer-Encoding: chunked\r\n\r\n`)
    if (prefix) s.write(`${Buffer.byteLength(prefix).toString(16)}\r\n${prefix}\r\n`)
    const chunk = Buffer.alloc(64 * 1024, 0x41)
    for (let sent = 0; sent < bodyBytes; sent += chunk.length) {
      if (s.destroyed) break
      s.write(`${chunk.length.toString(16)}\r\n`)
      s.write(chunk)
      s.write('\r\n')
    }
    if (suffix && !s.destroyed) s.write(`${Buffer.byteLength(suffix).toString(16)}\r\n${suffix}\r\n`)
    if (!s.destroyed) s.write('0\r\n\r\nGET /v1/status HTTP/1.1\r\nHost: x\r\n\r\n')
  })
}

/** The status line and headers of each answer in `text`. */
function answers(text: string): { status: number; headers: Record<string, string> }[] {
  return [...text.matchAll(/HTTP\/1\.1 (\d{3})[^\r]*\r\n([\s\S]*?)\r\n\r\n/g)].map((m) => ({
    status: Number(m[1]),
    headers: Object.fromEntries(
      m[2]!.split('\r\n').map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()] as [string, string]),
    ),
  }))
}

async function listening(h: Harness): Promise<number> {
  await h.app.listen({ port: 0, host: '127.0.0.1' })
  return (h.app.server.address() as net.AddressInfo).port
}

t.test('a chunked screenshot upload over the limit: 413 with Connection: close, and the socket is closed', async (t) => {
  const h = await build(t)
  const { apiKey } = await h.workspace()
  const screen = await pairScreen(h, apiKey)
  const shot = (await h.req('POST', `/v1/screens/${screen.screenId}/screenshot`, apiKey)).json().data
  const port = await listening(h)
  const basic = Buffer.from(`${screen.screenId}:${screen.deviceSecret}`).toString('base64')
  const res = await exchange(
    port,
    `PUT /v1/devices/screenshots/${shot.id} HTTP/1.1\r\nHost: x\r\nAuthorization: Basic ${basic}\r\nContent-Type: image/png`,
    SCREENSHOT_MAX_BYTES + 128 * 1024,
  )
  const [first, ...rest] = answers(res.text)
  t.equal(first?.status, 413, 'too large')
  t.equal(first?.headers.connection, 'close', 'the answer says the connection ends')
  t.ok(res.closed, 'and the server closes it (the next request on it is not left hanging)')
  t.same(rest, [], 'nothing read from the rest of the refused body as a request')
  t.equal((await h.req('GET', `/v1/screenshots/${shot.id}`, apiKey)).json().data.status, 'queued', 'the job is still open')
})

t.test('the same on every body-limited route: a multipart part, a form upload, a JSON body; and a body refused before it is read', async (t) => {
  const h = await build(t, { mediaPartMaxBytes: 256 * 1024, mediaUploadMaxBytes: 256 * 1024, bodyLimitBytes: 256 * 1024 })
  const { apiKey } = await h.workspace()
  const upload = (await h.req('POST', '/v1/media/upload/multipart/initiate', apiKey, { name: 'big.mp4' })).json().data
  const port = await listening(h)
  const auth = `Authorization: Bearer ${apiKey}`
  const boundary = 'b0undary'
  const part = `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.png"\r\nContent-Type: image/png\r\n\r\n`
  const cases: [string, string, number, number, string?, string?][] = [
    [
      'a multipart part',
      `PUT /v1/media/upload/multipart/${upload.id}/parts/1 HTTP/1.1\r\nHost: x\r\n${auth}\r\nContent-Type: application/octet-stream`,
      1024 * 1024,
      413,
    ],
    [
      'a form upload',
      `POST /v1/media/upload HTTP/1.1\r\nHost: x\r\n${auth}\r\nContent-Type: multipart/form-data; boundary=${boundary}`,
      1024 * 1024,
      413,
      part,
      `\r\n--${boundary}--\r\n`,
    ],
    ['a JSON body', `POST /v1/nodes HTTP/1.1\r\nHost: x\r\n${auth}\r\nContent-Type: application/json`, 1024 * 1024, 413],
    [
      'a body without a credential',
      `PUT /v1/media/upload/multipart/${upload.id}/parts/1 HTTP/1.1\r\nHost: x\r\nContent-Type: application/octet-stream`,
      1024 * 1024,
      401,
    ],
  ]
  for (const [label, head, bytes, status, prefix, suffix] of cases) {
    const res = await exchange(port, head, bytes, undefined, prefix, suffix)
    const [first] = answers(res.text)
    t.equal(first?.status, status, `${label}: ${status}`)
    t.equal(first?.headers.connection, 'close', `${label}: Connection: close`)
    t.ok(res.closed, `${label}: the server closes the socket`)
  }
  // A request whose body was read through keeps its connection.
  const s = net.connect(port, '127.0.0.1')
  t.teardown(() => s.destroy())
  let text = ''
  s.on('data', (d) => (text += d.toString()))
  s.write(
    `POST /v1/nodes HTTP/1.1\r\nHost: x\r\n${auth}\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}GET /v1/status HTTP/1.1\r\nHost: x\r\n\r\n`,
  )
  const deadline = Date.now() + HANG_GUARD_MS // a hang guard: the two answers are awaited
  while (answers(text).length < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20))
  t.same(
    answers(text).map((a) => [a.status, a.headers.connection]),
    [
      [422, 'keep-alive'],
      [200, 'keep-alive'],
    ],
    'a refused body that was read through: the connection goes on',
  )
})

// Hostile release uploads through the HTTP interface: the tarball is read as it arrives and
// refused (422) as soon as it unpacks past the limit or holds too many entries, without
// reading on (an endless upload is answered); other requests are answered meanwhile; and an
// archive whose version is ambiguous (svc-agent/package.json twice) is refused. The
// archives are made here, in memory: a gzip member of zeros repeated, ustar headers by hand.
import { randomBytes } from 'node:crypto'
import http from 'node:http'
import net from 'node:net'
import zlib from 'node:zlib'
import t from 'tap'
import { startCloud, type Cloud } from '../devicelink/link.js'
import { releaseForm, releaseKey, tarHeader as header } from '../fixtures/agentRelease.js'
import { sha256Hex, signRelease } from '@svc/shared/releases'
import { HANG_GUARD_MS } from '@svc/shared/testing'
import { LINGER_MAX_BYTES } from '../../src/platform/http/lingeringClose.js'

const MiB = 1024 * 1024

/** A file entry: its header and its content padded to whole blocks. */
function file(name: string, text: string | Buffer): Buffer {
  const body = Buffer.from(text)
  return Buffer.concat([header(name, body.length), body, Buffer.alloc((512 - (body.length % 512)) % 512)])
}

/** A gzipped tar of these entries (and the two zero blocks that end an archive). */
const tgz = (...entries: Buffer[]) => zlib.gzipSync(Buffer.concat([...entries, Buffer.alloc(1024)]))

/** The files of a packed agent but package.json. */
const program = () => [
  file('svc-agent/bin/svc-agent', '#!/usr/bin/env node\n'),
  file('svc-agent/lib/svc-agent.mjs', 'export {}\n'),
  file('svc-agent/lib/prebuilds/linux-x64/node.napi.glibc.node', 'binding'),
]

/**
 * POSTs a release form whose `file` part is `chunk(i)` for i below `total` (gzip members),
 * and then neither more nor the part's end: a file part that never ends, so the cloud can
 * answer only by refusing what it has read (and the client is not writing when it does).
 * `midway` runs once `before` chunks are written and the cloud has not answered yet.
 * Answers the status, the body and how many chunks went.
 */
function endlessUpload(
  c: Cloud,
  chunk: (i: number) => Buffer,
  total: number,
  before: number,
  midway: () => Promise<void>,
): Promise<{ status: number; body: any; written: number }> {
  const boundary = 'svcendless'
  return new Promise((resolve, reject) => {
    let answered = false
    let written = 0
    const req = http.request({
      host: '127.0.0.1',
      port: c.running.httpPort,
      method: 'POST',
      path: '/v1/agent-releases',
      headers: { authorization: `Bearer ${c.apiKey}`, 'content-type': `multipart/form-data; boundary=${boundary}` },
    })
    req.on('response', (res) => {
      answered = true
      const parts: Buffer[] = []
      res.on('data', (d: Buffer) => parts.push(d))
      res.on('end', () => {
        req.destroy()
        resolve({ status: res.statusCode ?? 0, body: JSON.parse(Buffer.concat(parts).toString('utf8')), written })
      })
    })
    req.on('error', (e) => {
      if (!answered) reject(e)
    })
    req.write(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="bomb.tar.gz"\r\nContent-Type: application/gzip\r\n\r\n`)
    const pump = async () => {
      while (!answered && written < total) {
        if (written === before) await midway()
        if (answered) return
        const ok = req.write(chunk(written++))
        if (!ok) await new Promise<void>((r) => req.once('drain', () => r()))
        // A turn for the answer to come in.
        await new Promise<void>((r) => setImmediate(r))
      }
    }
    pump().catch((e) => {
      if (!answered) reject(e)
    })
  })
}

t.test('a zip bomb is refused (422) when it unpacks past the limit, an endless one too; another request is answered meanwhile; nothing is kept', async (t) => {
  const c = await startCloud(t, { config: { agentReleaseMaxUnpackedBytes: 16 * MiB, agentReleaseMaxBytes: 8 * MiB } })
  // One member holds a header announcing a 2 GiB file, every other one a mebibyte of zeros (about a kilobyte gzipped).
  const first = zlib.gzipSync(header('svc-agent/big', 2 * 1024 * MiB))
  const zeros = zlib.gzipSync(Buffer.alloc(MiB))
  let during: number | null = null
  const res = await endlessUpload(
    c,
    (i) => (i === 0 ? first : zeros),
    200,
    4,
    async () => {
      during = (await c.call('GET', '/v1/agent-releases')).status
    },
  )
  t.equal(during, 200, 'a request sent while the upload was being read was answered')
  t.equal(res.status, 422)
  t.match(res.body, { error: 'validation_error', message: `file: unpacks to more than ${16 * MiB} bytes; a packed agent is far smaller.` })
  t.ok(res.written > 4, 'the upload was still coming when it was refused')
  t.same((await c.call('GET', '/v1/agent-releases')).body.data, [], 'nothing kept')
})

t.test('an endless upload under the unpacked limit is answered at the file size limit (413)', async (t) => {
  const c = await startCloud(t, { config: { agentReleaseMaxBytes: MiB } })
  const first = zlib.gzipSync(header('svc-agent/big', 2 * 1024 * MiB))
  // Bytes that do not compress: the file size limit comes long before the unpacked one.
  const noise = zlib.gzipSync(randomBytes(64 * 1024))
  const res = await endlessUpload(
    c,
    (i) => (i === 0 ? first : noise),
    40,
    0,
    async () => undefined,
  )
  t.equal(res.status, 413)
  t.match(res.body, { error: 'too_large' })
})

/**
 * POSTs `body` as the `file` part of a release form over a raw socket, the way a simple
 * client does: every byte written before a byte of the answer is read (the answer waits in
 * the kernel meanwhile). Answers the raw answer read afterwards and the socket error, if any.
 */
async function writeAllThenRead(c: Cloud, body: Buffer): Promise<{ answer: string; error: string | null }> {
  const boundary = 'svcwriteall'
  const head = Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.tar.gz"\r\nContent-Type: application/gzip\r\n\r\n`)
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`)
  const form = Buffer.concat([head, body, tail])
  const socket = net.connect(c.running.httpPort, '127.0.0.1')
  let error: string | null = null
  socket.on('error', (e: NodeJS.ErrnoException) => (error ??= e.code ?? e.message))
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()))
  const guard = (what: string) =>
    new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`no ${what} within ${HANG_GUARD_MS} ms`)), HANG_GUARD_MS).unref())
  await Promise.race([new Promise<void>((resolve) => socket.once('connect', () => resolve())), closed, guard('connection')])
  socket.pause()
  const chunks: Buffer[] = []
  socket.on('data', (d: Buffer) => chunks.push(d))
  socket.write(
    `POST /v1/agent-releases HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${c.apiKey}\r\nContent-Type: multipart/form-data; boundary=${boundary}\r\nContent-Length: ${form.length}\r\n\r\n`,
  )
  for (let at = 0; at < form.length && !socket.destroyed; at += 256 * 1024) {
    if (!socket.write(form.subarray(at, at + 256 * 1024)))
      await Promise.race([new Promise<void>((resolve) => socket.once('drain', () => resolve())), closed, guard('drain while writing the body')])
  }
  // Everything written (or the socket broke): now the answer is read.
  socket.resume()
  await Promise.race([new Promise<void>((resolve) => socket.once('end', () => resolve())), closed, guard('end of the answer')])
  socket.destroy()
  await closed
  return { answer: Buffer.concat(chunks).toString('utf8'), error }
}

t.test('a client writing its whole upload before reading reads the refusal (413), not a reset: the cloud reads on and discards, then closes', async (t) => {
  const c = await startCloud(t, { config: { agentReleaseMaxBytes: MiB } })
  // A tar announcing a 2 GiB file, then incompressible gzip members, sixteen times the limit:
  // refused after the first mebibyte, while most of it is still to come.
  const noise = zlib.gzipSync(randomBytes(64 * 1024))
  const body = Buffer.concat([zlib.gzipSync(header('svc-agent/big', 2 * 1024 * MiB)), ...Array.from({ length: 250 }, () => noise)])
  t.ok(body.length < LINGER_MAX_BYTES, 'within what the cloud reads on after a refusal')
  for (let round = 1; round <= 3; round++) {
    const { answer, error } = await writeAllThenRead(c, body)
    t.match(answer, /^HTTP\/1\.1 413 /, `round ${round}: the answer is read (${error ?? 'no socket error'})`)
    t.match(answer, /\r\nconnection: close\r\n/i, `round ${round}: it says the connection closes`)
    t.match(answer, /"error":"too_large"/, `round ${round}: the envelope`)
  }
  t.equal((await c.call('GET', '/v1/agent-releases')).status, 200, 'the cloud answers the next request')
})

t.test('an archive of many empty entries is refused at the entry limit, also when it never ends', async (t) => {
  const c = await startCloud(t, { config: { agentReleaseMaxEntries: 1000, agentReleaseMaxBytes: 8 * MiB } })
  // Each chunk: a gzip member of 100 empty files.
  const batch = (i: number) => zlib.gzipSync(Buffer.concat(Array.from({ length: 100 }, (_, k) => header(`svc-agent/e${i}-${k}`, 0))))
  let during: number | null = null
  const res = await endlessUpload(c, batch, 50, 2, async () => {
    during = (await c.call('GET', '/v1/agent-rollouts')).status
  })
  t.equal(during, 200)
  t.equal(res.status, 422)
  t.match(res.body, { error: 'validation_error', message: 'file: holds more than 1000 entries; a packed agent holds a few dozen.' })

  // A finite one, under the byte limits: the same answer.
  const many = tgz(...program(), file('svc-agent/package.json', '{"version":"1.0.0"}'), ...Array.from({ length: 2000 }, (_, i) => header(`svc-agent/x${i}`, 0)))
  const sig = JSON.stringify(signRelease(releaseKey.privateKeyPem, sha256Hex(many)))
  const form = releaseForm({ bytes: many, signature: sig })
  const res2 = await fetch(`http://127.0.0.1:${c.running.httpPort}/v1/agent-releases`, {
    method: 'POST',
    headers: { authorization: `Bearer ${c.apiKey}` },
    body: form,
  })
  const r = { status: res2.status, body: await res2.json() }
  t.equal(r.status, 422)
  t.match(r.body, { message: /holds more than 1000 entries/ })
})

t.test(
  'an archive whose version is ambiguous is refused: package.json twice (the one read and the one unpacked could differ), a link, a path with ..',
  async (t) => {
    const c = await startCloud(t)
    const send = async (bytes: Buffer) => {
      const signature = JSON.stringify(signRelease(releaseKey.privateKeyPem, sha256Hex(bytes)))
      const res = await fetch(`http://127.0.0.1:${c.running.httpPort}/v1/agent-releases`, {
        method: 'POST',
        headers: { authorization: `Bearer ${c.apiKey}` },
        body: releaseForm({ bytes, signature }),
      })
      return { status: res.status, body: (await res.json()) as any }
    }
    // The second copy is over 64 KiB (padding after the JSON): a reader that skips it keeps 1.0.0, while unpacking leaves 6.6.6.
    const twice = await send(
      tgz(...program(), file('svc-agent/package.json', '{"version":"1.0.0"}'), file('./svc-agent//package.json', `{"version":"6.6.6"}${' '.repeat(70_000)}`)),
    )
    t.equal(twice.status, 422)
    t.match(twice.body, { error: 'validation_error', message: /^file: holds svc-agent\/package\.json twice: the version is ambiguous/ })

    const linked = await send(tgz(...program(), file('svc-agent/real.json', '{"version":"6.6.6"}'), header('svc-agent/package.json', 0, '2', 'real.json')))
    t.equal(linked.status, 422)
    t.match(linked.body, { message: /^file: holds "svc-agent\/package\.json" as a SymbolicLink; a packed agent holds only folders and regular files/ })

    const dotdot = await send(tgz(...program(), file('svc-agent/package.json', '{"version":"1.0.0"}'), file('svc-agent/../evil', 'x')))
    t.equal(dotdot.status, 422)
    t.match(dotdot.body, { message: /an absolute path or one with "\.\."/ })

    const fine = await send(
      tgz(header('svc-agent/', 0, '5'), header('./svc-agent/', 0, '5'), ...program(), file('svc-agent/package.json', '{"version":"1.0.0"}')),
    )
    t.equal(fine.status, 201, 'a folder named twice is no ambiguity')
    t.match(fine.body.data, { version: '1.0.0', arch: 'x64' })
    t.equal((await c.call('GET', '/v1/agent-releases')).body.data.length, 1, 'only that one was kept')
  },
)

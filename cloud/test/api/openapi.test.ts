// The interface document (GET /v1/openapi.json) and the docs page. The checks sweep the
// whole document and every registered route, so routes added later are covered too.
import { servicesOf } from '../../src/app.js'
import t from 'tap'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import type { FastifyInstance } from 'fastify'
import { PERMISSIONS } from '@svc/shared'
import { build, makeKey } from '../helpers.js'
import { openApiPath } from '../../src/platform/http/openapi.js'
import { CSRF_HEADER, SESSION_COOKIE } from '../../src/domains/access/authentication.js'
import { form, PNG_1x1 } from '../content/fixtures.js'
import { ALLOWED_TYPES } from '../../src/domains/media/sniff.js'

const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace']
type Op = Record<string, unknown> & { security?: Record<string, string[]>[] }
type Doc = { openapi: string; info: { version: string }; paths: Record<string, Record<string, Op>> }

/** Every operation in the document as [method, path, op]. */
function operations(doc: Doc): [string, string, Op][] {
  const out: [string, string, Op][] = []
  for (const [p, item] of Object.entries(doc.paths)) for (const [m, op] of Object.entries(item)) if (HTTP_METHODS.includes(m)) out.push([m, p, op])
  return out
}

/** Every route Fastify registered, as `METHOD /url`, read from printRoutes' tree. */
function registeredRoutes(app: FastifyInstance): Set<string> {
  const out = new Set<string>()
  const stack: string[] = []
  for (const line of app.printRoutes({ commonPrefix: false }).split('\n')) {
    const m = /^((?:[│ ] {3})*)[├└]── (.+?)(?: \(([A-Z, ]+)\))?$/.exec(line)
    if (!m) continue
    const depth = m[1]!.length / 4
    stack.length = depth
    const url = stack.join('') + m[2]!
    stack.push(m[2]!)
    for (const method of (m[3] ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean))
      out.add(`${method} ${url}`)
  }
  return out
}

const fill = (p: string) => p.replace(/\{[^}]+\}/g, 'x_1')

// The tests share one app: they read what it documents and serves, each in a workspace of its own.
t.test('the document and the docs, on one app', async (t) => {
  const shared = await build(t)
  t.test('the document is OpenAPI 3.1.0, public, version 1', async (t) => {
    const h = shared
    for (const token of [null, 'garbage']) {
      const res = await h.req('GET', '/v1/openapi.json', token)
      t.equal(res.statusCode, 200)
      t.match(res.headers['content-type'], /^application\/json/)
      const doc = res.json() as Doc
      t.equal(doc.openapi, '3.1.0')
      t.equal(doc.info.version, '1')
      t.ok(Object.keys(doc.paths).length > 0)
    }
  })

  t.test('every /v1 operation carries x-svc-permission and x-svc-schema, matching what the route enforces', async (t) => {
    const h = shared
    const doc = (await h.req('GET', '/v1/openapi.json', null)).json() as Doc
    const ops = operations(doc).filter(([, p]) => p.startsWith('/v1/'))
    t.ok(ops.length >= 16, `${ops.length} operations`)
    const allowed = new Set<string>([...PERMISSIONS, 'none'])

    const { apiKey } = await h.workspace()
    // for each permission, a key holding every other one: refused exactly for lacking it
    const allBut = new Map<string, string>()
    const keyWithout = async (perm: string) => {
      if (!allBut.has(perm))
        allBut.set(
          perm,
          (
            await makeKey(
              h,
              apiKey,
              PERMISSIONS.filter((p) => p !== perm),
            )
          ).secret,
        )
      return allBut.get(perm)!
    }
    const unused = PERMISSIONS.find((p) => !ops.some(([, , op]) => op['x-svc-permission'] === p))

    for (const [m, p, op] of ops) {
      const name = `${m} ${p}`
      t.ok(allowed.has(op['x-svc-permission'] as string), `${name}: x-svc-permission ${String(op['x-svc-permission'])}`)
      t.ok(['verified', 'none'].includes(op['x-svc-schema'] as string), `${name}: x-svc-schema ${String(op['x-svc-schema'])}`)
      const perm = op['x-svc-permission'] as string
      const url = fill(p)

      // what the document says must be what the server does
      const anonymous = await h.req(m.toUpperCase(), url, null)
      if (op.security?.some((s) => 'pollSecret' in s)) {
        t.equal(perm, 'none', `${name}: the poll secret is the credential, no permission`)
      } else if (op.security && op.security.length === 0) {
        t.not(anonymous.statusCode, 401, `${name} is Auth: none`)
        t.equal(perm, 'none', `${name}: Auth none needs no permission`)
      } else {
        t.equal(anonymous.statusCode, 401, `${name} needs a credential`)
        t.equal(anonymous.json().error, 'missing_credentials')
        if (perm !== 'none') {
          t.same(
            op.security,
            [{ bearer: [perm] }, m === 'get' ? { sessionCookie: [perm] } : { sessionCookie: [perm], csrfToken: [] }],
            `${name}: permission stated in the security requirement, bearer or session cookie (with its CSRF token on a write)`,
          )
          const denied = await h.req(m.toUpperCase(), url, await keyWithout(perm), m === 'get' || m === 'delete' ? undefined : {})
          t.equal(denied.statusCode, 403, `${name} refuses a key without ${perm}`)
          t.equal(denied.json().message, `Missing permission: ${perm}`, name)
        } else if (Object.keys((op.responses as Record<string, { content?: object }>)['200']?.content ?? {}).includes('text/event-stream')) {
          // A stream never ends, so it is not injected here: cloud/test/events/eventStream.test.ts opens it with any credential.
          t.pass(`${name} needs no permission (a stream: checked over a socket)`)
        } else {
          const allowedCall = await h.req(
            m.toUpperCase(),
            url,
            unused ? (await makeKey(h, apiKey, [unused])).secret : await keyWithout(perm),
            m === 'get' || m === 'delete' ? undefined : {},
          )
          t.not(allowedCall.statusCode, 403, `${name} needs no permission`)
        }
      }
    }

    const byName = new Map(ops.map(([m, p, op]) => [`${m} ${p}`, op]))
    t.equal(byName.get('post /v1/api-keys')?.['x-svc-permission'], 'api-key.create')
    t.equal(byName.get('get /v1/api-keys/{id}')?.['x-svc-permission'], 'api-key.view')
    t.equal(byName.get('get /v1/status')?.['x-svc-permission'], 'none')
    t.same(byName.get('get /v1/status')?.security, [])
    t.equal(byName.get('get /v1/status/deprecations')?.['x-svc-permission'], 'none')
    t.equal(byName.get('get /v1/me')?.['x-svc-permission'], 'none')
    t.equal(byName.get('get /v1/me')?.security, undefined, '/v1/me takes the document-wide bearer requirement')
    t.equal(byName.get('get /v1/status')?.['x-svc-schema'], 'verified')
  })

  t.test('operations are named, tagged and described the way generators need', async (t) => {
    const h = shared
    const doc = (await h.req('GET', '/v1/openapi.json', null)).json() as Doc & { tags: { name: string; description: string }[]; servers: { url: string }[] }
    const ops = operations(doc)
    t.ok(doc.servers.length > 0, 'servers')
    const declared = new Map(doc.tags.map((x) => [x.name, x.description]))
    const ids = new Set<string>()
    for (const [m, p, op] of ops) {
      const id = op.operationId as string
      t.match(id, /^[a-z][a-zA-Z0-9]+$/, `${m} ${p}: camelCase operationId`)
      t.notOk(ids.has(id), `${id} is unique`)
      ids.add(id)
      for (const tag of op.tags as string[]) t.ok(declared.get(tag), `${m} ${p}: tag ${tag} declared with a description`)
      t.ok(
        Object.keys(op.responses as object).some((c) => c.startsWith('2')),
        `${m} ${p}: a success answer`,
      )
    }
    // names callers use: changing one breaks the generated client (cloud/src/client/schema.d.ts)
    const byId = new Map(ops.map(([m, p, op]) => [op.operationId as string, `${m} ${p}`]))
    t.same(
      [
        'listScreens',
        'getScreen',
        'updateScreen',
        'assignScreen',
        'createCast',
        'clearCast',
        'uploadMedia',
        'downloadMedia',
        'revokeApiKey',
        'pollDeviceRegistration',
      ].map((id) => byId.get(id)),
      [
        'get /v1/screens',
        'get /v1/screens/{id}',
        'patch /v1/screens/{id}',
        'post /v1/screens/{id}/assign',
        'post /v1/casts',
        'post /v1/casts/{id}/clear',
        'post /v1/media/upload',
        'get /v1/media/{id}/content',
        'post /v1/api-keys/{id}/revoke',
        'get /v1/devices/register/{id}',
      ],
    )
  })

  t.test('the document describes what the edge answers, byte bodies and real ranges', async (t) => {
    const h = shared
    const doc = (await h.req('GET', '/v1/openapi.json', null)).json() as Doc
    type Full = {
      requestBody?: { content: Record<string, { schema: Record<string, unknown> }> }
      responses: Record<string, { content?: Record<string, { schema: Record<string, unknown> }> }>
      parameters?: { name: string; in: string; schema: { pattern?: string } }[]
    }
    const op = (m: string, p: string) => doc.paths[p]![m] as unknown as Full
    for (const [m, p, o] of operations(doc)) {
      const full = o as unknown as Full
      if (full.requestBody?.content['application/json']) for (const code of ['400', '413', '415']) t.ok(full.responses[code], `${m} ${p}: ${code}`)
    }
    const upload = op('post', '/v1/media/upload').requestBody!.content['multipart/form-data']!.schema as {
      properties: Record<string, { format?: string }>
      required: string[]
    }
    t.equal(upload.properties.file!.format, 'binary')
    t.same(upload.required, ['file'])
    t.equal(op('put', '/v1/media/upload/multipart/{id}/parts/{n}').requestBody!.content['application/octet-stream']!.schema.format, 'binary')
    const download = op('get', '/v1/media/{id}/content')
    for (const code of ['200', '206']) {
      // served as the type its bytes were recognised as at upload: each allowed one listed
      t.same(Object.keys(download.responses[code]!.content!).sort(), Object.keys(ALLOWED_TYPES).sort(), `download ${code}: the media types`)
      for (const c of Object.values(download.responses[code]!.content!)) t.equal(c.schema.format, 'binary', `download ${code}`)
    }
    t.ok(download.parameters!.some((x) => x.name === 'Range' && x.in === 'header'))
    for (const code of ['409']) for (const p of ['/v1/api-keys/{id}/revoke', '/v1/api-keys/{id}/rotate']) t.ok(op('post', p).responses[code], `${p} ${code}`)
    t.ok(op('delete', '/v1/api-keys/{id}').responses['409'])
    t.ok(op('get', '/v1/status').responses['422'], '?format= is validated')
    t.same((doc.paths['/v1/devices/register/{id}']!.get as Op).security, [{ pollSecret: [] }])
    // limit patterns accept exactly the range the server takes
    const limit = (m: string, p: string) => new RegExp(op(m, p).parameters!.find((x) => x.name === 'limit')!.schema.pattern!)
    for (const [p, max] of [
      ['/v1/screens', 500],
      ['/v1/media', 500],
      ['/v1/webhooks/deliveries', 200],
      ['/v1/casts', 500],
    ] as const) {
      const re = limit('get', p)
      t.ok(re.test('1') && re.test(String(max)) && !re.test('0') && !re.test(String(max + 1)) && !re.test('abc'), `${p}: limit 1..${max}`)
    }
    const over = await h.req('GET', '/v1/screens?limit=501', (await h.workspace()).apiKey)
    t.same(over.json(), { error: 'validation_error', message: 'querystring.limit must be an integer from 1 to 500.' })
  })

  t.test('every route registered under /v1 is in the document, and nothing else is', async (t) => {
    const h = shared
    const doc = (await h.req('GET', '/v1/openapi.json', null)).json() as Doc
    const registered = registeredRoutes(h.app)
    // the parser itself must see the routes, or this test would pass on nothing
    for (const r of [
      'POST /v1/api-keys',
      'DELETE /v1/nodes/:id',
      'GET /v1/status/deprecations',
      'POST /v1/api-keys/:id/rotate',
      'GET /v1/openapi.json',
      'GET /v1/docs',
    ]) {
      t.ok(registered.has(r), `printRoutes shows ${r}`)
    }
    const expected = new Set<string>()
    for (const r of registered) {
      const [method, url] = r.split(' ') as [string, string]
      if (!url.startsWith('/v1/') || url.startsWith('/v1/docs') || url === '/v1/openapi.json') continue
      if (method === 'HEAD') continue // Fastify's automatic HEAD for each GET
      expected.add(`${method.toLowerCase()} ${openApiPath(url)}`)
    }
    t.ok(expected.size >= 16, `${expected.size} routes`)
    const documented = new Set(
      operations(doc)
        .filter(([, p]) => p.startsWith('/v1/'))
        .map(([m, p]) => `${m} ${p}`),
    )
    for (const r of expected) t.ok(documented.has(r), `${r} is documented`)
    for (const r of documented) t.ok(expected.has(r), `${r} is a registered route`)
    t.notOk(
      [...documented].some((r) => r.includes('/v1/docs') || r.includes('openapi.json')),
      'docs routes stay out of the document',
    )
  })

  t.test('the docs page answers HTML without a credential', async (t) => {
    const h = shared
    const page = await h.req('GET', '/v1/docs', null)
    t.equal(page.statusCode, 200)
    t.match(page.headers['content-type'], /^text\/html/)
    t.match(page.body, /<html/i)

    // the static index redirects to the page; follow it by hand
    let url = '/v1/docs/static/index.html'
    let res = await h.req('GET', url, null)
    for (let hops = 0; res.statusCode >= 300 && res.statusCode < 400 && hops < 5; hops++) {
      url = new URL(String(res.headers.location), `http://localhost${url}`).pathname
      res = await h.req('GET', url, null)
    }
    t.equal(res.statusCode, 200)
    t.match(res.headers['content-type'], /^text\/html/)

    // its assets and the document it loads are public too
    const initializer = await h.req('GET', '/v1/docs/static/swagger-initializer.js', null)
    t.equal(initializer.statusCode, 200)
    const css = await h.req('GET', '/v1/docs/static/swagger-ui.css', null)
    t.equal(css.statusCode, 200)
    t.match(css.headers['content-type'], /css/)
    const json = await h.req('GET', '/v1/docs/json', null)
    t.equal(json.statusCode, 200)
    t.equal(json.json().paths['/v1/api-keys'].post['x-svc-permission'], 'api-key.create', 'the docs page shows the same extensions')
  })

  t.test('a path of the document asked with a method it does not list: 405 method_not_allowed, Allow naming what it takes', async (t) => {
    const h = shared
    const { apiKey } = await h.workspace()
    const doc = (await h.req('GET', '/v1/openapi.json', null)).json() as Doc
    // The document's path templates as patterns: `/v1/screens/bulk-assign` is also `/v1/screens/{id}`.
    const templates = Object.entries(doc.paths).map(([p, item]) => ({
      path: p,
      re: new RegExp(`^${p.replace(/\{[^}]+\}/g, '[^/]+')}$`),
      methods: Object.keys(item).filter((m) => HTTP_METHODS.includes(m)),
    }))
    const withHead = (methods: string[]) => [...new Set([...methods, ...(methods.includes('get') ? ['head'] : [])])].map((m) => m.toUpperCase()).sort()
    let checked = 0
    let beside = 0
    for (const p of Object.keys(doc.paths)) {
      const url = fill(p)
      const matching = templates.filter((x) => x.re.test(url))
      // A method no matching template lists is refused (one a `{id}` template beside this path
      // lists goes to that route, as the router does)...
      const listed = withHead(matching.flatMap((x) => x.methods))
      // ...and Allow names what this path itself takes, and HEAD wherever GET is (served with it).
      const allow = withHead(templates.find((x) => x.path === p)!.methods)
      if (matching.length > 1 && !p.endsWith('}')) beside++
      for (const m of ['GET', 'PUT', 'POST', 'PATCH', 'DELETE', 'OPTIONS']) {
        if (listed.includes(m)) continue
        const res = await h.req(m, url, apiKey)
        checked++
        t.equal(res.statusCode, 405, `${m} ${p}`)
        t.same(Object.keys(res.json()).sort(), ['error', 'message'], `${m} ${p}: the envelope`)
        t.equal(res.json().error, 'method_not_allowed', `${m} ${p}`)
        t.equal(res.headers.allow, allow.join(', '), `${m} ${p}: Allow`)
      }
    }
    t.ok(checked > 100, `${checked} wrong methods asked`)
    t.ok(beside >= 6, `${beside} fixed paths beside a {id} path name their own methods`)
    // One by name: bulk-assign takes POST only, not the methods of /v1/screens/{id}.
    const bulk = await h.req('PUT', '/v1/screens/bulk-assign', apiKey)
    t.equal(bulk.statusCode, 405)
    t.equal(bulk.headers.allow, 'POST', 'PUT /v1/screens/bulk-assign: Allow POST')
    // A path the document does not have is still 404, whatever the method.
    for (const m of ['GET', 'PUT', 'OPTIONS']) {
      const res = await h.req(m, '/v1/no-such-thing', apiKey)
      t.equal(res.statusCode, 404, `${m} on an unknown path`)
      t.equal(res.headers.allow, undefined)
    }
    t.match((doc as unknown as { info: { description: string } }).info.description, /405 `method_not_allowed`/, 'the document says so')
  })

  t.test('answers given before any route are documented: 414 on every operation with a path parameter, 431 on every one', async (t) => {
    const h = shared
    const { apiKey } = await h.workspace()
    const doc = (await h.req('GET', '/v1/openapi.json', null)).json() as Doc & {
      components: { responses: Record<string, { description: string; content: Record<string, unknown> }> }
    }
    const ref = (name: string) => ({ $ref: `#/components/responses/${name}` })
    for (const name of ['UriTooLong', 'RequestHeadersTooLarge'])
      t.same(Object.keys(doc.components.responses[name]!.content), ['application/json'], `${name}: the envelope`)
    let withParam = 0
    for (const [m, p, op] of operations(doc)) {
      const responses = op.responses as Record<string, unknown>
      t.same(responses['431'], ref('RequestHeadersTooLarge'), `${m} ${p}: 431`)
      if (!p.includes('{')) continue
      withParam++
      t.same(responses['414'], ref('UriTooLong'), `${m} ${p}: 414`)
      for (const code of ['400', '404']) t.ok(responses[code], `${m} ${p}: ${code} (a malformed %-escape; no such id)`)
      // and the server does answer 414 there, in the envelope
      const res = await h.req(m.toUpperCase(), p.replace(/\{[^}]+\}/g, 'x'.repeat(101)), apiKey)
      t.equal(res.statusCode, 414, `${m} ${p}: a 101-character id`)
      t.same(res.json(), { error: 'too_large', message: 'A path segment is over 100 characters; no id is that long.' })
    }
    t.ok(withParam > 100, `${withParam} operations with a path parameter`)
    // 100 characters are still an id: looked up, not refused.
    t.equal((await h.req('GET', `/v1/screens/${'x'.repeat(100)}`, apiKey)).statusCode, 404)
  })

  t.test('every write documents what the edge answers about a body, body-less ones included', async (t) => {
    const h = shared
    const { apiKey } = await h.workspace()
    const doc = (await h.req('GET', '/v1/openapi.json', null)).json() as Doc
    const bodyless: [string, string][] = []
    for (const [m, p, op] of operations(doc)) {
      if (!['post', 'put', 'patch', 'delete'].includes(m)) continue
      for (const code of ['400', '413', '415']) t.ok((op.responses as Record<string, unknown>)[code], `${m} ${p}: ${code}`)
      if (!op.requestBody) bodyless.push([m, p])
    }
    t.ok(bodyless.length >= 30, `${bodyless.length} writes without a body`)
    // What a body-less write answers to a body it does not read: broken JSON 400, another type 415.
    const [m, p] = bodyless.find(([, p]) => p === '/v1/casts/{id}/clear')!
    const send = (payload: string, type: string) =>
      h.app.inject({ method: m.toUpperCase() as 'POST', url: fill(p), headers: { authorization: `Bearer ${apiKey}`, 'content-type': type }, payload })
    t.match((await send('{garbage', 'application/json')).json(), { error: 'bad_request' })
    t.equal((await send('{garbage', 'application/json')).statusCode, 400)
    t.equal((await send('hello', 'text/plain')).statusCode, 415)
    t.equal((await send('{}', 'application/json')).statusCode, 404, 'a JSON body is read and ignored: the cast is looked up')
  })

  t.test('every property of every request body has a schema with a type', async (t) => {
    const h = shared
    const doc = (await h.req('GET', '/v1/openapi.json', null)).json() as Doc
    type S = Record<string, unknown> & { properties?: Record<string, S>; items?: S; anyOf?: S[]; oneOf?: S[]; allOf?: S[] }
    const typed = (s: S): boolean =>
      'type' in s ||
      'const' in s ||
      'enum' in s ||
      '$ref' in s ||
      [s.anyOf, s.oneOf, s.allOf].some((xs) => Array.isArray(xs) && xs.length > 0 && xs.every(typed))
    const untyped: string[] = []
    const walk = (s: S, where: string) => {
      if (!typed(s)) untyped.push(where)
      for (const [k, v] of Object.entries(s.properties ?? {})) walk(v, `${where}.${k}`)
      if (s.items) walk(s.items, `${where}[]`)
      for (const x of [...(s.anyOf ?? []), ...(s.oneOf ?? []), ...(s.allOf ?? [])]) walk(x, where)
    }
    for (const [m, p, op] of operations(doc)) {
      const body = (op.requestBody as { content?: Record<string, { schema: S }> } | undefined)?.content
      for (const [type, { schema }] of Object.entries(body ?? {})) walk(schema, `${m} ${p} (${type}) body`)
    }
    t.same(untyped, [], 'no untyped field')
    const preset = (doc.paths['/v1/serial-templates']!.post as { requestBody: { content: Record<string, { schema: S }> } }).requestBody.content[
      'application/json'
    ]!.schema.properties!.preset!
    t.equal(preset.type, 'object')
    t.same(Object.keys(preset.properties!).sort(), ['keys', 'protocol', 'setId'])
  })

  t.test('the document and the server agree: the rollout page size, the invite password, a JSON null on recall', async (t) => {
    const h = shared
    const { apiKey } = await h.workspace()
    const doc = (await h.req('GET', '/v1/openapi.json', null)).json() as Doc
    type Full = { parameters?: { name: string; schema: { pattern?: string } }[]; requestBody?: { content: Record<string, { schema: JsonSchema }> } }
    type JsonSchema = { properties?: Record<string, { minLength?: number; maxLength?: number }> }
    const op = (m: string, p: string) => doc.paths[p]![m] as unknown as Full

    // GET /v1/agent-rollouts: the pattern of `limit` takes exactly what the server takes.
    const limit = new RegExp(op('get', '/v1/agent-rollouts').parameters!.find((x) => x.name === 'limit')!.schema.pattern!)
    for (const n of [1, 50, 200, 201, 500]) {
      const res = await h.req('GET', `/v1/agent-rollouts?limit=${n}`, apiKey)
      t.equal(limit.test(String(n)), res.statusCode === 200, `limit=${n}: documented ${limit.test(String(n))}, answered ${res.statusCode}`)
    }
    t.same((await h.req('GET', '/v1/agent-rollouts?limit=201', apiKey)).json(), {
      error: 'validation_error',
      message: 'querystring.limit must be an integer from 1 to 200.',
    })

    // POST /v1/invites/accept: the password's documented length is the one the server wants.
    const password = op('post', '/v1/invites/accept').requestBody!.content['application/json']!.schema.properties!.password!
    t.same([password.minLength, password.maxLength], [12, 1024], 'a password of 12 to 1024 characters')
    const invite = async (email: string) => {
      const res = await h.req('POST', '/v1/users', apiKey, { email, role: 'admin', name: 'Ada' })
      return String(res.json().data.inviteUrl).split('#token=')[1]!
    }
    const token = await invite('ada@example.com')
    for (const [pw, status] of [
      ['x'.repeat(11), 422],
      ['x'.repeat(1025), 422],
      ['x'.repeat(4096), 422],
    ] as const) {
      const res = await h.req('POST', '/v1/invites/accept', null, { token, password: pw })
      t.equal(res.statusCode, status, `a password of ${pw.length} characters: ${status}`)
    }
    t.same((await h.req('POST', '/v1/invites/accept', null, { token, password: 'x'.repeat(1025) })).json(), {
      error: 'validation_error',
      message: 'body.password must be at most 1024 characters.',
    })
    // 1024 characters of a password that is not trivially weak (weak ones are refused apart from their length).
    const longest = 'Correct horse battery staple 7! '.repeat(32)
    t.equal(longest.length, 1024)
    t.equal((await h.req('POST', '/v1/invites/accept', null, { token, password: longest })).statusCode, 200, '1024 characters: accepted')

    // Recall: no body is no reason; a JSON null is a body that is not an object: 422.
    const recalls = Object.keys(doc.paths).filter((p) => p.endsWith('/recall'))
    t.ok(recalls.length >= 4, `${recalls.length} recall routes`)
    for (const p of recalls) {
      const url = fill(p)
      const nul = await h.app.inject({
        method: 'POST',
        url,
        headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
        payload: 'null',
      })
      t.equal(nul.statusCode, 422, `POST ${p} with a JSON null: 422`)
      t.equal(nul.json().error, 'validation_error', `POST ${p} with a JSON null`)
      t.equal((await h.req('POST', url, apiKey)).statusCode, 404, `POST ${p} without a body: read as no reason (the item is looked up)`)
    }
  })

  t.test('binary downloads document a typed byte body for each type they are served as', async (t) => {
    const h = shared
    const doc = (await h.req('GET', '/v1/openapi.json', null)).json() as Doc
    type Answer = { content?: Record<string, { schema: { type?: string; format?: string } }> }
    const downloads: [string, string[]][] = [
      ['/v1/media/{id}/content', ['200', '206']],
      ['/v1/screenshots/{id}/image', ['200']],
      ['/v1/screenshots/{id}/thumbnail', ['200']],
      ['/v1/devices/agent-releases/{id}/tarball', ['200']],
      ['/v1/play-log.csv', ['200']],
    ]
    for (const [p, codes] of downloads) {
      const responses = (doc.paths[p]!.get as { responses: Record<string, Answer> }).responses
      for (const code of codes) {
        const content = responses[code]?.content ?? {}
        t.ok(Object.keys(content).length > 0, `GET ${p} ${code}: a media type`)
        for (const [type, c] of Object.entries(content)) t.same(c.schema, { type: 'string', format: 'binary' }, `GET ${p} ${code} ${type}: bytes`)
      }
    }
    t.ok(Object.keys((doc.paths['/v1/play-log.csv']!.get as { responses: Record<string, Answer> }).responses['200']!.content!).includes('text/csv'))
  })

  t.test('the session cookie and its CSRF header are in the document, as the server takes them', async (t) => {
    const h = shared
    const { apiKey } = await h.workspace()
    const doc = (await h.req('GET', '/v1/openapi.json', null)).json() as Doc & {
      security: Record<string, string[]>[]
      components: { securitySchemes: Record<string, { type: string; in?: string; name?: string }> }
    }
    const schemes = doc.components.securitySchemes
    t.match(schemes.sessionCookie, { type: 'apiKey', in: 'cookie', name: SESSION_COOKIE })
    t.match(schemes.csrfToken, { type: 'apiKey', in: 'header', name: CSRF_HEADER })
    t.same(doc.security, [{ bearer: [] }, { sessionCookie: [] }], 'the document-wide requirement: bearer or the session cookie')
    // Every write that takes a credential offers the cookie with its CSRF token.
    let writes = 0
    for (const [m, p, op] of operations(doc)) {
      if (
        !p.startsWith('/v1/') ||
        m === 'get' ||
        (op.security && op.security.length === 0) ||
        op.security?.some((s) => 'pollSecret' in s || 'deviceCredential' in s)
      )
        continue
      writes++
      t.ok(
        op.security?.some((s) => 'sessionCookie' in s && 'csrfToken' in s),
        `${m} ${p}: the session cookie with its CSRF header`,
      )
    }
    t.ok(writes > 50, `${writes} writes`)

    // As documented: a signed-in console user's write needs the header with the cookie.
    const invite = await h.req('POST', '/v1/users', apiKey, { email: 'ada@example.com', role: 'admin', name: 'Ada' })
    const token = String(invite.json().data.inviteUrl).split('#token=')[1]!
    const accepted = await h.req('POST', '/v1/invites/accept', null, { token, password: 'correct horse battery' })
    const session = (accepted.cookies as { name: string; value: string }[]).find((c) => c.name === SESSION_COOKIE)!.value
    const csrf = accepted.json().data.csrfToken as string
    const write = (headers: Record<string, string>) =>
      h.app.inject({ method: 'POST', url: '/v1/media-folders', headers: { cookie: `${SESSION_COOKIE}=${session}`, ...headers }, payload: { name: 'F' } })
    t.equal((await write({})).statusCode, 403, 'the cookie alone: 403')
    t.equal((await write({ [CSRF_HEADER]: csrf })).statusCode, 201, 'the cookie and its CSRF header: done')
    const read = await h.app.inject({ method: 'GET', url: '/v1/media-folders', headers: { cookie: `${SESSION_COOKIE}=${session}` } })
    t.equal(read.statusCode, 200, 'a read needs the cookie only')
  })
})

t.test('what is served is what the document says: status as text, a media download as its own type, nosniff everywhere', async (t) => {
  const h = await build(t, { dataDir: fs.mkdtempSync(path.join(os.tmpdir(), 'svc-openapi-')) })
  t.after(() => fs.rmSync(servicesOf(h.app).config.dataDir, { recursive: true, force: true }))
  const { apiKey } = await h.workspace()
  const doc = (await h.req('GET', '/v1/openapi.json', null)).json() as Doc
  type Answer = { content?: Record<string, unknown> }
  const documented = (m: string, p: string, code: number) =>
    Object.keys((doc.paths[p]![m] as { responses: Record<string, Answer> }).responses[String(code)]?.content ?? {})
  const typeOf = (res: { headers: Record<string, unknown> }) => String(res.headers['content-type']).split(';')[0]!

  const text = await h.req('GET', '/v1/status?format=text', null)
  t.equal(text.statusCode, 200)
  t.equal(typeOf(text), 'text/plain')
  t.ok(documented('get', '/v1/status', 200).includes('text/plain'), 'GET /v1/status documents text/plain')
  t.ok(documented('get', '/v1/status', 200).includes('application/json'), 'and JSON')

  const f = form({ file: { filename: 'a.png', data: PNG_1x1, type: 'image/png' } })
  const up = await h.app.inject({ method: 'POST', url: '/v1/media/upload', headers: { authorization: `Bearer ${apiKey}`, ...f.headers }, payload: f.payload })
  t.equal(up.statusCode, 201)
  const url = `/v1/media/${up.json().data.id}/content`
  const whole = await h.req('GET', url, apiKey)
  t.equal(whole.statusCode, 200)
  t.equal(typeOf(whole), 'image/png', 'served as the type sniffed at upload')
  t.ok(documented('get', '/v1/media/{id}/content', 200).includes('image/png'), 'and documented as such')
  t.notOk(documented('get', '/v1/media/{id}/content', 200).includes('application/octet-stream'), 'not as a type it is never served as')
  const part = await h.req('GET', url, apiKey, undefined, { range: 'bytes=0-7' })
  t.equal(part.statusCode, 206)
  t.ok(documented('get', '/v1/media/{id}/content', 206).includes(typeOf(part)), '206 too')

  // nosniff on every answer: JSON, text, bytes, errors, an unknown path, a wrong method, an over-long id
  for (const res of [
    text,
    whole,
    part,
    await h.req('GET', '/v1/me', apiKey),
    await h.req('GET', '/v1/me', null),
    await h.req('GET', '/v1/nope', null),
    await h.req('PUT', '/v1/me', null),
    await h.req('GET', `/v1/screens/${'x'.repeat(101)}`, apiKey),
    await h.req('GET', '/v1/screens/%ZZ', apiKey),
    await h.req('GET', '/v1/docs', null),
  ])
    t.equal(res.headers['x-content-type-options'], 'nosniff', `${res.statusCode} ${typeOf(res)}`)
})

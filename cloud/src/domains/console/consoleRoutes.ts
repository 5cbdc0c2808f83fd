// The operator console, served by the cloud on the same origin as /v1: `/` leads to
// /console/, the built files (app.js, app.css) are served as they are, and every other path
// under /console/ answers index.html, so a deep link (/console/screens/scr_…) opens its page.
// Every answer carries a Content-Security-Policy without inline scripts or styles: the page
// loads only its own script and stylesheet and talks only to its own origin.
import fs from 'node:fs'
import path from 'node:path'
import fastifyStatic from '@fastify/static'
import type { FastifyInstance, FastifyReply } from 'fastify'
import type { Config } from '../../config.js'

export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data: blob:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ')

function secure(reply: FastifyReply): void {
  reply.header('content-security-policy', CONSOLE_CSP)
  reply.header('x-frame-options', 'DENY')
  reply.header('referrer-policy', 'same-origin')
}

export function consoleRoutes(config: Pick<Config, 'consoleDir'>) {
  return async (app: FastifyInstance): Promise<void> => {
    const dir = config.consoleDir
    const index = path.join(dir, 'index.html')
    const built = fs.existsSync(index)

    app.get('/', { config: { auth: 'none' }, schema: { hide: true } }, async (_req, reply) => reply.redirect('/console/', 302))
    app.get('/console', { config: { auth: 'none' }, schema: { hide: true } }, async (_req, reply) => reply.redirect('/console/', 302))

    if (!built) {
      app.get('/console/*', { config: { auth: 'none' }, schema: { hide: true } }, async (_req, reply) => {
        secure(reply)
        return reply
          .code(503)
          .type('text/plain; charset=utf-8')
          .send(
            `The console is not built (no ${index}): \`pnpm start\` builds it, or run node -e "import('./cloud/console/build.mjs').then(m => m.buildConsole())".\n`,
          )
      })
      return
    }

    await app.register(fastifyStatic, {
      root: dir,
      prefix: '/console/',
      wildcard: false,
      index: false,
      cacheControl: false,
      allowedPath: (p) => !p.endsWith('inputs.json'),
      setHeaders: (reply) => {
        secure(reply)
        // Names are not hashed: ask again each time (an ETag makes that cheap).
        reply.header('cache-control', 'no-cache')
      },
    })
    const page = fs.readFileSync(index)
    const sendPage = async (_req: unknown, reply: FastifyReply) => {
      secure(reply)
      return reply.header('cache-control', 'no-cache').type('text/html; charset=utf-8').send(page)
    }
    app.get('/console/', { config: { auth: 'none' }, schema: { hide: true } }, sendPage)
    app.get('/console/*', { config: { auth: 'none' }, schema: { hide: true } }, sendPage)
  }
}

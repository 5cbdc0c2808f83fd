// Every plugin the app registers has a name fastify takes as it is (platform/http/plugins.ts):
// none is left for fastify to look for among the loaded modules' exports and then describe by
// its source's first lines, the walk of require.cache that was the largest single cost of a
// boot. Fastify's naming is watched where it is done, on the plugins of one real boot.
import { createRequire } from 'node:module'
import t from 'tap'
import { build } from '../helpers.js'

const requireFromCloud = createRequire(new URL('../../package.json', import.meta.url))
const pluginUtils = requireFromCloud(requireFromCloud.resolve('fastify/lib/plugin-utils.js')) as { getPluginName: (fn: object) => string | null }
const DISPLAY_NAME = Symbol.for('fastify.display-name')

t.test("the app's plugins are named without fastify searching the loaded modules", async (t) => {
  const original = pluginUtils.getPluginName
  const named: string[] = []
  const searched: string[] = []
  pluginUtils.getPluginName = (fn) => {
    const name = original(fn)
    const display = (fn as { [DISPLAY_NAME]?: string })[DISPLAY_NAME]
    if (display) named.push(display)
    else searched.push(name ?? String(fn).split('\n', 2).join(' -- '))
    return name
  }
  try {
    await build(t)
  } finally {
    pluginUtils.getPluginName = original
  }
  for (const plugin of ['v1Routes', 'meRoutes', 'screenRoutes', 'auditRoutes', 'scimRoutes', 'consoleRoutes', 'docsPages'])
    t.ok(named.includes(plugin), `${plugin} is named`)
  t.ok(named.length >= 38, `every plugin of the app is named (${named.length})`)
  // What is left is a package's own plugin that fastify finds among its module's exports
  // (swagger-ui's static files): each found by name, none described by its source.
  t.same(
    searched.filter((name) => !name.includes('node_modules')),
    [],
    'no plugin is left to be described by its source',
  )
})

// A name for a plugin the app registers. Fastify names every registered plugin (for its plugin
// tree and its errors); for a plugin without a display name it first looks for it among every
// loaded module's exports, a walk of `require.cache` (about 1,000 modules) done twice per
// registration, which was the largest single cost of starting the app. A display name is
// taken as it is. The plugin stays encapsulated (this is not fastify-plugin's skip-override).
const DISPLAY_NAME = Symbol.for('fastify.display-name')

export function named<P extends object>(name: string, plugin: P): P {
  ;(plugin as { [DISPLAY_NAME]?: string })[DISPLAY_NAME] = name
  return plugin
}

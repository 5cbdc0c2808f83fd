// What the cloud uses of the console: the route plugin serving the built files.
export { CONSOLE_CSP, consoleRoutes } from './consoleRoutes.js'

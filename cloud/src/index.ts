export { buildApp, type AppDeps } from './app.js'
export { startServer } from './server.js'
export { loadConfig, testConfig, type Config } from './config.js'
export { ManualClock, systemClock, type Clock } from './platform/clock.js'

export * from './ids.js'
export * from './permissions.js'
export * from './logging.js'
export * from './time.js'

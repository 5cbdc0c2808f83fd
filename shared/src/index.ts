export * from './ids.js'
export * from './permissions.js'

// Public entry of the MQTT contract v1: topics, message schemas/types, parsers.
export * from './topics.js'
export * from './messages.js'
export * from './parse.js'

export * from './SerialEncodingError.js'
export * from './encoding.js'

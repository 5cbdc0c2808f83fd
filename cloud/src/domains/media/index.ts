// What other domains use of media: its public surface. The module that wires it is in module.ts.
export { ALLOWED_TYPES as UPLOAD_TYPES } from './sniff.js'
export type { MediaStore, StagedFile } from './MediaStore.js'
export { checkPng } from './png.js'
export { imageThumbnail } from './thumbnail.js'
export type { MediaService } from './MediaService.js'
export type { MediaUrlSigner } from './MediaUrlSigner.js'
export type { MediaUrlRefreshWorker } from './MediaUrlRefreshWorker.js'

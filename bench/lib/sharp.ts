// sharp as the cloud has it (the benches make their pictures with the library that makes
// thumbnails), loaded from the cloud's package, typed as far as the benches use it.
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { ROOT } from './harness.js'

export interface Picture {
  png(): Picture
  jpeg(o: { quality: number }): Picture
  resize(width: number, height: number, o?: { kernel?: 'nearest' | 'linear' | 'cubic' | 'lanczos3' }): Picture
  blur(sigma: number): Picture
  composite(layers: { input: Buffer; left: number; top: number }[]): Picture
  toBuffer(): Promise<Buffer>
}

type Create = {
  create: {
    width: number
    height: number
    channels: 3
    background?: { r: number; g: number; b: number }
    noise?: { type: 'gaussian'; mean: number; sigma: number }
  }
}

export const sharp = createRequire(join(ROOT, 'cloud', 'package.json'))('sharp') as (input: Buffer | Create) => Picture

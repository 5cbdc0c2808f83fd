// Disk use of the filesystem holding the data dir, for `reported.storage` (the cloud's
// storage-critical alert reads it).
import { promises as fs } from 'node:fs'
import type { StorageReport } from '@svc/shared/mqtt/index'

export type StorageProbe = (dir: string) => Promise<StorageReport | null>

export const statfsStorage: StorageProbe = async (dir) => {
  try {
    const s = await fs.statfs(dir)
    const total = s.blocks * s.bsize
    const used = (s.blocks - s.bfree) * s.bsize
    return { usedBytes: Math.max(0, Math.round(used)), totalBytes: Math.max(0, Math.round(total)) }
  } catch {
    return null
  }
}

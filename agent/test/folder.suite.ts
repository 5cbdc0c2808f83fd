import { runFolder } from '@svc/shared/testing/folderSuite'

// The subfolders that have no suite of their own (playback, serial, unit): a few seconds' tests each, one process.
await runFolder(import.meta.url, { recursive: true })

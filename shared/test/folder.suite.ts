import { runFolder } from '@svc/shared/testing/folderSuite'

// The shared package's tests are small: one process for all of its folders.
await runFolder(import.meta.url, { recursive: true })

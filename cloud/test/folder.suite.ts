import { runFolder } from '@svc/shared/testing/folderSuite'

// With the subfolders that have no suite of their own: folders of a few seconds' tests share this process.
await runFolder(import.meta.url, { recursive: true })

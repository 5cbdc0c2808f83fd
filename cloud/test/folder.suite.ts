import { runFolder } from '@svc/shared/testing/folderSuite'

// This folder's own files; its subfolders without a suite of their own run in domains.suite.ts.
await runFolder(import.meta.url)

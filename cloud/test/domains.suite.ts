import { runFolder } from '@svc/shared/testing/folderSuite'

// The subfolders of cloud/test that have no suite of their own (the domains whose tests take a
// few seconds each: agent logs, alerts, audit, reports…), in one process; the folder's own
// files run in folder.suite.ts. Together they were the run's longest process and ended it alone.
await runFolder(import.meta.url, { recursive: 'subfolders' })

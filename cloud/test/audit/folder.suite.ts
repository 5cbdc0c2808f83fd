import { runFolder } from '@svc/shared/testing/folderSuite'

await runFolder(import.meta.url)

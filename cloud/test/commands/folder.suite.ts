import { runFolder } from '@svc/shared/testing/folderSuite'

// Its files start real clouds and CLIs one after another.
await runFolder(import.meta.url)

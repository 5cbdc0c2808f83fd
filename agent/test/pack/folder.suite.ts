import { runFolder } from '@svc/shared/testing/folderSuite'

// Each file packs the agent (a bundle, a tarball, a .deb) and runs it: minutes on a busy machine.
await runFolder(import.meta.url)

import t from 'tap'
import { runFolder } from '@svc/shared/testing/folderSuite'

// Its files start real clouds and CLIs one after another: on a busy 2-core machine they
// need more than tap's 120 s per process (a hang guard, as the tests' own bounds are).
t.setTimeout(10 * 60_000)

await runFolder(import.meta.url)

import { runFolder } from '../suite.js'

await runFolder(import.meta.url, { part: 1, of: 2 })

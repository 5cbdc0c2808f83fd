import { runFolder } from '../suite.js'

await runFolder(import.meta.url, { part: 2, of: 2 })

import { runFolder } from '../suite.js'

await runFolder(import.meta.url)

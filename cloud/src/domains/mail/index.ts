// What other domains use of mail: its public surface. The module that wires it is in module.ts.
export type { Mailer } from './Mailer.js'

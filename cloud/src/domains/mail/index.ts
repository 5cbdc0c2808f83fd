// Mail to owners and alert recipients: SMTP when configured, the mail outbox table always.
import { defineModule } from '../../platform/modules.js'
import type { DomainProvisions as D, PlatformProvisions as P } from '../provisions.js'
import { Mailer } from './Mailer.js'

export const mailModule = defineModule<Pick<P, 'db' | 'clock' | 'config' | 'log' | 'releaseSteps' | 'housekeeping'>, Pick<D, 'mailer'>>({
  name: 'mail',
  needs: { db: true, clock: true, config: true, log: true, releaseSteps: true, housekeeping: true },
  provides: { mailer: true },
  create: ({ db, clock, config, log, releaseSteps, housekeeping }) => {
    const mailer = new Mailer(db, clock, { smtpUrl: config.smtpUrl, from: config.smtpFrom }, log)
    // Alert mail caused by the broker's last drops is still sent.
    releaseSteps.add('mailer', () => mailer.close())
    housekeeping.add({ name: 'sent mail', run: () => mailer.purgeSent() })
    return { mailer }
  },
})

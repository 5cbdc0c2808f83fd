// Mail to owners and alert recipients: SMTP when configured, the mail outbox table always.
import { domainModule } from '../../platform/provisions.js'
import { Mailer } from './Mailer.js'

export const mailModule = domainModule({
  name: 'mail',
  needs: ['db', 'clock', 'config', 'log', 'releaseSteps', 'housekeeping'],
  provides: ['mailer'],
  create: ({ db, clock, config, log, releaseSteps, housekeeping }) => {
    const mailer = new Mailer(db, clock, { smtpUrl: config.smtpUrl, from: config.smtpFrom }, log)
    // Alert mail caused by the broker's last drops is still sent.
    releaseSteps.add('mailer', () => mailer.close())
    housekeeping.add({ name: 'sent mail', run: () => mailer.purgeSent() })
    return { mailer }
  },
})

import type { Migration } from './Migration.js'

export default {
  version: 580,
  name: 'sign-in device user',
  statements: [
    // The account a device cookie was earned on: it exempts its browser from the strangers'
    // counts only for sign-ins to that account (null: a cookie from before, exempting none).
    `ALTER TABLE sign_in_devices ADD COLUMN user_id TEXT`,
  ],
} satisfies Migration

// The agent's panel link: DisplayDriver (port, framing, retries, reopen), SerialJobRunner
// (serial jobs → job results) and PanelPoller (power state for `reported.panel`).
export * from './PanelPort.js'
export * from './CecCtlPort.js'
export * from './DisplayDriver.js'
export * from './SerialJobRunner.js'
export * from './PanelPoller.js'

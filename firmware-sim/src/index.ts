/** firmware-sim: a simulated display panel for installers and tests. Test doubles live in ./testing. */
export * from './Clock.js'
export * from './PanelModel.js'
export * from './faults.js'
export * from './trace.js'
export * from './personalities/index.js'
export * from './SimulatedPanel.js'
export * from './transports/Transport.js'
export * from './transports/TcpTransport.js'
export * from './transports/SerialTransport.js'
export * from './transports/PtyTransport.js'
export * from './WebView.js'
export * from './FirmwareSim.js'
export { runTemplate, parseTemplateJson, formatResult } from './runTemplate.js'
export type {
  RunTemplateOptions,
  RunTemplateResult,
  TemplateCommandResult,
  SerialTemplateLike,
  TemplateItem,
  CommandOutcome,
} from './runTemplate.js'

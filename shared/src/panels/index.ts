import { Cec } from './Cec.js'
import { LgCommercial } from './LgCommercial.js'
import { NecLfd } from './NecLfd.js'
import type { PanelProtocol, PanelProtocolName } from './PanelProtocol.js'
import { PjLink } from './PjLink.js'
import { SamsungMdc } from './SamsungMdc.js'

export * from './PanelProtocolError.js'
export * from './PanelProtocol.js'
export * from './Framer.js'
export * from './Raw.js'
export * from './SamsungMdc.js'
export * from './LgCommercial.js'
export * from './NecLfd.js'
export * from './PjLink.js'
export * from './Cec.js'
export * from './presets.js'

export const panelProtocols: Readonly<Record<PanelProtocolName, PanelProtocol>> = {
  'samsung-mdc': SamsungMdc,
  lg: LgCommercial,
  nec: NecLfd,
  pjlink: PjLink,
  cec: Cec,
}

/** A protocol name, or `raw` for templates sent without framing. */
export type PanelProtocolOrRaw = PanelProtocolName | 'raw'

export function isPanelProtocolName(v: unknown): v is PanelProtocolName {
  return typeof v === 'string' && Object.hasOwn(panelProtocols, v)
}

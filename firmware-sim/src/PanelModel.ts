/**
 * The simulated panel's state: power, input, volume, mute and set id. Emits
 * `change` with one field at a time, so a trace or a web page can show what a
 * command did. Protocol-neutral: inputs are PanelInput names ("hdmi1") or a
 * protocol's own code written "0x20" / text.
 */
import { EventEmitter } from 'node:events'
import type { PanelPower } from '@svc/shared/panels/index'

export interface PanelState {
  power: PanelPower
  input: string
  volume: number
  muted: boolean
  /** Set id / monitor id the panel answers to (1 by default). */
  id: number
}

export type PanelField = keyof PanelState

export interface PanelChange<K extends PanelField = PanelField> {
  field: K
  from: PanelState[K]
  to: PanelState[K]
  state: PanelState
}

export interface PanelModelEvents {
  change: [PanelChange]
}

export const DEFAULT_PANEL_STATE: PanelState = { power: 'off', input: 'hdmi1', volume: 20, muted: false, id: 1 }

export class PanelModel extends EventEmitter<PanelModelEvents> {
  private current: PanelState

  constructor(initial: Partial<PanelState> = {}) {
    super()
    const state = { ...DEFAULT_PANEL_STATE, ...initial }
    if (!Number.isInteger(state.volume) || state.volume < 0 || state.volume > 100) {
      throw new TypeError(`volume must be 0–100, got ${state.volume}`)
    }
    if (!Number.isInteger(state.id) || state.id < 0 || state.id > 0xff) {
      throw new TypeError(`id must be 0–255, got ${state.id}`)
    }
    this.current = state
  }

  get state(): PanelState {
    return { ...this.current }
  }

  get power(): PanelPower {
    return this.current.power
  }
  get input(): string {
    return this.current.input
  }
  get volume(): number {
    return this.current.volume
  }
  get muted(): boolean {
    return this.current.muted
  }
  get id(): number {
    return this.current.id
  }

  setPower(power: PanelPower): void {
    this.set('power', power)
  }
  setInput(input: string): void {
    this.set('input', input)
  }
  setVolume(volume: number): void {
    if (!Number.isInteger(volume) || volume < 0 || volume > 100) throw new RangeError(`volume must be 0–100, got ${volume}`)
    this.set('volume', volume)
  }
  setMuted(muted: boolean): void {
    this.set('muted', muted)
  }
  setId(id: number): void {
    this.set('id', id)
  }

  private set<K extends PanelField>(field: K, value: PanelState[K]): void {
    const from = this.current[field]
    if (from === value) return
    this.current = { ...this.current, [field]: value }
    this.emit('change', { field, from, to: value, state: this.state } as PanelChange)
  }
}

// Test helpers for the agent: a manual clock with timers, temp dirs, a log capture,
// bounded polling, and a real cloud (HTTP + MQTT on free ports) with a workspace key.
import type { Test } from 'tap';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Logger } from '../src/runtime/Logger.js';
import type { Clock, Timers } from '../src/runtime/time.js';

/** Wall time that moves only on advance(); its timers fire in order as it passes them. */
export class FakeTime implements Timers {
  nowMs: number;
  #seq = 0;
  readonly timers = new Map<number, { at: number; fn: () => void }>();
  readonly delays: number[] = [];

  constructor(start: string | number = Date.now()) {
    this.nowMs = typeof start === 'number' ? start : Date.parse(start);
  }

  readonly clock: Clock = { now: () => new Date(this.nowMs) };

  readonly setTimer = (fn: () => void, ms: number): unknown => {
    const id = ++this.#seq;
    this.delays.push(ms);
    this.timers.set(id, { at: this.nowMs + ms, fn });
    return id;
  };

  readonly clearTimer = (handle: unknown): void => {
    this.timers.delete(handle as number);
  };

  advance(ms: number): void {
    const end = this.nowMs + ms;
    for (;;) {
      let nextId: number | null = null;
      let nextAt = Infinity;
      for (const [id, t] of this.timers) if (t.at <= end && t.at < nextAt) (nextId = id), (nextAt = t.at);
      if (nextId === null) break;
      const t = this.timers.get(nextId)!;
      this.timers.delete(nextId);
      this.nowMs = Math.max(this.nowMs, t.at);
      t.fn();
    }
    this.nowMs = end;
  }

  advanceTo(iso: string): void {
    this.advance(Date.parse(iso) - this.nowMs);
  }

  get pending(): number {
    return this.timers.size;
  }
}

export function tempDir(t: Test, prefix = 'svc-agent-'): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

export interface LogCapture {
  log: Logger;
  lines: Array<Record<string, unknown>>;
  /** Resolves with the first line (already written or to come) that matches. */
  waitFor(pred: (line: Record<string, unknown>) => boolean, ms?: number): Promise<Record<string, unknown>>;
}

export function captureLog(clock?: Clock, level: 'debug' | 'info' = 'info'): LogCapture {
  const lines: Array<Record<string, unknown>> = [];
  const log = new Logger({ write: (l) => lines.push(JSON.parse(l) as Record<string, unknown>), level, ...(clock ? { clock } : {}) });
  return {
    log,
    lines,
    async waitFor(pred, ms = 10_000) {
      const hit = await until(ms, async () => lines.find(pred));
      if (!hit) throw new Error(`no matching log line within ${ms} ms; got:\n${lines.map((l) => JSON.stringify(l)).join('\n')}`);
      return hit;
    },
  };
}

/** Polls `fn` every 20 ms until it returns something other than undefined, at most `ms`. */
export async function until<T>(ms: number, fn: () => Promise<T | undefined> | T | undefined): Promise<T | undefined> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await Promise.resolve()
      .then(fn)
      .catch(() => undefined);
    if (v !== undefined || Date.now() > end) return v;
    await sleep(20);
  }
}

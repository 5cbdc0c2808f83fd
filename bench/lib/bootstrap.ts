// The median of a sample and a 95 % confidence interval for it, by the percentile bootstrap
// (4,000 resamples drawn with a fixed seed, so the same sample always prints the same
// interval). Used where a bench compares two runs pair by pair (bench/audit-write.ts,
// bench/audit-pairs.ts): one pair moves by a few per cent on a shared machine, the
// interval says how far the median of many pairs can be trusted.
import { seededRandom } from '../../shared/src/testing/random.js'

export function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b)
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2
}

export interface MedianCi {
  median: number
  low: number
  high: number
}

/** The median of `xs` and the 2.5th and 97.5th percentiles of the medians of 4,000 resamples of it. */
export function medianCi(xs: readonly number[], resamples = 4000): MedianCi {
  if (xs.length === 0) return { median: Number.NaN, low: Number.NaN, high: Number.NaN }
  const next = seededRandom(47)
  const medians: number[] = []
  const pick = new Array<number>(xs.length)
  for (let r = 0; r < resamples; r++) {
    for (let i = 0; i < xs.length; i++) pick[i] = xs[Math.floor(next() * xs.length)]!
    medians.push(median(pick))
  }
  medians.sort((a, b) => a - b)
  return { median: median(xs), low: medians[Math.floor(resamples * 0.025)]!, high: medians[Math.ceil(resamples * 0.975) - 1]! }
}

export function formatCi(c: MedianCi): string {
  return `${c.median.toFixed(3)} (95 % CI ${c.low.toFixed(3)}–${c.high.toFixed(3)})`
}

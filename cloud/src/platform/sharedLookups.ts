// One running lookup per key for every caller that asks while it runs (the caches of
// credentials and workspace rows, when an entry runs out under many concurrent requests).
// Shared only within one generation of the cache it fills: a caller that asks after the
// cache's generation moved (a change was announced) starts a lookup of its own, so the
// change holds from the next request on.
export class SharedLookups<T> {
  private readonly running = new Map<string, { generation: number; lookup: Promise<T> }>()

  /** The lookup of `key` running in `generation`, or `lookup()` started and shared until it settles. */
  run(key: string, generation: number, lookup: () => Promise<T>): Promise<T> {
    const current = this.running.get(key)
    if (current && current.generation === generation) return current.lookup
    const started = lookup().finally(() => {
      if (this.running.get(key)?.lookup === started) this.running.delete(key)
    })
    this.running.set(key, { generation, lookup: started })
    return started
  }
}

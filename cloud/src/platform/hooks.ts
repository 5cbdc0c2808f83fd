// A hook: a typed list of reactions that one module offers and others join while they are
// wired. The module that owns the hook calls its listeners; a module that reacts declares
// the hook among its needs and adds its listener in create(), so what reacts to what reads
// from the modules' declarations instead of from setters called after construction.
export interface Hook<L> {
  /** Adds a listener; the returned function removes it again. */
  add(listener: L): () => void
}

/** The owner's side of a hook: the listeners, in the order they were added. */
export class Listeners<L> implements Hook<L> {
  private readonly list: L[] = []

  add(listener: L): () => void {
    this.list.push(listener)
    return () => {
      const i = this.list.indexOf(listener)
      if (i >= 0) this.list.splice(i, 1)
    }
  }

  /** A copy, so a listener that removes itself does not skip the next one. */
  all(): readonly L[] {
    return [...this.list]
  }

  get size(): number {
    return this.list.length
  }
}

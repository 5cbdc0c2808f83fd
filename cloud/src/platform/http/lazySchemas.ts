// Route schemas compiled on a route's first use rather than all at start-up. Fastify's own
// compilers (Ajv for what comes in, fast-json-stringify for what goes out) build a function
// per schema when a route is added: for this API's few hundred schemas that was about
// 0.7 s of every start, paid before the first device could reconnect after a restart. Here
// each compile is put off to the first request that needs it (a few milliseconds, once per
// route), with the same compilers and options, so validation and serialisation are the
// ones Fastify would have made. `compileAll` compiles what is still pending (the tests
// call it, so a schema the compilers refuse fails a test, not a request); the running
// service calls `compileInBackground` once it listens, so the schemas no request has
// needed yet are compiled a few seconds later, one per turn of the event loop. A function
// once compiled is kept for the process, by the schema's text: an app built again in the
// same process compiles nothing twice.
import AjvCompiler from '@fastify/ajv-compiler'
import SerializerCompiler from '@fastify/fast-json-stringify-compiler'
import type { FastifyServerOptions } from 'fastify'

type Validate = ((this: unknown, data: unknown) => unknown) & { errors?: unknown }
type Serialize = (data: unknown) => string
type RouteSchema = { schema: unknown; method: string; url: string; httpPart?: string; httpStatus?: string }

/**
 * Compiled functions by what they were compiled from (the compiler, its options and shared
 * schemas, the part of the request or answer, the schema), kept for every app this process
 * builds: the same schema text compiles to the same function, so an app built again in one
 * process (a test process builds hundreds; the service builds one) takes it from here. The
 * key is JSON: it leaves out functions, and the app hands the compilers none (no Ajv plugins).
 */
const compiled = new Map<string, unknown>()
let compiles = 0

function compiledOnce<F>(key: unknown[], compile: () => F): F {
  const k = JSON.stringify(key)
  let fn = compiled.get(k) as F | undefined
  if (fn === undefined) {
    fn = compile()
    compiles++
    compiled.set(k, fn)
  }
  return fn
}

/** How many times this process has run the compilers (for the tests). */
export function compilesInProcess(): number {
  return compiles
}

export class LazySchemas {
  private readonly pending = new Set<() => void>()

  /** Fastify's `schemaController` option. */
  controller(): NonNullable<FastifyServerOptions['schemaController']> {
    const validators = AjvCompiler()
    const serializers = SerializerCompiler()
    return {
      compilersFactory: {
        buildValidator: (externalSchemas: unknown, ajvOptions: unknown) => {
          const compile = (validators as (s: unknown, o: unknown) => (r: RouteSchema) => Validate)(externalSchemas, ajvOptions)
          return (route: RouteSchema) => {
            const get = this.deferred(() => compiledOnce(['validator', externalSchemas, ajvOptions, route.httpPart, route.schema], () => compile(route)))
            // Fastify reads the validator's `errors` after a failed call.
            const validate: Validate = function (this: unknown, data: unknown) {
              const f = get()
              const r = f.call(this, data)
              validate.errors = f.errors
              return r
            }
            return validate
          }
        },
        buildSerializer: (externalSchemas: unknown, serializerOptions: unknown) => {
          const compile = (serializers as (s: unknown, o: unknown) => (r: RouteSchema) => Serialize)(externalSchemas, serializerOptions)
          return (route: RouteSchema) => {
            const get = this.deferred(() => compiledOnce(['serializer', externalSchemas, serializerOptions, route.schema], () => compile(route)))
            return (data: unknown) => get()(data)
          }
        },
      } as never,
    }
  }

  /** `compile`'s function, built on first use (or by compileAll); pending until then. */
  private deferred<F>(compile: () => F): () => F {
    let fn: F | undefined
    const build = (): F => {
      fn ??= compile()
      this.pending.delete(build)
      return fn
    }
    this.pending.add(build)
    return () => fn ?? build()
  }

  /** How many schemas are not compiled yet. */
  get pendingCount(): number {
    return this.pending.size
  }

  /** Compiles every schema still pending; throws what the compilers throw. */
  compileAll(): void {
    for (const build of [...this.pending]) build()
  }

  /**
   * After `delayMs`, compiles the pending schemas one per macrotask (requests and device
   * traffic go between them); a schema the compilers refuse is reported to `onError` and
   * left to fail its route; `onDone` is told how many it compiled once none is left.
   * Answers a function that stops it.
   */
  compileInBackground(delayMs: number, onError: (err: unknown) => void, onDone: (compiled: number) => void = () => undefined): () => void {
    let timer: NodeJS.Timeout | null = null
    let immediate: NodeJS.Immediate | null = null
    const failed = new Set<() => void>()
    let compiled = 0
    const next = () => {
      immediate = null
      let build: (() => void) | undefined
      for (const b of this.pending)
        if (!failed.has(b)) {
          build = b
          break
        }
      if (!build) return onDone(compiled)
      try {
        build()
        compiled++
      } catch (err) {
        failed.add(build)
        onError(err)
      }
      immediate = setImmediate(next)
    }
    timer = setTimeout(() => {
      timer = null
      next()
    }, delayMs)
    timer.unref()
    return () => {
      if (timer) clearTimeout(timer)
      if (immediate) clearImmediate(immediate)
    }
  }
}

// Types of scripts/bundle.mjs (the repository's programs as cached bundles).

/** The repository root. */
export declare const REPO_ROOT: string

/**
 * The bundle of `entry` (a TypeScript file, relative to the repository root, e.g.
 * `agent/src/cli.ts`): its path, to run as `node <path> …args`. Built when the cache holds
 * none for the sources as they are; once per process at most.
 */
export declare function bundledEntry(entry: string): Promise<string>

// Types of build.mjs (plain JavaScript, so scripts/cloud.mjs runs it without a loader).
export declare const CONSOLE_DIST: string
export declare function consoleCurrent(outDir?: string): boolean
export declare function buildConsole(outDir?: string): Promise<string>

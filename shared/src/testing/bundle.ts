// Programs the tests start as child processes (the agent's CLI, the simulator's CLI, the
// demo…) as one bundled file instead of `node --import tsx <entry>.ts`, built once per run
// and cached by content: scripts/bundle.mjs, which `pnpm agent`, `pnpm sim` and `pnpm demo`
// run their programs from too.
export { REPO_ROOT, bundledEntry } from '../../../scripts/bundle.mjs'

/**
 * `env` for a child that must run without the test run's V8 coverage (NODE_V8_COVERAGE): a process
 * whose CPU time is measured, or one that outlives the run. The key stays, set to undefined:
 * child_process.spawn passes the parent's NODE_V8_COVERAGE on to any env that lacks the key.
 */
export function uninstrumentedEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return { ...env, NODE_V8_COVERAGE: undefined };
}

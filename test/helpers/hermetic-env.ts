// The test environment does not inherit the developer's fecr setup: this file is vitest's setupFiles entry (it runs
// in every test worker before the test file is imported) and drops every XDG_* and FECR_* variable from
// process.env, so neither the tests, the CLI run in-process, nor any child they spawn (the CLI, `fecr serve`, node
// scripts, dbus-run-session …) reads the developer's ~/.config/fecr, data dir, profile, token or database.
// A test that needs one of those variables sets it in the environment it hands to the CLI or the child.
// The spawn helpers build a child's environment with childEnv() (the same scrub, whatever process.env holds by then).
//
// Kept: the test suite's own knobs (they configure the tests, never fecr). DBUS_SESSION_BUS_ADDRESS, HOME, PATH and
// the rest stay (the keychain tests run their own D-Bus session; every spawn of the CLI gives it its own HOME).
// XDG_RUNTIME_DIR goes too: a gnome-keyring-daemon started by a keychain test would otherwise find the developer's
// own keyring's control socket there.

/** FECR_* variables that are the test suite's settings, not fecr's (vitest.config.ts, test/helpers/stores.ts, …). */
export const TEST_KNOBS: ReadonlySet<string> = new Set([
  'FECR_TEST_STORE',
  'FECR_TEST_PG_URL',
  'FECR_RELIABILITY_DOCS',
  'FECR_HOSTED_TEST_DOCS',
  'FECR_PROPERTY_RUNS',
  'FECR_PROPERTY_SEED',
]);

/** Whether a variable of the developer's environment is dropped for the tests. */
export function isScrubbed(name: string): boolean {
  return (name.startsWith('XDG_') || name.startsWith('FECR_')) && !TEST_KNOBS.has(name);
}

/** Drops the XDG_* and fecr's FECR_* variables from env, in place; returns the names dropped. */
export function scrubEnv(env: NodeJS.ProcessEnv): string[] {
  const dropped = Object.keys(env).filter(isScrubbed);
  for (const k of dropped) delete env[k];
  return dropped;
}

/** A child's environment: process.env without the developer's XDG_* and FECR_* variables, then the test's own. */
export function childEnv(extra: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  scrubEnv(env);
  for (const [k, v] of Object.entries(extra)) {
    if (v === undefined) delete env[k];
    else env[k] = v;
  }
  return env;
}

scrubEnv(process.env);

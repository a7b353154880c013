/**
 * Where a worker thread's module is: in the build, dist/<name>.js next to the caller's chunk (every
 * src/**\/*-worker.ts is an entry of scripts/bundle.mjs); from src/ (tsx, vitest) the .ts source next to the
 * caller, in which case the thread needs tsx's loader too.
 */
export function workerModule(name: string, callerUrl: string): { filename: string; execArgv?: string[] } {
  if (callerUrl.endsWith('.ts')) {
    const execArgv = [...process.execArgv];
    const hasTsx = execArgv.some((a, i) => (a === 'tsx' || /\/tsx\/dist\/loader\.mjs$/.test(a)) && execArgv[i - 1] === '--import') || execArgv.includes('--import=tsx');
    if (!hasTsx) execArgv.push('--import', 'tsx');
    return { filename: new URL(`./${name}.ts`, callerUrl).href, execArgv };
  }
  return { filename: new URL(`./${name}.js`, callerUrl).href };
}

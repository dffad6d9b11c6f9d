/**
 * Loads the TUI's modules with React's production build. React and its reconciler pick
 * their build from NODE_ENV when they are first loaded, and the development build (prop
 * checks, render logging, fiber bookkeeping) made each frame several times dearer
 * (docs/BENCH.md, keystroke_latency). NODE_ENV is put back as it was once they are loaded:
 * executors and setup commands inherit lanes' environment, and `npm ci` under
 * NODE_ENV=production would leave out a lane's dev dependencies. A NODE_ENV the user set
 * (to debug the TUI) is kept.
 */
export async function withProductionReact<T>(load: () => Promise<T>): Promise<T> {
  const before = process.env.NODE_ENV;
  if (before === undefined) process.env.NODE_ENV = 'production';
  try {
    return await load();
  } finally {
    if (before === undefined) delete process.env.NODE_ENV;
  }
}

import { afterEach, describe, expect, it } from 'vitest';
import { withProductionReact } from '../../src/tui/production-mode.js';

// The TUI loads React's production build, and NODE_ENV goes back to what it was: executors
// and setup commands inherit lanes' environment (`npm ci` under NODE_ENV=production would
// leave out a lane's dev dependencies).

const saved = process.env.NODE_ENV;
afterEach(() => {
  if (saved === undefined) delete process.env.NODE_ENV;
  else process.env.NODE_ENV = saved;
});

describe('withProductionReact', () => {
  it('loads with NODE_ENV=production and leaves NODE_ENV unset afterwards', async () => {
    delete process.env.NODE_ENV;
    const during = await withProductionReact(async () => process.env.NODE_ENV);
    expect(during).toBe('production');
    expect('NODE_ENV' in process.env).toBe(false);
  });

  it('puts NODE_ENV back when loading fails', async () => {
    delete process.env.NODE_ENV;
    await expect(withProductionReact(() => Promise.reject(new Error('no such module')))).rejects.toThrow(
      'no such module',
    );
    expect('NODE_ENV' in process.env).toBe(false);
  });

  it('keeps a NODE_ENV the user set', async () => {
    process.env.NODE_ENV = 'development';
    const during = await withProductionReact(async () => process.env.NODE_ENV);
    expect(during).toBe('development');
    expect(process.env.NODE_ENV).toBe('development');
  });
});

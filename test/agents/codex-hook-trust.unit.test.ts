import { describe, expect, it } from 'vitest';
import {
  codexEventLabel,
  codexHookOverrides,
  codexHookTrustHash,
} from '../../src/agents/codex-hook-trust.js';

describe('Codex hook trust on the command line', () => {
  it('names events as Codex keys them', () => {
    expect(codexEventLabel('Stop')).toBe('stop');
    expect(codexEventLabel('SessionStart')).toBe('session_start');
    expect(codexEventLabel('PermissionRequest')).toBe('permission_request');
  });

  it('hashes a hook as Codex 0.169.0 recorded it after "Trust all and continue"', () => {
    // The hash Codex itself wrote to config.toml for `hooks.Stop` with this command and no timeout.
    expect(codexHookTrustHash({ event: 'Stop', command: '/tmp/fx/cx2/hook.sh' })).toBe(
      'sha256:35f49d16e4b0fc8159feff09856e0e9dcd6d001c9848713bb4c5083a6a347257',
    );
    expect(codexHookTrustHash({ event: 'Stop', command: '/tmp/fx/cx2/hook.sh', timeoutSeconds: 600 })).toBe(
      codexHookTrustHash({ event: 'Stop', command: '/tmp/fx/cx2/hook.sh' }),
    );
    expect(
      codexHookTrustHash({ event: 'Stop', command: '/tmp/fx/cx2/hook.sh', timeoutSeconds: 30 }),
    ).not.toBe(codexHookTrustHash({ event: 'Stop', command: '/tmp/fx/cx2/hook.sh' }));
  });

  it('adds each hook and trusts exactly those in one inline table', () => {
    const overrides = codexHookOverrides([
      { event: 'Stop', command: "'/usr/bin/node' '/x/main.js' hook codex-stop", timeoutSeconds: 3600 },
      { event: 'SessionStart', command: '/x/start' },
    ]);
    expect(overrides).toHaveLength(3);
    expect(overrides[0]).toBe(
      `hooks.Stop=[{hooks=[{type="command",command="'/usr/bin/node' '/x/main.js' hook codex-stop",timeout=3600}]}]`,
    );
    expect(overrides[1]).toBe(
      'hooks.SessionStart=[{hooks=[{type="command",command="/x/start",timeout=600}]}]',
    );
    expect(overrides[2]).toMatch(
      /^hooks\.state=\{"\/<session-flags>\/config\.toml:stop:0:0"=\{trusted_hash="sha256:[0-9a-f]{64}"\},"\/<session-flags>\/config\.toml:session_start:0:0"=\{trusted_hash="sha256:[0-9a-f]{64}"\}\}$/,
    );
    expect(codexHookOverrides([])).toEqual([]);
    expect(() =>
      codexHookOverrides([
        { event: 'Stop', command: 'a' },
        { event: 'Stop', command: 'b' },
      ]),
    ).toThrow(/two hooks for Stop/);
  });
});

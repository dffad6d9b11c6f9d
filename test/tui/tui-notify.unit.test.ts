import { describe, expect, it } from 'vitest';
import { BINDINGS, commandFor } from '../../src/tui/keymap.js';
import { Notifier } from '../../src/tui/notify.js';

// The bell and the OSC 9 notification (DESIGN §10), and the key table behind the handlers.

function recorder() {
  const out: string[] = [];
  return { out, write: (data: string) => void out.push(data) };
}

describe('Notifier', () => {
  it('rings the bell and sends an OSC 9 notification, once per key', () => {
    const r = recorder();
    const n = new Notifier('both', r.write);
    expect(n.notify('parked:sqrt', 'lanes: sqrt needs you')).toBe(true);
    expect(n.notify('parked:sqrt', 'lanes: sqrt needs you')).toBe(false);
    expect(n.notify('waiting:index:1', 'lanes: index waits for input')).toBe(true);
    expect(r.out).toEqual([
      '\x07\x1b]9;lanes: sqrt needs you\x07',
      '\x07\x1b]9;lanes: index waits for input\x07',
    ]);
  });

  it('sends only the bell or only OSC 9 when so configured, and nothing in none mode', () => {
    const bell = recorder();
    new Notifier('bell', bell.write).notify('k', 'message');
    expect(bell.out).toEqual(['\x07']);
    const osc = recorder();
    new Notifier('osc9', osc.write).notify('k', 'message');
    expect(osc.out).toEqual(['\x1b]9;message\x07']);
    const none = recorder();
    const quiet = new Notifier('none', none.write);
    expect(quiet.notify('k', 'message')).toBe(false);
    expect(none.out).toEqual([]);
  });

  it('strips control characters from the message so the OSC cannot be ended or extended', () => {
    const r = recorder();
    new Notifier('osc9', r.write).notify('k', 'evil\x07\x1b]9;spoof\x1b\\\nnext\x7fline\ttab');
    expect(r.out).toEqual(['\x1b]9;evil  ]9;spoof \\ next line tab\x07']);
    const long = recorder();
    new Notifier('osc9', long.write).notify('k', 'x'.repeat(500));
    expect(long.out[0]).toBe(`\x1b]9;${'x'.repeat(200)}\x07`);
  });
});

describe('the key table', () => {
  it('maps the keys of DESIGN §10 to commands', () => {
    expect(commandFor('j', {})).toBe('select-next');
    expect(commandFor('', { downArrow: true })).toBe('select-next');
    expect(commandFor('k', {})).toBe('select-prev');
    expect(commandFor('', { upArrow: true })).toBe('select-prev');
    expect(commandFor('\r', { return: true })).toBe('attach');
    const keys = Object.fromEntries(
      ['d', 'l', 's', 'r', 'R', 'a', 'x', 'p', 'q', '?', 'g'].map((k) => [k, commandFor(k, {})]),
    );
    expect(keys).toEqual({
      d: 'diff',
      l: 'qa-log',
      s: 'shell',
      r: 'resume',
      R: 'retry',
      a: 'approve',
      x: 'reject',
      p: 'pause',
      q: 'quit',
      '?': 'help',
      g: 'grid',
    });
    expect(commandFor('z', {})).toBeNull();
  });

  it('reads ctrl-c as quit and no other ctrl or alt key as its plain letter', () => {
    expect(commandFor('c', { ctrl: true })).toBe('quit');
    for (const k of ['g', 'a', 'x', 'r', 'p', 'd', 'j'])
      expect([commandFor(k, { ctrl: true }), commandFor(k, { meta: true })]).toEqual([null, null]);
  });

  it('binds each key once', () => {
    const keys = BINDINGS.flatMap((b) => b.keys);
    expect(new Set(keys).size).toBe(keys.length);
  });
});

import { describe, expect, it } from 'vitest';
import { fasterOutput } from '../../src/tui/frames/faster-output.js';
import type { OutputClass } from '../../src/tui/frames/faster-output.js';
import { inkOutputClass } from '../../src/tui/frames/ink-output-class.js';

// lanes' Output.get (src/tui/frames/faster-output.ts) must write exactly the frame Ink's own
// writes: the same writes given to both, over styles, wide characters, clips and overflow.

const red = (t: string) => `\u001b[31m${t}\u001b[39m`;
const bold = (t: string) => `\u001b[1m${t}\u001b[22m`;
const dim = (t: string) => `\u001b[2m${t}\u001b[22m`;
const onBlue = (t: string) => `\u001b[44m${t}\u001b[49m`;
const rgb = (t: string) => `\u001b[38;2;10;200;30m${t}\u001b[39m`;

type Ops = (o: ReturnType<typeof make>) => void;
const make = (Output: OutputClass, width: number, height: number) =>
  new Output({ width, height }) as unknown as {
    write(
      x: number,
      y: number,
      text: string,
      options: { transformers: ((l: string, i: number) => string)[] },
    ): void;
    clip(clip: { x1?: number; x2?: number; y1?: number; y2?: number }): void;
    unclip(): void;
    get(): { output: string; height: number };
  };

const none = { transformers: [] };
const SCREENS: [string, number, number, Ops][] = [
  [
    'plain and styled runs side by side',
    40,
    4,
    (o) => {
      o.write(0, 0, `lane ${red('failed')} ${bold('L001')} ${dim(bold('both'))}`, none);
      o.write(2, 1, onBlue(`${red('red on blue')} blue`), none);
      o.write(0, 3, rgb('true colour') + ' tail   ', none);
    },
  ],
  [
    'overlapping writes, the later on top',
    20,
    2,
    (o) => {
      o.write(0, 0, red('aaaaaaaaaaaa'), none);
      o.write(4, 0, bold('BB'), none);
      o.write(0, 1, 'xxxxxxxxxx', none);
      o.write(3, 1, dim('y'), none);
    },
  ],
  [
    'wide characters and emoji',
    16,
    3,
    (o) => {
      o.write(0, 0, '日本語 text', none);
      o.write(1, 1, red('表') + '✓ 🚀 ok', none);
      o.write(5, 0, 'z', none);
    },
  ],
  [
    'clipped both ways, and writes wholly outside',
    20,
    6,
    (o) => {
      o.clip({ x1: 2, x2: 10, y1: 1, y2: 4 });
      o.write(
        0,
        0,
        `${red('0123456789abcdef')}\n${bold('ghijklmnopqrstu')}\nvwxyz\n${onBlue('ABCDEFGHIJKL')}\nlast`,
        none,
      );
      o.write(15, 2, 'outside', none);
      o.write(3, 5, 'below', none);
      o.unclip();
      o.write(0, 5, 'after the clip', none);
    },
  ],
  [
    'clipped vertically only',
    12,
    4,
    (o) => {
      o.clip({ y1: 1, y2: 3 });
      o.write(0, 0, `one\n${red('two is long')}\nthree\nfour`, none);
      o.unclip();
    },
  ],
  [
    'transformers, and text taller and wider than the screen',
    8,
    2,
    (o) => {
      o.write(0, 0, 'abc\ndef\nghi', {
        transformers: [(line, i) => (i === 1 ? bold(line) : line.toUpperCase())],
      });
      o.write(5, 1, red('wider than this'), none);
    },
  ],
];

describe('faster output', () => {
  it('writes exactly the frame Ink writes, frame after frame', async () => {
    const Output = (await inkOutputClass()) as OutputClass;
    const inks = SCREENS.map(([, width, height, ops]) => {
      const o = make(Output, width, height);
      ops(o);
      return o.get();
    });
    expect(fasterOutput(Output)).toBe(true);
    // (twice: the second frame is drawn from the caches the first filled)
    for (const round of [1, 2])
      SCREENS.forEach(([name, width, height, ops], i) => {
        const o = make(Output, width, height);
        ops(o);
        expect(o.get(), `${name}, frame ${round}`).toEqual(inks[i]);
      });
    expect(inks[0]!.output).toContain('\u001b[31mfailed\u001b[39m');
  });

  it('leaves a class alone that is not the Output it was written for', () => {
    class Other {
      operations = [];
      get() {
        return { output: 'own', height: 1 };
      }
    }
    expect(fasterOutput(Other)).toBe(false);
    expect(new Other().get().output).toBe('own');
  });
});

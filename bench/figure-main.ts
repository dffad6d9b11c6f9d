import { manyLanes } from './many-lanes.js';
import type { Figure } from './stats.js';

// `node dist/bench/figure-main.js <figure> <size>`: one figure in a process of its own
// (bench/own-process.ts). It exits when the figure is printed: the figure's workers and
// git's long-lived helpers would otherwise keep the process alive after it is measured.

const figures: Record<string, (size: number) => Promise<Figure>> = {
  many_lanes: manyLanes,
};

const [name = '', size = ''] = process.argv.slice(2);
const measure = figures[name];
if (!measure || !/^\d+$/.test(size)) {
  console.error(`figure-main: usage: figure-main <${Object.keys(figures).join('|')}> <size>`);
  process.exit(2);
}
const figure = await measure(Number(size));
console.log(JSON.stringify(figure));
process.exit(0);

import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import YAML from 'yaml';
import { git } from '../git/runner/git.js';

// The demo batch: a small real project (ES modules with node's own test runner), and a
// plan of 8 children in 4 waves whose `script` executors make the real edits with a
// visible delay. One child (div) fails QA once and passes on rework; one (sqrt) keeps
// failing and parks, for the human to fix and resume.

export const DEMO_BATCH = 'demo';

/** How long the asking child waits for an answer before it goes on without one. */
export const ASK_SECONDS = 20;

/** The demo's config: the script profile with a prompt pattern, so a waiting lane shows as `waiting`. */
const DEMO_CONFIG = {
  executors: { script: { argv: ['sh', '-c', '{run}'], prompt_patterns: ['changelog\\? \\(\\d+ s\\) *$'] } },
};

interface DemoChild {
  id: string;
  goal: string;
  blocked_by: string[];
  /** The module's source and its test, as the executor writes them. */
  source: string;
  test: string;
  /** A different first attempt (div: wrong, then right on rework). */
  firstSource?: string;
  /** Asks the watcher for a word (attach with enter to answer); moves on after a while. */
  asks?: boolean;
}

const T = (name: string, cases: string) =>
  `import { test } from 'node:test';\nimport assert from 'node:assert/strict';\nimport { ${name} } from '../src/${name}.mjs';\n\ntest('${name}', () => {\n${cases}\n});\n`;

const CHILDREN: DemoChild[] = [
  {
    id: 'add',
    goal: 'Add an add(a, b) function',
    blocked_by: [],
    source: 'export const add = (a, b) => a + b;\n',
    test: T('add', '  assert.equal(add(2, 3), 5);'),
  },
  {
    id: 'sub',
    goal: 'Add a sub(a, b) function',
    blocked_by: [],
    source: 'export const sub = (a, b) => a - b;\n',
    test: T('sub', '  assert.equal(sub(5, 3), 2);'),
  },
  {
    id: 'mul',
    goal: 'Add a mul(a, b) function',
    blocked_by: [],
    source: 'export const mul = (a, b) => a * b;\n',
    test: T('mul', '  assert.equal(mul(4, 3), 12);'),
  },
  {
    id: 'pow',
    goal: 'Add pow(a, n) built on mul',
    blocked_by: ['mul'],
    source:
      "import { mul } from './mul.mjs';\n\nexport const pow = (a, n) => (n === 0 ? 1 : mul(a, pow(a, n - 1)));\n",
    test: T('pow', '  assert.equal(pow(2, 10), 1024);\n  assert.equal(pow(7, 0), 1);'),
  },
  {
    id: 'div',
    goal: 'Add div(a, b) that refuses division by zero',
    blocked_by: ['mul'],
    firstSource: 'export const div = (a, b) => a * b;\n',
    source:
      "export const div = (a, b) => {\n  if (b === 0) throw new RangeError('division by zero');\n  return a / b;\n};\n",
    test: T('div', '  assert.equal(div(12, 4), 3);\n  assert.throws(() => div(1, 0), RangeError);'),
  },
  {
    id: 'mean',
    goal: 'Add mean(xs) built on add and div',
    blocked_by: ['add', 'div'],
    source:
      "import { add } from './add.mjs';\nimport { div } from './div.mjs';\n\nexport const mean = (xs) => div(xs.reduce(add, 0), xs.length);\n",
    test: T('mean', '  assert.equal(mean([1, 2, 3, 6]), 3);'),
  },
  {
    id: 'sqrt',
    goal: 'Add sqrt(x) by Newton iteration',
    blocked_by: ['pow'],
    // Always wrong: this child parks at the QA failure limit, for a human to fix.
    source: 'export const sqrt = (x) => Math.sqrt(x) + 1;\n',
    test: T('sqrt', '  assert.equal(sqrt(9), 3);\n  assert.equal(sqrt(2) ** 2 - 2 < 1e-9, true);'),
  },
  {
    id: 'index',
    goal: 'Export the whole calculator from src/index.mjs',
    asks: true,
    blocked_by: ['sub', 'mean'],
    source: ['add', 'sub', 'mul', 'pow', 'div', 'mean']
      .map((n) => `export { ${n} } from './${n}.mjs';\n`)
      .join(''),
    test: "import { test } from 'node:test';\nimport assert from 'node:assert/strict';\nimport * as calc from '../src/index.mjs';\n\ntest('index', () => {\n  assert.equal(calc.mean([calc.pow(2, 2), calc.sub(6, 2)]), 4);\n});\n",
  },
];

/** The correct sqrt, as a human would write it into the parked lane. */
export const SQRT_FIX =
  'export const sqrt = (x) => {\n  let r = x;\n  for (let i = 0; i < 50; i++) r = (r + x / r) / 2;\n  return r;\n};\n';

function sh(text: string): string {
  return `'${text.replaceAll("'", "'\\''")}'`;
}

function script(child: DemoChild, delayMs: number): string {
  const file = `src/${child.id}.mjs`;
  const write = (source: string) => `printf '%s' ${sh(source)} > ${file}`;
  const steps = [
    `echo "${child.id}: ${child.goal}"`,
    `sleep ${(delayMs / 1000).toFixed(2)}`,
    'mkdir -p src test',
    `printf '%s' ${sh(child.test)} > test/${child.id}.test.mjs`,
    child.firstSource
      ? `if [ -f ${file} ]; then ${write(child.source)}; else ${write(child.firstSource)}; fi`
      : write(child.source),
    `echo "${child.id}: wrote ${file}"`,
  ];
  if (child.asks)
    steps.push(
      `printf '${child.id}: a word for the changelog? (${ASK_SECONDS} s) '`,
      `reply=$(timeout --foreground ${ASK_SECONDS} head -n 1 2>/dev/null || true)`,
      `echo "${child.id}: got: $reply"`,
      'sleep 1',
    );
  return steps.join('\n');
}

export function demoPlan(delayMs: number): object {
  return {
    batch: DEMO_BATCH,
    max_parallel: 3,
    budget: { qa_failure_limit: 2 },
    executor: 'script',
    children: CHILDREN.map((c) => ({
      id: c.id,
      goal: c.goal,
      blocked_by: c.blocked_by,
      scope: [`src/${c.id}.mjs`, `test/${c.id}.test.mjs`],
      acceptance: [{ id: 'test', run: ['node', '--test', `test/${c.id}.test.mjs`], timeout_ms: 60_000 }],
      run: script(c, delayMs),
    })),
  };
}

export interface DemoFiles {
  repo: string;
  plan: string;
}

/** Writes the demo repository (one commit on main) and its plan into `dir`. */
export async function createDemo(dir: string, delayMs: number): Promise<DemoFiles> {
  const repo = join(dir, 'calc');
  mkdirSync(repo, { recursive: true });
  const files: Record<string, string> = {
    'README.md':
      '# calc\n\nA tiny calculator, built by lanes in parallel worktrees.\n\nRun the tests: `node --test test/`\n',
    'package.json': `${JSON.stringify({ name: 'calc', private: true, type: 'module', scripts: { test: 'node --test test/' } }, null, 2)}\n`,
    '.gitignore': 'node_modules/\n',
    'test/README.md': 'Each module has its test here: test/<name>.test.mjs\n',
    'lanes.config.json': `${JSON.stringify(DEMO_CONFIG, null, 2)}\n`,
  };
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(repo, path)), { recursive: true });
    writeFileSync(join(repo, path), text);
  }
  await git(dir, ['init', '--quiet', '-b', 'main', repo]);
  await git(repo, ['config', 'user.name', 'lanes demo']);
  await git(repo, ['config', 'user.email', 'demo@lanes.invalid']);
  await git(repo, ['add', '-A']);
  await git(repo, ['commit', '--quiet', '-m', 'calc: start']);
  const plan = join(dir, 'demo.plan.yaml');
  writeFileSync(plan, YAML.stringify(demoPlan(delayMs), { lineWidth: 0 }));
  return { repo, plan };
}

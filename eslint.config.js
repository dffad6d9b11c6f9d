import { dirname, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const ROOT = dirname(fileURLToPath(import.meta.url));

// The layers (docs/ARCHITECTURE.md, "The layers"): a room imports only the rooms below it.
// A room is a folder of src/ named in LAYERS (the longest name that holds a file is its
// room; a folder not named belongs to the room above it). `may` lists, for each room, the
// rooms its files may import: a name stands for that folder and every folder in it. A
// relative import of any other room is a lint error. components/ is checked apart: it
// imports only src/tui (the TUI's state and intents) besides ink and react.
const CORE_BASE = ['core/basics', 'core/plan', 'core/records'];
const ADAPTERS = ['core', 'process', 'git'];
export const LAYERS = {
  // The core, room by room (pure rules: no files, processes, clocks or git).
  'core/basics': [],
  'core/plan': ['core/basics'],
  'core/settings': ['core/basics', 'core/plan'],
  'core/records': ['core/basics', 'core/plan'],
  'core/machines': CORE_BASE,
  'core/ports': CORE_BASE,
  'core/turns': CORE_BASE,
  'core/rules': [...CORE_BASE, 'core/ports'],
  'core/steps': [...CORE_BASE, 'core/ports', 'core/turns', 'core/machines'],
  'core/ways-out': [...CORE_BASE, 'core/ports', 'core/steps', 'core/machines'],
  'core/whole-batch': [...CORE_BASE, 'core/ports', 'core/steps'],
  'core/tick': ['core'],
  process: ['core'],
  // git, room by room: running git, a lane's files, a lane's commit, the batch, the ports.
  'git/runner': ['core', 'process'],
  'git/worktree': ['core', 'process', 'git/runner'],
  'git/delivery': ['core', 'process', 'git/runner', 'git/worktree'],
  'git/batch': ['core', 'process', 'git/runner', 'git/worktree'],
  'git/ports': ['core', 'process', 'git'],
  store: ADAPTERS,
  hosts: ADAPTERS,
  // The machine host: lanes' executors in tmux sessions on other machines, through a MachineClient.
  'hosts/machine': [...ADAPTERS, 'hosts', 'machines'],
  qa: ADAPTERS,
  agents: ADAPTERS,
  demo: ADAPTERS,
  // Machines: the protocol between the coordinator and a machine, and the script that runs there.
  machines: ['core'],
  'machines/side': [...ADAPTERS, 'store', 'qa', 'agents', 'hosts', 'machines'],
  // The coordinator's side of machines: ssh, the op client, objects, the routed ports.
  'machines/link': [...ADAPTERS, 'store', 'qa', 'machines'],
  // The coordinator, room by room: turns, lanes, executors, the whole batch, the loop.
  'coordinator/turns': [...ADAPTERS, 'store', 'hosts', 'agents'],
  'coordinator/lanes': [...ADAPTERS, 'store', 'hosts', 'qa'],
  'coordinator/executors': [
    ...ADAPTERS,
    'store',
    'hosts',
    'agents',
    'coordinator/turns',
    'coordinator/lanes',
  ],
  'coordinator/whole-batch': [...ADAPTERS, 'store', 'qa'],
  'coordinator/loop': [...ADAPTERS, 'store', 'hosts', 'qa', 'agents', 'coordinator'],
  tui: [...ADAPTERS, 'store', 'hosts', 'qa', 'agents', 'coordinator'],
  /** cli/ is the top: it may import everything (its entry point and composition roots). */
  cli: [
    ...ADAPTERS,
    'store',
    'hosts',
    'qa',
    'agents',
    'demo',
    'coordinator',
    'tui',
    'components',
    'machines',
  ],
};
/** The top folders of src/ (each has a room, or rooms, in LAYERS). */
export const FOLDERS = [...new Set(Object.keys(LAYERS).map((room) => room.split('/')[0]))];

/** The room of a path under src/ (`core/tick/tick.ts` → `core/tick`), or null outside src/. */
export function roomOf(srcPath) {
  const parts = srcPath.split('/').slice(0, -1);
  for (let n = parts.length; n > 0; n--) {
    const name = parts.slice(0, n).join('/');
    if (name in LAYERS) return name;
  }
  return null;
}
const within = (room, name) => room === name || room.startsWith(`${name}/`);

/** Why `from` may not import `spec`, or null when it may. */
function layerViolation(fromFile, spec) {
  if (!spec.startsWith('.')) return null;
  const from = relative(ROOT, fromFile).split('\\').join('/');
  const to = relative(ROOT, resolve(dirname(fromFile), spec))
    .split('\\')
    .join('/');
  if (from.startsWith('components/')) return null; // (COMPONENTS_ONLY below)
  if (!from.startsWith('src/')) return null;
  const room = roomOf(from.slice(4));
  if (room === null) return null;
  const may = LAYERS[room];
  const what = may.length ? may.map((f) => `src/${f}`).join(', ') : 'its own files';
  const refuse = `src/${room} may import only ${what} (the layers: docs/ARCHITECTURE.md).`;
  if (to.startsWith('components/')) return may.includes('components') ? null : refuse;
  if (!to.startsWith('src/')) return refuse;
  const target = roomOf(to.slice(4)) ?? to.slice(4).split('/')[0];
  if (target === room || may.some((name) => within(target, name))) return null;
  return refuse;
}

const layersPlugin = {
  rules: {
    rooms: {
      meta: { type: 'problem', schema: [] },
      create(context) {
        const check = (node) => {
          const source = node.source;
          if (!source || source.type !== 'Literal' || typeof source.value !== 'string') return;
          const why = layerViolation(context.filename, source.value);
          if (why) context.report({ node: source, message: why });
        };
        const file = relative(ROOT, context.filename).split('\\').join('/');
        return {
          Program(node) {
            if (file.startsWith('src/') && roomOf(file.slice(4)) === null)
              context.report({
                node,
                message: `${file} is in no room of LAYERS (eslint.config.js): move it into a room, or give its folder a line there.`,
              });
          },
          ImportDeclaration: check,
          ExportNamedDeclaration: check,
          ExportAllDeclaration: check,
          ImportExpression: check,
        };
      },
    },
  },
};

// What the core may import at all: its own files and pure packages. A YAML parser is
// passed in (src/core/plan/plan.ts): loading `yaml` costs start-up time, so only its types.
const CORE_ONLY = {
  regex: '^(?!\\.\\.?/|zod$|picomatch$|node:crypto$|yaml$)',
  message:
    'src/core imports only its own files and pure packages (zod, picomatch, node:crypto): files, processes, clocks and git go through ports (src/core/ports).',
};

const CORE_YAML_TYPES = {
  regex: '^yaml$',
  allowTypeImports: true,
  message: 'src/core takes the YAML parser as an argument (src/core/plan/plan.ts): import only its types.',
};
const COMPONENTS_ONLY = {
  regex: '^(?!\\./|\\.\\./src/tui/|ink$|react$)',
  message: 'components/ import only ink, react, each other and the TUI state and intents (src/tui).',
};

const restrict = (...patterns) => ({
  'no-restricted-imports': 'off',
  '@typescript-eslint/no-restricted-imports': ['error', { patterns }],
});

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'coverage/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.mjs', '**/*.js'],
    languageOptions: { globals: { process: 'readonly', console: 'readonly', Buffer: 'readonly' } },
  },
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-throw-literal': 'error',
    },
  },
  {
    // A promise nobody awaits loses its error (an unhandled rejection ends the process): each
    // is awaited, returned, or marked `void` on purpose. Type-aware, so it reads tsconfig.json.
    files: ['**/*.{ts,tsx}'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: ROOT } },
    rules: { '@typescript-eslint/no-floating-promises': 'error' },
  },
  {
    // Small files (docs/ARCHITECTURE.md): a source file over 300 lines holds more than one concept.
    files: ['src/**/*.{ts,tsx}', 'components/**/*.{ts,tsx}'],
    rules: { 'max-lines': ['error', { max: 300, skipBlankLines: false, skipComments: false }] },
  },
  {
    files: ['src/**/*.{ts,tsx}'],
    plugins: { layers: layersPlugin },
    rules: { 'layers/rooms': 'error' },
  },
  {
    files: ['src/core/**/*.{ts,tsx}'],
    rules: {
      ...restrict(CORE_ONLY, CORE_YAML_TYPES),
      'no-restricted-globals': [
        'error',
        ...['process', 'setTimeout', 'setInterval', 'fetch'].map((name) => ({
          name,
          message: `src/core does not reach the process or time itself (${name}): it works through ports (src/core/ports).`,
        })),
      ],
      'no-restricted-properties': [
        'error',
        { object: 'Date', property: 'now', message: 'src/core reads the time from the Clock port.' },
        { object: 'Math', property: 'random', message: 'src/core gets ids from its ports (newRunId).' },
      ],
      'no-restricted-syntax': [
        'error',
        {
          selector: "NewExpression[callee.name='Date'][arguments.length=0]",
          message: 'src/core reads the time from the Clock port.',
        },
        { selector: 'ImportExpression', message: 'src/core loads no modules at run time.' },
      ],
    },
  },
  { files: ['components/**/*.{ts,tsx}'], rules: restrict(COMPONENTS_ONLY) },
);

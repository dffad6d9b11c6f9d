import js from '@eslint/js';
import tseslint from 'typescript-eslint';

// The layers (docs/ARCHITECTURE.md, "The layers"): a folder imports only the folders below
// it. `may` lists, for each folder of src/, the folders of src/ its files may import; a
// relative import of any other folder is a lint error. components/ is checked apart: it
// imports only src/tui (the TUI's state and intents) besides ink and react.
const ADAPTERS = ['core', 'process', 'git'];
export const LAYERS = {
  core: [],
  process: ['core'],
  git: ['core', 'process'],
  store: ADAPTERS,
  hosts: ADAPTERS,
  qa: ADAPTERS,
  agents: ADAPTERS,
  demo: ADAPTERS,
  coordinator: [...ADAPTERS, 'store', 'hosts', 'qa', 'agents'],
  tui: [...ADAPTERS, 'store', 'hosts', 'qa', 'agents', 'coordinator'],
};
/** cli/ is the top: it may import everything (its entry point and composition roots). */
export const FOLDERS = [...Object.keys(LAYERS), 'cli'];

function layerRule(folder) {
  const allowed = new Set([folder, ...LAYERS[folder]]);
  const above = FOLDERS.filter((f) => !allowed.has(f));
  return {
    // `../x/`, `../../x/` (from a subfolder) or `../src/x/` all name the folder src/x.
    regex: `^(\\.\\./)+(src/)?(${[...above, 'components'].join('|')})(/|$)`,
    message: `src/${folder} may import only ${LAYERS[folder].map((f) => `src/${f}`).join(', ') || 'its own files'} (the layers: docs/ARCHITECTURE.md).`,
  };
}

// What the core may import at all: its own files and pure packages. A YAML parser is
// passed in (src/core/plan.ts): loading `yaml` costs start-up time, so only its types.
const CORE_ONLY = {
  regex: '^(?!\\./|zod$|picomatch$|node:crypto$|yaml$)',
  message:
    'src/core imports only its own files and pure packages (zod, picomatch, node:crypto): files, processes, clocks and git go through ports (src/core/ports.ts).',
};
const CORE_YAML_TYPES = {
  regex: '^yaml$',
  allowTypeImports: true,
  message: 'src/core takes the YAML parser as an argument (src/core/plan.ts): import only its types.',
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
  ...Object.keys(LAYERS)
    .filter((folder) => folder !== 'core')
    .map((folder) => ({ files: [`src/${folder}/**/*.{ts,tsx}`], rules: restrict(layerRule(folder)) })),
  {
    files: ['src/core/**/*.{ts,tsx}'],
    rules: {
      ...restrict(CORE_ONLY, CORE_YAML_TYPES),
      'no-restricted-globals': [
        'error',
        ...['process', 'setTimeout', 'setInterval', 'fetch'].map((name) => ({
          name,
          message: `src/core does not reach the process or time itself (${name}): it works through ports (src/core/ports.ts).`,
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

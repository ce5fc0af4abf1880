// Lint (part of `npm test`): typescript-eslint with type information, over
// every TypeScript file the type-check covers (src, web, test, bench). The
// rules are the ones that catch bugs the compiler lets through: promises
// nobody awaits or that are handed where a plain callback is expected,
// awaiting what is not a promise, throwing what is not an Error, switches that
// forget a case, and dead code. Style is not linted (the code is formatted
// by hand to one style; a rule that only moves spaces is noise).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const RULES = {
  // `any` is allowed where JSON from outside is read (tests, the edge's
  // hand-written checks); the checks themselves make it safe.
  '@typescript-eslint/no-explicit-any': 'off',
  '@typescript-eslint/no-unsafe-assignment': 'off',
  '@typescript-eslint/no-unsafe-member-access': 'off',
  '@typescript-eslint/no-unsafe-call': 'off',
  '@typescript-eslint/no-unsafe-argument': 'off',
  '@typescript-eslint/no-unsafe-return': 'off',
  // node:test's test() and describe() return promises the runner itself awaits.
  '@typescript-eslint/no-floating-promises': [
    'error',
    { ignoreVoid: true, allowForKnownSafeCalls: [{ from: 'package', package: 'node:test', name: ['test', 'describe', 'it', 'suite', 'before', 'after', 'beforeEach', 'afterEach'] }] },
  ],
  '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: { attributes: false } }],
  '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
  'no-constant-condition': ['error', { checkLoops: false }],
  // A catch that ignores on purpose says so with a comment or is empty.
  'no-empty': ['error', { allowEmptyCatch: true }],
  // An async function without await still returns a promise, as its interface asks.
  '@typescript-eslint/require-await': 'off',
  // Hostile input is filtered for control characters on purpose.
  'no-control-regex': 'off',
  // Messages interpolate what a server or a CLI said, whatever its type.
  '@typescript-eslint/restrict-template-expressions': 'off',
  '@typescript-eslint/no-base-to-string': 'off',
  // A caught value is passed on as it came (it is the caller's to read).
  '@typescript-eslint/prefer-promise-reject-errors': 'off',
  '@typescript-eslint/unbound-method': 'off',
  // `a && b()` and `(x = 1), (y = 2)` are the house's short forms.
  '@typescript-eslint/no-unused-expressions': 'off',
};

export default tseslint.config(
  // JavaScript is not linted, but for the hook script every agent runs (bin/roost-hook.js: JSDoc types, checked by bin/tsconfig.json).
  { ignores: ['dist/**', 'node_modules/**', 'web/dist/**', '**/*.js', '**/*.mjs', '**/*.cjs', '!bin/roost-hook.js'] },
  {
    files: ['**/*.ts', '**/*.tsx'],
    extends: [js.configs.recommended, ...tseslint.configs.recommendedTypeChecked],
    languageOptions: {
      parserOptions: { projectService: { allowDefaultProject: ['web/vite.config.ts', 'scripts/*.ts'] }, tsconfigRootDir: import.meta.dirname },
    },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: RULES,
  },
  {
    files: ['bin/roost-hook.js'],
    extends: [js.configs.recommended, ...tseslint.configs.recommendedTypeChecked],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    // Node's globals are the type-check's to know (bin/tsconfig.json has node's types).
    rules: { ...RULES, 'no-undef': 'off' },
  },
);

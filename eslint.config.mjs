// @ts-check
/**
 * Lint: typescript-eslint's recommended type-checked rules, trimmed only
 * where a rule fights a deliberate pattern; each trim says why.
 */
import js from '@eslint/js';
import prettier from 'eslint-config-prettier';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'bench/peers/', 'scripts/', 'eslint.config.mjs'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      // Modules a command may never need (ioredis, pg, PGlite, undici, re2js) are
      // required where first used, so that a start loads only what it serves.
      '@typescript-eslint/no-require-imports': 'off',
      // Unused arguments keep a callback's documented signature (Koa's next, Node's listeners).
      // A rest sibling names what it leaves out: `{ secret: _dropped, ...kept }`.
      '@typescript-eslint/no-unused-vars': ['error', { args: 'none', caughtErrors: 'none', ignoreRestSiblings: true }],
      // Passing on a caught error as it came (`catch (err) { reject(err) }`) keeps its kind and stack.
      '@typescript-eslint/prefer-promise-reject-errors': ['error', { allowThrowingUnknown: true }],
      // The parsers for HTTP and YAML match control characters on purpose: they refuse them.
      'no-control-regex': 'off',
      // Koa's app.callback() is a promise-returning listener handed to Node's
      // servers by design: Koa handles its own rejections.
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: { arguments: false } }],
      // An async function that implements a Promise-returning interface without
      // awaiting turns a throw into a rejection, as the interface promises;
      // Promise.resolve() wrapping would lose that.
      '@typescript-eslint/require-await': 'off',
    },
  },
  // Prettier owns layout: the rules that would argue with it are off.
  prettier,
  {
    files: ['test/**/*.ts', 'bench/**/*.ts'],
    rules: {
      // supertest's res.body, JSON.parse and the gRPC clients' answers are `any`
      // by design; the tests assert their shape, which is what these rules would make them declare.
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      // chai-less assertions pass methods such as assert.equal around unbound.
      '@typescript-eslint/unbound-method': 'off',
    },
  },
);

import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/** Files matching `files` may not import a module under any of the `forbidden` top folders of src or src/shared. */
function layer(files, forbidden, message) {
  const regex = `^(\\.\\./)+(shared/)?(${forbidden.join('|')})(/|$)`;
  return [{ files, rules: { 'no-restricted-imports': ['error', { patterns: [{ regex, message }] }] } }];
}

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'tools/**', '.data/**', 'coverage/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      'no-console': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
    },
  },
  // The layers (docs/ARCHITECTURE.md): the front ends (api, agent, cli, console) use src/shared and
  // never src/workers; src/shared never uses a front end or the workers; inside src/shared the domain
  // uses the infrastructure and never the other way round.
  ...layer(['src/api/**', 'src/agent/**', 'src/cli/**', 'src/console/**'], ['workers'], 'front ends use src/shared, never src/workers'),
  ...layer(['src/shared/domain/**'], ['api', 'agent', 'cli', 'workers'], 'src/shared never uses a front end or the workers'),
  ...layer(
    ['src/shared/infra/**'],
    ['domain', 'api', 'agent', 'cli', 'workers'],
    'src/shared/infra knows nothing of the domain: take a narrower type (ServiceContext) or a parameter',
  ),
  { files: ['test/**', 'bench/**', 'src/cli/**'], rules: { 'no-console': 'off' } },
  // The operator console (React, built by Vite): .tsx is linted with the same TypeScript rules;
  // its Vite config is an ES module run by Node.
  { files: ['src/console/**/*.{ts,tsx}'], languageOptions: { parserOptions: { ecmaFeatures: { jsx: true } } } },
  { files: ['src/console/**/*.mjs'], languageOptions: { sourceType: 'module', globals: { URL: 'readonly', process: 'readonly' } } },
  {
    files: ['**/*.js', '**/*.cjs'],
    languageOptions: { sourceType: 'commonjs', globals: { module: 'writable', require: 'readonly', process: 'readonly' } },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
);

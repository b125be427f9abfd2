import js from '@eslint/js';
import tseslint from 'typescript-eslint';

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

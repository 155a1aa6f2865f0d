import js from '@eslint/js';
import prettier from 'eslint-config-prettier';
import globals from 'globals';
import tseslint from 'typescript-eslint';
import { layerRules } from './tools/lint/layers.js';

export default tseslint.config(
  { ignores: ['**/node_modules/**', '**/dist/**', 'coverage/**', '.dev/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
      'no-console': 'error',
    },
  },
  {
    files: ['**/test/**/*.ts', 'e2e/cluster/**/*.ts', 'e2e/skaffold/**/*.ts', 'e2e/keda/**/*.ts'],
    languageOptions: { globals: { ...globals.jest } },
  },
  // The layering of README.md "Layout": which package imports which, and where real dependencies are built.
  ...layerRules(),
  prettier,
);

import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules/', '.serverless/', '.build/', '.data/', 'coverage/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.js', '**/*.cjs'],
    languageOptions: {
      sourceType: 'commonjs',
      globals: { __dirname: 'readonly', __filename: 'readonly', process: 'readonly', console: 'readonly' },
    },
  },
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-console': 'off',
    },
  },
  {
    // Small rooms: a file holds at most 400 lines, a function at most 80, blank lines and comments not counted.
    files: ['lib/**/*.{ts,tsx}', 'functions/**/*.{ts,tsx}', 'local/**/*.{ts,tsx}', 'web/**/*.{ts,tsx}', 'scripts/**/*.{ts,tsx}'],
    rules: {
      'max-lines': ['error', { max: 400, skipBlankLines: true, skipComments: true }],
      'max-lines-per-function': ['error', { max: 80, skipBlankLines: true, skipComments: true }],
    },
  },
  {
    // Tables, where the length is the point: the API's route table and its schemas, the detector's COCO classes and
    // the label taxonomy they map onto.
    files: ['lib/api/routes.ts', 'lib/api/schemas.ts', 'local/detector/labels.ts'],
    rules: { 'max-lines': 'off', 'max-lines-per-function': 'off' },
  },
);

/** Jest: one run, every suite that needs no external service (emulators start in-process). */
/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test', '<rootDir>/shared', '<rootDir>/functions', '<rootDir>/infra'],
  testMatch: ['**/*.test.ts'],
  transform: { '^.+\\.ts$': ['@swc/jest', { jsc: { target: 'es2022', parser: { syntax: 'typescript' } } }] },
  collectCoverageFrom: ['shared/domain/**/*.ts'],
  coverageReporters: ['text-summary', 'text'],
  coverageThreshold: { './shared/domain/': { lines: 90 } },
  testTimeout: 20000,
};

/** Jest: one run, every suite that needs no external service (emulators start in-process). */
const { existsSync } = require('node:fs');

/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['test', 'shared', 'functions', 'infra']
    .filter((d) => existsSync(`${__dirname}/${d}`))
    .map((d) => `<rootDir>/${d}`),
  testMatch: ['**/*.test.ts'],
  transform: { '^.+\\.ts$': ['@swc/jest', { jsc: { target: 'es2022', parser: { syntax: 'typescript' } } }] },
  collectCoverageFrom: ['shared/domain/**/*.ts'],
  coverageReporters: ['text-summary', 'text'],
  coverageThreshold: { './shared/domain/': { lines: 90 } },
  testTimeout: 20000,
};

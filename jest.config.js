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
  // The longest files first, from jest's timings or, on a fresh clone, test/durations.json (test/sequencer.js).
  testSequencer: '<rootDir>/test/sequencer.js',
  // Three workers on the 2-core test machine. An end-to-end file uses about half a core (its stack mostly waits
  // on leases, held appends and catch-up; the jest process with the emulators in it was idle 47 of 53 s), so
  // a third worker fills the cores: with the longest files first the whole run went from 604 s (two workers)
  // to 552 s, every test passing (docs/testing.md). Without that order a third worker gained nothing (620 s
  // against 625 s): the last long file ran alone at the end either way. Files that check for left-over
  // processes look only at the ports of their own stack, so stacks running at once do not see each other's.
  maxWorkers: 3,
  // Tests run in a worker process that is replaced once it holds more than this after a test file: the
  // emulators run in-process and hold their data (a 100 MiB commit, 1,000-row backfills) until the file
  // ends, and one long-lived process grew past 4.8 GB over the suite and slowed to a crawl in garbage
  // collection. (Setting a limit also keeps jest from running the files inside its own process.)
  workerIdleMemoryLimit: '1536MB',
};

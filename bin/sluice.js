#!/usr/bin/env node
// `npx sluice <command>`: runs the CLI from its TypeScript sources (through tsx, a development
// dependency) in a checkout, or from the build (`npm run build`) where tsx is not installed.
const { join } = require('node:path');

let tsx = true;
try {
  require.resolve('tsx/cjs');
} catch {
  tsx = false;
}
if (tsx) {
  require('tsx/cjs');
  require(join(__dirname, '..', 'cli', 'main.ts')).cli();
} else {
  require(join(__dirname, '..', 'dist', 'cli', 'main.js')).cli();
}

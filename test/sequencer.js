/**
 * The order jest starts the test files in: the longest first, so that no long file starts when the rest of the
 * run is nearly over and leaves one worker running it alone.
 *
 * Jest's own sequencer does this with the durations it cached from the last run, but a fresh clone (CI) has
 * none, and then it starts the largest files first: `faults-mixed.test.ts`, 40 lines and 86 s, started 540 s
 * into a 626 s run and finished 52 s after every other file. `test/durations.json` holds the seconds each file
 * took in a complete run; a file jest has timed itself uses jest's figure, a file in neither (a new one) counts
 * by its tier until a run has timed it. Failed files still go first, as with jest's sequencer.
 */
const Sequencer = require('@jest/test-sequencer').default;
const { relative } = require('node:path');
const durations = require('./durations.json');

/** Seconds assumed for a file no run has timed yet: a stack or a process costs seconds, the rest less. */
const UNTIMED = { e2e: 15, local: 10, infra: 5 };

class LongestFirst extends Sequencer {
  sort(tests) {
    const seconds = (test) => {
      const cached = this.time(test);
      if (cached != null) return cached / 1000;
      const name = relative(test.context.config.rootDir, test.path).split('\\').join('/');
      return durations[name] ?? UNTIMED[name.split('/')[1]] ?? 1;
    };
    const keyed = tests.map((test) => ({ test, failed: this.hasFailed(test), seconds: seconds(test) }));
    keyed.sort((a, b) => {
      if (a.failed !== b.failed) return a.failed ? -1 : 1;
      if (a.seconds !== b.seconds) return b.seconds - a.seconds;
      return a.test.path < b.test.path ? -1 : 1;
    });
    return keyed.map((k) => k.test);
  }
}

module.exports = LongestFirst;

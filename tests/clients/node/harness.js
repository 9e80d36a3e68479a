'use strict';
// Scenario runner shared by the Node.js client suites.
// Each scenario prints "passed: SUITE/NAME" or "failed: SUITE/NAME: CAUSE";
// every scenario asserts its results and gets a deadline.
const { inspect, isDeepStrictEqual } = require('node:util');

function show(v) {
  return inspect(v, { depth: 4, breakLength: Infinity, maxArrayLength: 12, maxStringLength: 80 });
}

function eq(got, want, what) {
  if (!isDeepStrictEqual(got, want)) {
    throw new Error(`${what}: got ${show(got)}, expected ${show(want)}`);
  }
}

function check(cond, what) {
  if (!cond) throw new Error(what);
}

async function rejects(promise, what) {
  try {
    await promise;
  } catch (e) {
    return e;
  }
  throw new Error(`${what}: no error`);
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// Poll until fn() is truthy (for subscriptions becoming visible server-side).
async function until(fn, what, ms = 5000) {
  const end = Date.now() + ms;
  for (;;) {
    if (await fn()) return;
    if (Date.now() > end) throw new Error(`${what}: not reached in ${ms} ms`);
    await sleep(20);
  }
}

function causeOf(e) {
  let msg = e && e.message ? e.message : String(e);
  if (e && e.previousErrors && e.previousErrors.length) {
    msg += ` (${e.previousErrors.map((x) => x.message).join('; ')})`;
  }
  // Where in the suite file it failed.
  const frame = ((e && e.stack) || '').split('\n').find((l) => /_test\.js:\d+/.test(l));
  const where = frame ? frame.replace(/.*\/([^/]+_test\.js:\d+).*/, '$1') : '';
  return (msg.replace(/\s+/g, ' ').trim() + (where ? ` (${where})` : ''));
}

class Runner {
  constructor(suite) {
    this.suite = suite;
    this.scenarios = [];
  }

  scenario(name, fn, timeoutMs = 20000) {
    this.scenarios.push({ name, fn, timeoutMs });
  }

  // cleanup(ctx) is called after each scenario to close what it opened.
  async run(makeCtx, cleanup) {
    let failed = 0;
    for (const s of this.scenarios) {
      const ctx = makeCtx();
      let timer;
      try {
        await Promise.race([
          s.fn(ctx),
          new Promise((_, reject) => {
            timer = setTimeout(() => reject(new Error(`timed out after ${s.timeoutMs / 1000} s`)), s.timeoutMs);
          }),
        ]);
        console.log(`passed: ${this.suite}/${s.name}`);
      } catch (e) {
        failed++;
        console.log(`failed: ${this.suite}/${s.name}: ${causeOf(e)}`);
      } finally {
        clearTimeout(timer);
        try {
          await cleanup(ctx);
        } catch (e) {
          // closing is best effort
        }
      }
    }
    return failed;
  }
}

module.exports = { Runner, eq, check, rejects, sleep, until, show };

// npm run test:faults [-- NAME …]
//
// Reliability under faults and load: each scenario starts a real stack
// (Temporal dev server, scratch PostgreSQL database, worker and API as child
// processes), injects one kind of fault and checks the database and the
// files afterwards. See docs/reliability.md. The last two lines are the load
// figures and `faults: N passed, M failed`; the exit code is 1 when any
// scenario failed.
import { activeCleanups, runScenario, type Scenario, type ScenarioOutcome } from './lib/scenario.ts';
import { apiFailover } from './scenarios/api-failover.ts';
import { apiKill } from './scenarios/api-kill.ts';
import { databaseCut } from './scenarios/database-cut.ts';
import { deploy } from './scenarios/deploy.ts';
import { exportWorkerKill } from './scenarios/export-worker-kill.ts';
import { load } from './scenarios/load.ts';
import { operatorTerminate } from './scenarios/operator-terminate.ts';
import { standbyKill } from './scenarios/standby-kill.ts';
import { temporalRestart } from './scenarios/temporal-restart.ts';
import { temporalStateLoss } from './scenarios/temporal-state-loss.ts';
import { workerKill } from './scenarios/worker-kill.ts';

const SCENARIOS: Scenario[] = [
  workerKill,
  deploy,
  apiKill,
  databaseCut,
  temporalRestart,
  temporalStateLoss,
  exportWorkerKill,
  operatorTerminate,
  apiFailover,
  standbyKill,
  load,
];

const wanted = process.argv.slice(2).filter((arg) => !arg.startsWith('-'));
const unknown = wanted.filter((name) => !SCENARIOS.some((scenario) => scenario.name === name));
if (unknown.length > 0) {
  process.stderr.write(`unknown scenario(s): ${unknown.join(', ')}; known: ${SCENARIOS.map((s) => s.name).join(', ')}\n`);
  process.exit(2);
}
const selected = wanted.length === 0 ? SCENARIOS : SCENARIOS.filter((scenario) => wanted.includes(scenario.name));

// Ctrl-C or a kill of the runner still stops every child and drops the scratch database.
let interrupted = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (interrupted) process.exit(130);
    interrupted = true;
    process.stdout.write(`\n${signal}: cleaning up…\n`);
    void Promise.allSettled([...activeCleanups].map((cleanup) => cleanup())).then(() => process.exit(130));
  });
}

const suiteStarted = performance.now();
const outcomes: ScenarioOutcome[] = [];

// A stray rejection would end the process without cleaning up: clean up, count it, and end with the summary line.
for (const event of ['unhandledRejection', 'uncaughtException'] as const) {
  process.on(event, (error: unknown) => {
    process.stdout.write(`${event}: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    void Promise.allSettled([...activeCleanups].map((cleanup) => cleanup())).then(() => {
      const passed = outcomes.filter((outcome) => outcome.passed).length;
      process.stdout.write(`load: not measured\nfaults: ${passed} passed, ${outcomes.length - passed + 1} failed\n`);
      process.exit(1);
    });
  });
}
for (const [index, scenario] of selected.entries()) {
  process.stdout.write(`▶ ${scenario.name}: ${scenario.title}\n`);
  const outcome = await runScenario(scenario, index);
  outcomes.push(outcome);
  const figures = Object.entries(outcome.figures)
    .filter(([key]) => key !== 'summary')
    .map(([key, value]) => `${key}: ${value}`)
    .join(', ');
  process.stdout.write(
    outcome.passed
      ? `✔ ${scenario.name} passed in ${outcome.seconds.toFixed(1)} s${figures ? ` (${figures})` : ''}\n`
      : `✘ ${scenario.name} FAILED in ${outcome.seconds.toFixed(1)} s: ${outcome.error}\n`,
  );
  if (interrupted) break;
}

const passed = outcomes.filter((outcome) => outcome.passed).length;
const failed = outcomes.length - passed;
process.stdout.write(`suite took ${((performance.now() - suiteStarted) / 1000).toFixed(0)} s\n`);
const loadFigures = outcomes.find((outcome) => outcome.name === 'load')?.figures.summary;
process.stdout.write(`load: ${loadFigures ?? 'not measured'}\n`);
process.stdout.write(`faults: ${passed} passed, ${failed} failed\n`);
process.exitCode = failed > 0 ? 1 : 0;

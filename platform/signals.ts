/**
 * Runs a long-lived task and asks it to stop on SIGINT/SIGTERM; resolves when
 * it has stopped. A second signal forces the exit for an operator who insists.
 */
export async function runUntilSignalled(run: () => Promise<void>, stop: () => void | Promise<void>): Promise<void> {
  let stopping = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) process.exit(signal === 'SIGINT' ? 130 : 143);
    stopping = true;
    void stop();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  try {
    await run();
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}

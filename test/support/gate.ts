// Holds a batch or export activity at its test seam (afterWriteStep,
// afterExportStep) until the test lets it go on.

/** A gate an activity waits at (inside its open transaction, or mid-file) until the test lets it go on. */
export class Gate {
  private readonly entries = new Map<string, { reach: () => void; reached: Promise<void>; release: () => void; released: Promise<void> }>();
  private readonly held = new Set<string>();
  private readonly seenExports = new Set<string>();
  private exportsToHold = 0;

  /** The next step of batch `id` waits. */
  hold(id: string): void {
    this.held.add(id);
  }

  /** The first step of the next export to arrive waits (its id is made when it starts). */
  holdNextExport(): void {
    this.exportsToHold += 1;
  }

  /** The test seam of the batch activity. */
  async pass(id: string): Promise<void> {
    if (!this.held.delete(id)) return;
    const entry = this.entry(id);
    entry.reach();
    await entry.released;
  }

  /** The test seam of the export activity. */
  async passExport(id: string): Promise<void> {
    if (!this.seenExports.has(id) && this.exportsToHold > 0) {
      this.exportsToHold -= 1;
      this.held.add(id);
    }
    this.seenExports.add(id);
    return this.pass(id);
  }

  /** Resolves once the activity waits at the gate of `id`; returns its release. */
  async reached(id: string): Promise<() => void> {
    const entry = this.entry(id);
    await entry.reached;
    return entry.release;
  }

  private entry(id: string) {
    let entry = this.entries.get(id);
    if (!entry) {
      let reach!: () => void;
      let release!: () => void;
      const reached = new Promise<void>((resolve) => (reach = resolve));
      const released = new Promise<void>((resolve) => (release = resolve));
      entry = { reach, reached, release, released };
      this.entries.set(id, entry);
    }
    return entry;
  }
}

import { readsDatabase } from '/work/main/bench/reads.ts';
const started = Date.now();
const db = await readsDatabase(Number(process.argv[2] ?? 1_000_000));
console.log(db.how, (Date.now() - started) / 1000, 's');
process.exit(0);

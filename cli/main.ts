#!/usr/bin/env node
// The `entity-records` command (package.json "bin"): `npx entity-records --help`.
import { runCli } from './program.ts';

process.exitCode = await runCli(process.argv);

#!/usr/bin/env node
// The `entity-records` command, run by bin/entity-records (package.json "bin") on the project's Node.
import { runCli } from './program.ts';

process.exitCode = await runCli(process.argv);

#!/usr/bin/env node
// `npm run bench:server` (root package.json): the benchmark is written in TypeScript
// under src/bench/ and compiled by `tsc -b`.
import '../dist/bench/server-bench.js';

#!/usr/bin/env node
// `npm run bench:scuba` (root package.json): the benchmark is written in TypeScript
// under src/bench/ and compiled by `tsc -b`.
import '../dist/bench/scuba-bench.js';

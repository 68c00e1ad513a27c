#!/usr/bin/env node
// `npm run bench:scale` (root package.json): the benchmark is written in TypeScript
// under src/bench/ and compiled by `tsc -b`.
import '../dist/bench/scale-bench.js';

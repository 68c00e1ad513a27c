#!/usr/bin/env node
// `npm run bench:scale` (root package.json): the benchmark is written in TypeScript
// under src/bench/ and compiled by tsconfig.bench.json into dist-bench/ (never into dist).
import '../dist-bench/bench/scale-bench.js';

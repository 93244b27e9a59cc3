#!/usr/bin/env node
// The admin CLI. Built by `npm install` (prepare runs tsc); see cli/main.ts.
import '../dist/cli/main.js';

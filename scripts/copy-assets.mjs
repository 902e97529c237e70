// Copies the files the compiled service reads at run time (the contact page's CSS, script and icon,
// the /docs page) from src/ to dist/, beside the modules that read them.
import { cpSync } from 'node:fs';

cpSync('src', 'dist', { recursive: true, filter: (source) => !source.endsWith('.ts') });

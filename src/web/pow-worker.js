// The contact page's proof-of-work solver, run as a module Web Worker that src/web/signals.js starts:
// ALTCHA's own worker loop and its WebCrypto PBKDF2, served beside this file (src/web/pow-assets.ts).
import { deriveKey } from './algorithms/web/pbkdf2.js';
import { handler } from './workers/shared.js';

handler({ deriveKey });

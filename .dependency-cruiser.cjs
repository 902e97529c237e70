// The module boundaries `npm test` checks (npm run depcheck). Docs: docs/architecture.md.
/** The domain: what the service does, apart from how it is reached (HTTP, MCP, CLI) or stored. */
const DOMAIN = '^src/(inquiries|inbox|auth|delivery|studio|validation|spam|personal-data)/|^src/errors\\.ts$';

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'An import cycle makes load order decide behaviour and ties modules that should stand apart.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'http-not-cli',
      comment: 'The HTTP door does not reach into the command-line tool.',
      severity: 'error',
      from: { path: '^src/http/' },
      to: { path: '^src/cli/' },
    },
    {
      name: 'mcp-not-http',
      comment: 'MCP and HTTP are two doors to the same services: the MCP server knows nothing of HTTP routes.',
      severity: 'error',
      from: { path: '^src/mcp/' },
      to: { path: '^src/http/' },
    },
    {
      name: 'routes-apart',
      comment: 'A route does not import another route: what two routes share lives in src/http or the domain.',
      severity: 'error',
      from: { path: '^src/http/routes/' },
      to: { path: '^src/http/routes/' },
    },
    {
      name: 'mcp-through-its-route',
      comment: 'Only the /mcp route opens the MCP door; other HTTP code does not import the MCP server.',
      severity: 'error',
      from: { path: '^src/http/', pathNot: '^src/http/routes/mcp\\.ts$' },
      to: { path: '^src/mcp/' },
    },
    {
      name: 'domain-without-frameworks',
      comment: 'Domain code sees neither the web framework nor the query builder and drivers.',
      severity: 'error',
      from: { path: DOMAIN },
      to: { path: 'node_modules/(fastify|@fastify|kysely|better-sqlite3|pg)/' },
    },
    {
      name: 'domain-uses-storage-ports',
      comment: 'Domain code takes storage types from the ports, never from the SQLite/PostgreSQL code.',
      severity: 'error',
      from: { path: `${DOMAIN}|^src/mcp/` },
      to: { path: '^src/storage/', pathNot: '^src/storage/(ports|ports-[a-z]+|personal-data-ports|group-commit)\\.ts$' },
    },
    {
      name: 'ports-stand-alone',
      comment: 'The storage ports import nothing of the implementations (nor anything else of the service): only one another.',
      severity: 'error',
      from: { path: '^src/storage/(ports|ports-[a-z]+|personal-data-ports)\\.ts$' },
      to: { path: '^src/', pathNot: '^src/storage/(ports|ports-[a-z]+)\\.ts$' },
    },
  ],
  options: {
    // TypeScript 7 has no JavaScript API for dependency-cruiser to parse with: swc parses instead.
    parser: 'swc',
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    doNotFollow: { path: 'node_modules' },
  },
};

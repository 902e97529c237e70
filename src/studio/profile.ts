// The studio's public profile: who receives the inquiries. A built-in example, replaceable by a JSON
// file named in STUDIO_PROFILE (validated at start-up like any other configuration).
import { readFileSync } from 'node:fs';
import { ajv } from '../validation/ajv.js';

export interface StudioService {
  readonly name: string;
  readonly description: string;
}

export interface StudioProfile {
  readonly name: string;
  readonly description: string;
  readonly location: string;
  readonly website: string;
  readonly email: string;
  readonly responseTime: string;
  readonly services: readonly StudioService[];
}

const text = { type: 'string', minLength: 1, maxLength: 500, pattern: '\\S' } as const;

export const studioProfileSchema = {
  $id: 'StudioProfile',
  type: 'object',
  additionalProperties: false,
  required: ['name', 'description', 'location', 'website', 'email', 'responseTime', 'services'],
  properties: {
    name: { ...text, maxLength: 100 },
    description: { ...text, maxLength: 1000 },
    location: text,
    website: { type: 'string', format: 'uri' },
    email: { type: 'string', format: 'email' },
    responseTime: { ...text, maxLength: 100 },
    services: {
      type: 'array',
      minItems: 1,
      maxItems: 20,
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['name', 'description'],
        properties: { name: { ...text, maxLength: 100 }, description: text },
      },
    },
  },
} as const;

export const exampleStudioProfile: StudioProfile = Object.freeze({
  name: 'Northlight Studio',
  description: 'An independent design and development studio building websites, products and brands that people enjoy using.',
  location: 'Lisbon, Portugal',
  website: 'https://northlight.example',
  email: 'hello@northlight.example',
  responseTime: '24 hours',
  services: [
    { name: 'Web design', description: 'Marketing sites and design systems, from first sketch to launch.' },
    { name: 'Web development', description: 'Fast, accessible websites and web applications in TypeScript.' },
    { name: 'Product design', description: 'Research, UX and UI for digital products.' },
    { name: 'Brand identity', description: 'Naming, logos and visual identities that hold together.' },
    { name: 'AI and agent integrations', description: 'MCP servers, agent-ready APIs and automation.' },
  ],
});

const validateProfile = ajv.compile<StudioProfile>(studioProfileSchema);

/** Reads and validates a profile file; throws an Error whose message names what is wrong. */
export function loadStudioProfile(path: string | null): StudioProfile {
  if (path === null) return exampleStudioProfile;
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8'));
  } catch {
    throw new Error(`cannot read "${path}" as JSON`);
  }
  if (!validateProfile(parsed)) {
    const first = validateProfile.errors?.[0];
    throw new Error(`"${path}" is not a studio profile: ${first?.instancePath || '/'} ${first?.message ?? ''}`.trim());
  }
  return Object.freeze(parsed);
}

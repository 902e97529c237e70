// The plain-text answer to an accepted inquiry (docs/api.md: 200 text/plain).
import type { StudioProfile } from '../studio/profile.js';

export function confirmationText(profile: StudioProfile, reference: string): string {
  return (
    `Thank you — ${profile.name} has received your inquiry. ` + `We reply within ${profile.responseTime}. Your reference is ${reference}.`
  );
}

// A person's data handed to them (GDPR art. 15; docs/operations.md, "Personal data"): everything
// held about one address, as one JSON-ready document.
import type { DataSubject, PersonalData, PersonalDataStore } from '../storage/personal-data-ports.js';

export interface PersonalDataExport extends PersonalData {
  /** The address asked about, lower-cased: every spelling of it in any case is included. */
  readonly email: string;
  readonly exportedAt: Date;
}

export async function exportPerson(store: PersonalDataStore, subject: DataSubject, now = new Date()): Promise<PersonalDataExport> {
  return { email: subject.email, exportedAt: now, ...(await store.find(subject)) };
}

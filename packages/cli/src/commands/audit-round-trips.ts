import { AskRoundTrips, readAuditRecords } from '@termgate/audit';

/** A first pass over the trail's files: which asks a later retry answered (see `AskRoundTrips`). */
export function askRoundTrips(files: readonly string[]): AskRoundTrips {
  const trips = new AskRoundTrips();
  for (const file of files) {
    for (const entry of readAuditRecords(file)) if ('record' in entry) trips.note(entry.record);
  }
  return trips;
}

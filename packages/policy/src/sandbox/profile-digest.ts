import { createHash } from 'node:crypto';
import type { SandboxProfile } from '@termgate/termhost';

/** Hex sha256 of the profile's JSON (keys in the profile's fixed order): what the audit trail names. */
export function sandboxProfileSha256(profile: SandboxProfile): string {
  return createHash('sha256').update(JSON.stringify(profile)).digest('hex');
}
